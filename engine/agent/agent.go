package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/engine/user"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

// Caller carries out tool calls; *session.Session implements it.
type Caller interface {
	Call(ctx context.Context, name string, args map[string]any, timeout time.Duration) (*session.Result, error)
}

// DefaultMaxCallsPerTurn is how many tool calls of one model turn the
// loop executes when Input.MaxCallsPerTurn is 0. Further calls of the turn
// are recorded, not executed (record.NotExecutedTurnLimit), and answered
// with an error result; they count as the model's calls for scoring
// (max_calls, forbid).
const DefaultMaxCallsPerTurn = 64

// Input is one run's conversation setup.
type Input struct {
	Case  *schema.Case
	Cell  record.Cell
	Tools []backend.Tool // offered, in the order offered
	// MaxIterations bounds the model turns spent on one user message
	// (the whole run, without User); 0 means 8.
	MaxIterations int
	// CallTimeout bounds each tool call; 0 means none.
	CallTimeout time.Duration
	// MaxCallsPerTurn bounds the calls of one turn sent to the server;
	// 0 means DefaultMaxCallsPerTurn.
	MaxCallsPerTurn int
	// User goes on after each final answer (the case's user block); nil
	// ends the run at the first final answer.
	User user.User
	// MaxUserTurns bounds the user messages the model receives, the
	// opening included, when User is set; 0 means no bound beyond the
	// User's own end (a script's last reply).
	MaxUserTurns int
	// Options are the backend options of the cell's options set; nil
	// for "default".
	Options *schema.OptionsSet
	// MaxConversationBytes bounds the conversation sent to the model (its
	// messages' text, tool calls and results); 0 means
	// DefaultMaxConversationBytes.
	MaxConversationBytes int
	// Added are tools first offered with a later user message, by the
	// index of that user turn (user.add_tools): appended to the offered
	// tools when the message is.
	Added map[int][]backend.Tool
	// Unoffered, when set, names the tools a call may reach though they
	// were not offered (the case's execute_unoffered): such a call is
	// executed and recorded with Unoffered set, instead of refused.
	Unoffered map[string]bool
	// AfterAnswer, when set, is called after the final answer to each
	// user turn (0 is the opening), before the next user message: the
	// engine takes that turn's state probes there. An error stops the
	// run as an infrastructure failure.
	AfterAnswer func(ctx context.Context, userTurn int) error
}

// DefaultMaxConversationBytes bounds the text of one conversation as
// the model is sent it, every message, call and result counted: 16 MiB,
// some four million tokens, more than any model's context holds. A
// conversation past it ends the run as an infrastructure error naming
// the limit (the simulated user's, kind simulator, when its message put
// it over; else context_overflow) instead of sending the whole history
// again at every turn.
const DefaultMaxConversationBytes = 16 << 20

// Output is what the loop did.
type Output struct {
	Trace  record.Trace
	Tokens record.Tokens
	// OutOfTurns is set when MaxIterations turns passed without a reply
	// free of tool calls.
	OutOfTurns bool
	// OutOfUserTurns is set when the User still had a message after the
	// answer to the MaxUserTurns-th user message.
	OutOfUserTurns bool
}

// Opening is the user message a conversation starts from
// (schema.Case.Opening).
func Opening(c *schema.Case) string { return c.Opening() }

// Messages builds the conversation's opening messages from a case.
func Messages(c *schema.Case) []backend.Message {
	msgs := make([]backend.Message, 0, 2+len(c.Messages))
	if c.System != "" {
		msgs = append(msgs, backend.Message{Role: "system", Content: c.System})
	}
	if len(c.Messages) > 0 {
		for _, m := range c.Messages {
			msgs = append(msgs, backend.Message{Role: m.Role, Content: m.Content})
		}
	} else {
		msgs = append(msgs, backend.Message{Role: "user", Content: c.Prompt})
	}
	return msgs
}

