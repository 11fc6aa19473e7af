package user

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/schema/record"
)

// User goes on with a conversation after the model's final answer.
type User interface {
	// Next returns the user's message after the model's final answer to
	// user turn n (0 is the opening prompt). conv is the conversation as
	// the model saw it, ending with that answer. ok is false when the
	// user has nothing more to say (the script is over). An error is an
	// infrastructure failure, as a backend's.
	Next(ctx context.Context, n int, conv []backend.Message) (t Turn, ok bool, err error)
}

// Turn is one message of the user.
type Turn struct {
	Content string
	From    string // record.UserFromScript or record.UserFromSimulator
	Model   string // the simulator's model
	// Stop is set when the message carries the simulator's stop marker:
	// the conversation is over and the message is not sent.
	Stop      bool
	TokensIn  int
	TokensOut int
	Latency   time.Duration
	Host      string
	// DoneReason is the simulator's done reason (backend.Response).
	DoneReason string
}

// Script sends scripted replies in order.
type Script struct {
	Replies []string
}

// Next returns reply n, or ok false after the last.
func (s *Script) Next(ctx context.Context, n int, conv []backend.Message) (Turn, bool, error) {
	if n < 0 || n >= len(s.Replies) {
		return Turn{}, false, nil
	}
	return Turn{Content: s.Replies[n], From: record.UserFromScript}, true, nil
}

// Simulator asks a model to play the user of one run.
type Simulator struct {
	Backend     backend.Backend
	Model       string
	Temperature float64
	Seed        int // the run's seed
	// System is the simulator's system prompt, instructions and stop
	// marker already put in (see Prompt).
	System string
	Stop   string // the stop marker
	// Key names the run (case and cell) in the simulator's requests; its
	// Turn and Side are set by Next.
	Key backend.Key
}

// Prompt puts the case's instructions and the stop marker into the
// config's framing (simulator.system): {instructions} and {stop} are
// replaced.
func Prompt(framing, instructions, stop string) string {
	return strings.NewReplacer("{instructions}", strings.TrimSpace(instructions), "{stop}", stop).Replace(framing)
}

// Request is the chat request Next sends for user turn n, conv being
// the conversation as the model saw it: the simulator's system prompt,
// then conv flipped to the user's side. The context check measures the
// request for the opening alone (conv without the model's answer) with
// it, so what is measured is what the simulator is sent.
func (s *Simulator) Request(n int, conv []backend.Message) *backend.Request {
	key := s.Key
	key.Turn, key.Side = n, backend.SideUser
	return &backend.Request{
		Model: s.Model, Messages: Flip(s.System, conv), Seed: s.Seed, Temperature: s.Temperature, Key: key,
	}
}

// ErrSilent is the cause of the error for a simulator reply with no text.
var ErrSilent = errors.New("the simulated user wrote nothing")

// ErrCut is the cause of the error for a simulator reply cut before its
// end: at its server's token limit (done reason length) or at toolward's
// reply limit (reply_limit). Its stop marker may be what was cut off, so
// the conversation cannot go on as if the reply were whole.
var ErrCut = errors.New("the simulated user's reply was cut before its end")

// Next asks the simulator for its reply to the model's last answer. A
// reply that is empty, or only space, or cut before its end
// (backend.Cut) without the whole stop marker is an infrastructure error
// (the simulator failed, not the model under test) that a retry cannot
// fix; a cut reply comes back with the error, to be recorded as unsent.
func (s *Simulator) Next(ctx context.Context, n int, conv []backend.Message) (Turn, bool, error) {
	req := s.Request(n, conv)
	start := time.Now()
	resp, err := s.Backend.Chat(ctx, req)
	if err != nil {
		return Turn{}, false, simError(err)
	}
	lat := resp.Latency
	if lat == 0 {
		lat = time.Since(start)
	}
	content := resp.Message.Content
	if strings.TrimSpace(content) == "" {
		return Turn{}, false, &backend.Error{Kind: KindSimulator, Msg: fmt.Sprintf("simulated user (%s), turn %d", s.Model, n), Err: ErrSilent}
	}
	t := Turn{
		Content: content, From: record.UserFromSimulator, Model: s.Model,
		Stop:     s.Stop != "" && strings.Contains(content, s.Stop),
		TokensIn: resp.TokensIn, TokensOut: resp.TokensOut, Latency: lat, Host: resp.Host,
		DoneReason: resp.DoneReason,
	}
	if backend.Cut(resp.DoneReason) && !t.Stop { // a whole stop marker ends it: what was cut is never sent
		return t, false, &backend.Error{Kind: KindSimulator, Msg: fmt.Sprintf("simulated user (%s), turn %d: done reason %s, after %d bytes and %d tokens (raise the simulator's token limit, or ask it for shorter replies)",
			s.Model, n, resp.DoneReason, len(content), resp.TokensOut), Err: ErrCut}
	}
	return t, true, nil
}

// KindSimulator is the backend.Error kind of a simulator that answered
// with nothing usable: nothing, or a reply cut before its end.
const KindSimulator = "simulator"

// simError marks a backend error as the simulated user's, keeping its
// kind and whether a retry may help.
func simError(err error) error {
	var be *backend.Error
	if errors.As(err, &be) {
		out := *be
		out.Msg = "simulated user: " + be.Msg
		return &out
	}
	return fmt.Errorf("simulated user: %w", err)
}

// Flip returns the conversation conv (as the model under test saw it) as
// the simulated user sees it: system first, then the user's messages as
// assistant turns and the model's final answers as user turns. The
// model's system prompt, its turns with tool calls and the tool results
// are left out: the user sees only what the assistant answered.
func Flip(system string, conv []backend.Message) []backend.Message {
	out := make([]backend.Message, 0, len(conv)+1)
	if system != "" {
		out = append(out, backend.Message{Role: "system", Content: system})
	}
	for _, m := range conv {
		switch {
		case m.Role == "user":
			out = append(out, backend.Message{Role: "assistant", Content: m.Content})
		case m.Role == "assistant" && len(m.ToolCalls) == 0:
			out = append(out, backend.Message{Role: "user", Content: m.Content})
		}
	}
	return out
}
