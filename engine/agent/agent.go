package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/plan"
	"github.com/toolward/toolward/engine/record"
	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/schema"
)

// Caller carries out tool calls; *session.Session implements it.
type Caller interface {
	Call(ctx context.Context, name string, args map[string]any, timeout time.Duration) (*session.Result, error)
}

// Input is one run's conversation setup.
type Input struct {
	Case  *schema.Case
	Cell  record.Cell
	Tools []backend.Tool // offered, in the order offered
	// MaxIterations bounds model turns; 0 means 8.
	MaxIterations int
	// CallTimeout bounds each tool call; 0 means none.
	CallTimeout time.Duration
}

// Output is what the loop did.
type Output struct {
	Trace  record.Trace
	Tokens record.Tokens
	// OutOfTurns is set when MaxIterations turns passed without a reply
	// free of tool calls.
	OutOfTurns bool
}

// cellKey is the cell as the backend's replay key spells it.
func cellKey(c record.Cell) map[string]string {
	return map[string]string{
		"model":        c.Model,
		"seed":         strconv.Itoa(c.Seed),
		"temperature":  plan.FormatFloat(c.Temperature),
		"tools":        c.Tools,
		"confirm":      c.Confirm,
		"descriptions": c.Descriptions,
	}
}

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
		Key:         backend.Key{Case: in.Case.ID, Cell: cellKey(in.Cell)},
	}
	for turn := 0; turn < maxIter; turn++ {
		if err := ctx.Err(); err != nil {
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
			Tokens:     record.Tokens{In: resp.TokensIn, Out: resp.TokensOut},
			Latency:    record.FromDuration(lat),
			DoneReason: resp.DoneReason,
			Host:       resp.Host,
		})
		out.Tokens.In += resp.TokensIn
		out.Tokens.Out += resp.TokensOut
		if len(msg.ToolCalls) == 0 {
			out.Trace.Answer = msg.Content
			return out, nil
		}
		msg.Role = "assistant"
		req.Messages = append(req.Messages, msg)
		for _, tc := range msg.ToolCalls {
			call, err := doCall(ctx, tools, in, offered, turn, tc)
			if err != nil {
				return out, err
			}
			out.Trace.Calls = append(out.Trace.Calls, call)
			req.Messages = append(req.Messages, backend.Message{Role: "tool", Content: call.Result, ToolName: tc.Name, ToolCallID: tc.ID})
		}
	}
	out.OutOfTurns = true
	return out, nil
}

func doCall(ctx context.Context, tools Caller, in Input, offered map[string]bool, turn int, tc backend.ToolCall) (record.Call, error) {
	call := record.Call{Turn: turn, Tool: tc.Name}
	args, ok := decodeArgs(tc.Arguments)
	if !ok {
		call.Malformed = true
		call.RawArgs = string(tc.Arguments)
		call.IsError = true
		call.Result = fmt.Sprintf("Error: the arguments for %s must be a JSON object, got: %s", tc.Name, truncate(call.RawArgs, 200))
		return call, nil
	}
	call.Args = args
	if !offered[tc.Name] {
		call.NotOffered = true
		call.IsError = true
		names := make([]string, len(in.Tools))
		for i, t := range in.Tools {
			names[i] = t.Name
		}
		call.Result = fmt.Sprintf("Error: there is no tool named %q. Available tools: %s.", tc.Name, strings.Join(names, ", "))
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

// decodeArgs decodes a JSON object; empty or null arguments are {}.
func decodeArgs(raw json.RawMessage) (map[string]any, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return map[string]any{}, true
	}
	if t[0] != '{' {
		return nil, false
	}
	var m map[string]any
	if err := json.Unmarshal(t, &m); err != nil {
		return nil, false
	}
	return m, true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