// Run runs the loop. On an infrastructure error it returns the output so
// far and the error (a *backend.Error, a *session.Error or a context
// error).
func Run(ctx context.Context, b backend.Backend, tools Caller, in Input) (*Output, error) {
	maxIter := in.MaxIterations
	if maxIter <= 0 {
		maxIter = 8
	}
	out := &Output{}
	offered := make(map[string]bool, len(in.Tools))
	out.Trace.Offered = make([]string, len(in.Tools))
	for i, t := range in.Tools {
		offered[t.Name] = true
		out.Trace.Offered[i] = t.Name
	}
	req := &backend.Request{
		Model:       in.Cell.Model,
		Messages:    Messages(in.Case),
		Tools:       in.Tools,
		Seed:        in.Cell.Seed,
		Temperature: in.Cell.Temperature,
		Options:     in.Options,
		OptionsName: in.Cell.Options,
		Key:         backend.Key{Case: in.Case.ID, Cell: in.Cell.Values()},
	}
	if in.User != nil {
		out.Trace.Users = []record.UserTurn{{Content: Opening(in.Case), From: record.UserFromCase}}
	}
	conv := sizer{max: in.MaxConversationBytes}
	conv.add(req.Messages...)
	userTurn, inTurn := 0, 0 // the user turn being answered; model turns spent on it
	for turn := 0; inTurn < maxIter; turn, inTurn = turn+1, inTurn+1 {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if err := conv.check(userTurn); err != nil {
			return out, err
		}
		req.Key.Turn = turn
		start := time.Now()
		resp, err := b.Chat(ctx, req)
		if err != nil {
			return out, err
		}
		lat := resp.Latency
		if lat == 0 {
			lat = time.Since(start)
		}
		msg := resp.Message
		out.Trace.Turns = append(out.Trace.Turns, record.Turn{
			Content:    msg.Content,
			Thinking:   msg.Thinking,
			ToolCalls:  len(msg.ToolCalls),
			Tokens:     record.Tokens{In: resp.TokensIn, Out: resp.TokensOut, Cached: resp.TokensCached},
			Latency:    record.FromDuration(lat),
			DoneReason: resp.DoneReason,
			Host:       resp.Host,
		})
		out.Tokens.In += resp.TokensIn
		out.Tokens.Out += resp.TokensOut
		out.Tokens.Cached += resp.TokensCached
		msg.Role = "assistant"
		if len(msg.ToolCalls) == 0 {
			out.Trace.Answer = msg.Content
			if in.AfterAnswer != nil {
				if err := in.AfterAnswer(ctx, userTurn); err != nil {
					return out, err
				}
			}
			if in.User == nil {
				return out, nil
			}
			req.Messages = append(req.Messages, msg)
			conv.add(msg)
			more, err := nextUser(ctx, in, out, userTurn, req.Messages)
			if err != nil || !more {
				return out, err
			}
			req.Messages = append(req.Messages, backend.Message{Role: "user", Content: out.Trace.Users[len(out.Trace.Users)-1].Content})
			conv.add(req.Messages[len(req.Messages)-1])
			conv.byUser = out.Trace.Users[len(out.Trace.Users)-1].From == record.UserFromSimulator
			userTurn, inTurn = userTurn+1, -1
			if add := in.Added[userTurn]; len(add) > 0 {
				req.Tools = append(slices.Clip(req.Tools), add...)
				u := &out.Trace.Users[len(out.Trace.Users)-1]
				for _, t := range add {
					offered[t.Name] = true
					u.Added = append(u.Added, t.Name)
				}
			}
			continue
		}
		req.Messages = append(req.Messages, msg)
		conv.add(msg)
		conv.byUser = false
		lim := turnLimit{max: maxCalls(in), asked: len(msg.ToolCalls)}
		for _, tc := range msg.ToolCalls {
			call, err := doCall(ctx, tools, in, offered, turn, tc, &lim)
			if err != nil {
				return out, err
			}
			out.Trace.Calls = append(out.Trace.Calls, call)
			req.Messages = append(req.Messages, backend.Message{Role: "tool", Content: call.Result, ToolName: tc.Name, ToolCallID: tc.ID, IsError: call.IsError})
			conv.add(req.Messages[len(req.Messages)-1])
		}
	}
	out.OutOfTurns = true
	return out, nil
}

// sizer counts the bytes of a conversation against its bound.
type sizer struct {
	max, bytes int
	// byUser is set when the last message added was a simulated user's
	// (its reply put the conversation over).
	byUser bool
}

func (z *sizer) add(msgs ...backend.Message) {
	for _, m := range msgs {
		z.bytes += len(m.Content) + len(m.Thinking) + len(m.Blocks) + len(m.ToolName)
		for _, tc := range m.ToolCalls {
			z.bytes += len(tc.Name) + len(tc.Arguments)
		}
	}
}

// check returns the error of a conversation past its bound, before the
// model is sent it; userTurn is the user message being answered.
func (z *sizer) check(userTurn int) error {
	limit := z.max
	if limit <= 0 {
		limit = DefaultMaxConversationBytes
	}
	if z.bytes <= limit {
		return nil
	}
	msg := fmt.Sprintf("the conversation holds %s bytes, over toolward's limit of %s bytes for one conversation (agent.DefaultMaxConversationBytes; see docs/limits.md)",
		backend.Thousands(z.bytes), backend.Thousands(limit))
	if z.byUser {
		return &backend.Error{Kind: user.KindSimulator, Msg: fmt.Sprintf("simulated user, turn %d: its reply put %s", userTurn-1, msg)}
	}
	return &backend.Error{Kind: backend.KindContextOverflow, Msg: msg}
}

// nextUser asks the user for the message after the final answer to user
// turn n and records it. It reports whether the conversation goes on:
// not when the user has nothing more (a script's end), wrote the stop
// marker, or would go past MaxUserTurns (OutOfUserTurns; the message is
// recorded as unsent).
func nextUser(ctx context.Context, in Input, out *Output, n int, conv []backend.Message) (bool, error) {
	t, ok, err := in.User.Next(ctx, n, conv)
	if err != nil && t.Content != "" { // a reply cut before its end: kept, never sent
		out.Trace.Users = append(out.Trace.Users, userTurn(t, len(out.Trace.Turns), true))
	}
	if err != nil || !ok {
		return false, err
	}
	over := in.MaxUserTurns > 0 && n+1 >= in.MaxUserTurns
	out.Trace.Users = append(out.Trace.Users, userTurn(t, len(out.Trace.Turns), t.Stop || over))
	if t.Stop {
		return false, nil
	}
	if over {
		out.OutOfUserTurns = true
		return false, nil
	}
	return true, nil
}

// userTurn is the record of the user's message t, written before model
// turn before.
func userTurn(t user.Turn, before int, unsent bool) record.UserTurn {
	ut := record.UserTurn{
		Before: before, Content: t.Content, From: t.From, Model: t.Model, Stop: t.Stop, Unsent: unsent,
		Latency: record.FromDuration(t.Latency), Host: t.Host,
	}
	if t.TokensIn != 0 || t.TokensOut != 0 { // the simulator's: not the run's Tokens, which are the model's
		ut.Tokens = &record.Tokens{In: t.TokensIn, Out: t.TokensOut}
	}
	return ut
}

func maxCalls(in Input) int {
	if in.MaxCallsPerTurn > 0 {
		return in.MaxCallsPerTurn
	}
	return DefaultMaxCallsPerTurn
}

// turnLimit counts the calls of one turn sent to the server against the
// most one turn may send.
type turnLimit struct {
	max, asked, sent int
}

// take reports whether one more call of the turn may be sent, counting it.
func (l *turnLimit) take() bool {
	if l.sent >= l.max {
		return false
	}
	l.sent++
	return true
}

func doCall(ctx context.Context, tools Caller, in Input, offered map[string]bool, turn int, tc backend.ToolCall, lim *turnLimit) (record.Call, error) {
	call := record.Call{Turn: turn, Tool: tc.Name}
	args, err := decodeArgs(tc.Arguments)
	if err != nil {
		call.Malformed = true
		call.RawArgs = string(tc.Arguments)
		call.IsError = true
		call.Result = fmt.Sprintf("Error: the arguments for %s %v, got: %s", tc.Name, err, truncate(call.RawArgs, 200))
		return call, nil
	}
	call.Args = args
	if !offered[tc.Name] && !in.Unoffered[tc.Name] {
		call.NotOffered = true
		call.IsError = true
		names := make([]string, 0, len(offered))
		for _, t := range in.Tools {
			names = append(names, t.Name)
		}
		for _, n := range slices.Sorted(maps.Keys(in.Added)) {
			for _, t := range in.Added[n] {
				if offered[t.Name] {
					names = append(names, t.Name)
				}
			}
		}
		call.Result = fmt.Sprintf("Error: there is no tool named %q. Available tools: %s.", tc.Name, strings.Join(names, ", "))
		return call, nil
	}
	call.Unoffered = !offered[tc.Name]
	if !lim.take() {
		call.NotExecuted = record.NotExecutedTurnLimit
		call.IsError = true
		call.Result = fmt.Sprintf("Error: not executed: this turn asked for %d tool calls, and at most %d calls of one turn are executed. Ask for fewer calls at a time.", lim.asked, lim.max)
		return call, nil
	}
	res, err := tools.Call(ctx, tc.Name, args, in.CallTimeout)
	if err != nil {
		return call, err
	}
	call.Confirm = res.Confirm
	call.Elicitations = res.Elicitations
	call.Result = res.Text
	call.Structured = res.Structured
	call.IsError = res.IsError
	call.Latency = record.FromDuration(res.Latency)
	return call, nil
}

// errNotObject is decodeArgs' complaint about arguments that are not one
// JSON object.
var errNotObject = errors.New("must be a JSON object")

// decodeArgs decodes a JSON object; empty or null arguments are {}.
// Numbers are kept as json.Number, the text the model wrote, so that a
// scorer can tell 10.0 from 10 and a record keeps what was sent; a number
// too large for a float64 (1e400) makes the arguments malformed, as no
// tool could read it.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return map[string]any{}, nil
	}
	if t[0] != '{' {
		return nil, errNotObject
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, errNotObject
	}
	if _, err := dec.Token(); err != io.EOF { // anything after the object
		return nil, errNotObject
	}
	if n, ok := outOfRange(m); ok {
		return nil, fmt.Errorf("hold a number out of range (%s)", truncate(string(n), 40))
	}
	return m, nil
}

// outOfRange returns the first number inside v that a float64 cannot
// hold.
func outOfRange(v any) (json.Number, bool) {
	switch x := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(string(x), 64); err != nil {
			return x, true
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) { // the same number every time
			if n, ok := outOfRange(x[k]); ok {
				return n, true
			}
		}
	case []any:
		for _, e := range x {
			if n, ok := outOfRange(e); ok {
				return n, true
			}
		}
	}
	return "", false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
