package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

// script replies with its messages in turn and keeps the requests it saw.
type script struct {
	replies []backend.Message
	err     error
	seen    []backend.Request
}

func (s *script) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	cp := *req
	cp.Messages = append([]backend.Message(nil), req.Messages...)
	s.seen = append(s.seen, cp)
	if s.err != nil && len(s.seen) > len(s.replies) {
		return nil, s.err
	}
	m := s.replies[min(len(s.seen)-1, len(s.replies)-1)]
	return &backend.Response{Message: m, TokensIn: 10, TokensOut: 2}, nil
}

type tools struct{ calls []string }

func (t *tools) Call(ctx context.Context, name string, args map[string]any, timeout time.Duration) (*session.Result, error) {
	t.calls = append(t.calls, name)
	if name == "broken" {
		return nil, &session.Error{Kind: "mcp", Msg: "server crashed"}
	}
	return &session.Result{Text: "result of " + name, Confirm: "approved"}, nil
}

func call(name, args string) backend.ToolCall {
	return backend.ToolCall{Name: name, Arguments: json.RawMessage(args)}
}

var offered = []backend.Tool{{Name: "add"}, {Name: "broken"}}

func input() Input {
	return Input{
		Case:  &schema.Case{ID: "c1", System: "be brief", Prompt: "add 2 and 3"},
		Cell:  record.Cell{Model: "m", Seed: 3, Temperature: 0.5, Tools: "needed", Confirm: "approve", Descriptions: "default"},
		Tools: offered, MaxIterations: 4,
	}
}

func TestLoop(t *testing.T) {
	b := &script{replies: []backend.Message{
		{Content: "thinking aloud", ToolCalls: []backend.ToolCall{
			call("add", `{"a": 2, "b": 3}`), call("nope", `{}`), call("add", `"a=2"`), call("add", ``),
		}},
		{Content: "The sum is 5."},
	}}
	tl := &tools{}
	out, err := Run(context.Background(), b, tl, input())
	if err != nil {
		t.Fatal(err)
	}
	if out.Trace.Answer != "The sum is 5." || out.OutOfTurns || len(out.Trace.Turns) != 2 {
		t.Fatalf("out = %+v", out)
	}
	if out.Tokens != (record.Tokens{In: 20, Out: 4}) {
		t.Errorf("tokens = %+v", out.Tokens)
	}
	cs := out.Trace.Calls
	if len(cs) != 4 || len(tl.calls) != 2 {
		t.Fatalf("calls = %+v, server saw %v", cs, tl.calls)
	}
	if cs[0].Args["a"] != json.Number("2") || cs[0].Confirm != "approved" || cs[0].Result != "result of add" {
		t.Errorf("call 0 = %+v", cs[0])
	}
	if !cs[1].NotOffered || !cs[1].IsError || cs[1].Result == "" {
		t.Errorf("call 1 = %+v", cs[1])
	}
	if !cs[2].Malformed || cs[2].RawArgs != `"a=2"` || cs[2].Args != nil {
		t.Errorf("call 2 = %+v", cs[2])
	}
	if cs[3].Malformed || cs[3].Args == nil {
		t.Errorf("call 3 (empty args) = %+v", cs[3])
	}
	// The second request carries the assistant turn and four tool results.
	second := b.seen[1]
	if len(second.Messages) != 2+1+4 || second.Messages[0].Role != "system" || second.Messages[1].Content != "add 2 and 3" {
		t.Fatalf("second request messages = %+v", second.Messages)
	}
	if m := second.Messages[3]; m.Role != "tool" || m.ToolName != "add" || m.Content != "result of add" {
		t.Errorf("tool message = %+v", m)
	}
	if second.Key.Turn != 1 || second.Key.Case != "c1" || second.Key.Cell["seed"] != "3" || second.Key.Cell["temperature"] != "0.5" {
		t.Errorf("key = %+v", second.Key)
	}
	if second.Seed != 3 || second.Temperature != 0.5 || second.Model != "m" || len(second.Tools) != 2 {
		t.Errorf("request = %+v", second)
	}
	sc := out.Trace.Scored()
	if len(sc.Calls) != 4 || !sc.Calls[2].Malformed || !sc.Calls[1].NotOffered {
		t.Errorf("scored = %+v", sc)
	}
}

func TestMaxIterations(t *testing.T) {
	b := &script{replies: []backend.Message{{ToolCalls: []backend.ToolCall{call("add", `{}`)}}}}
	out, err := Run(context.Background(), b, &tools{}, input())
	if err != nil {
		t.Fatal(err)
	}
	if !out.OutOfTurns || len(out.Trace.Turns) != 4 || len(out.Trace.Calls) != 4 || out.Trace.Answer != "" {
		t.Fatalf("out = %+v", out)
	}
}

func TestInfraErrors(t *testing.T) {
	be := &backend.Error{Kind: backend.KindUnavailable, Msg: "down", Retryable: true}
	b := &script{replies: []backend.Message{{ToolCalls: []backend.ToolCall{call("add", `{}`)}}}, err: be}
	out, err := Run(context.Background(), b, &tools{}, input())
	if !errors.Is(err, be) || len(out.Trace.Turns) != 1 {
		t.Fatalf("backend error: %v, %+v", err, out)
	}
	b = &script{replies: []backend.Message{{ToolCalls: []backend.ToolCall{call("broken", `{}`)}}}}
	_, err = Run(context.Background(), b, &tools{}, input())
	var se *session.Error
	if !errors.As(err, &se) {
		t.Fatalf("mcp error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, b, &tools{}, input()); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestScriptedMessages(t *testing.T) {
	c := &schema.Case{ID: "x", Messages: []schema.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}, {Role: "user", Content: "add"}}}
	ms := Messages(c)
	if len(ms) != 3 || ms[2].Content != "add" || ms[1].Role != "assistant" {
		t.Fatalf("messages = %+v", ms)
	}
}

// TestCallsPerTurnBounded: a turn asking for 10,000 calls executes
// DefaultMaxCallsPerTurn of them; the rest are recorded as not executed,
// answered with an error, and still count as the model's calls, so a
// case with max_calls fails with too_many_calls and a forbidden tool past
// the limit is still caught. Malformed and not-offered calls, which are
// never sent, do not use up the limit.
func TestCallsPerTurnBounded(t *testing.T) {
	const n = 10000
	many := []backend.ToolCall{call("add", "[1]"), call("nope", "{}")}
	for range n - 3 {
		many = append(many, call("add", `{"a":1}`))
	}
	many = append(many, call("broken", "{}")) // forbidden, past the limit: never executed
	b := &script{replies: []backend.Message{{ToolCalls: many}, {Content: "done"}}}
	tl := &tools{}
	out, err := Run(context.Background(), b, tl, input())
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.calls) != DefaultMaxCallsPerTurn {
		t.Errorf("%d calls executed, want %d", len(tl.calls), DefaultMaxCallsPerTurn)
	}
	if len(out.Trace.Calls) != n || out.Trace.Answer != "done" {
		t.Fatalf("%d calls recorded, answer %q", len(out.Trace.Calls), out.Trace.Answer)
	}
	notExec := 0
	for _, c := range out.Trace.Calls {
		if c.NotExecuted != "" {
			notExec++
			if c.NotExecuted != record.NotExecutedTurnLimit || !c.IsError || !strings.Contains(c.Result, "not executed") {
				t.Fatalf("call not executed: %+v", c)
			}
		}
	}
	if want := n - 2 - DefaultMaxCallsPerTurn; notExec != want {
		t.Errorf("%d calls not executed, want %d", notExec, want)
	}
	if got := len(b.seen[1].Messages) - len(b.seen[0].Messages); got != n+1 {
		t.Errorf("the next turn got %d new messages, want the turn and a result per call (%d)", got, n+1)
	}

	exp, err := matchers.CompileExpect(map[string]any{"max_calls": 6, "forbid": []any{"broken"}, "calls": []any{map[string]any{"tool": "add"}}})
	if err != nil {
		t.Fatal(err)
	}
	v := exp.Score(out.Trace.Scored(), input().Cell)
	codes := map[string]bool{}
	for _, r := range v.Reasons {
		codes[r.Code] = true
	}
	if v.Pass || !codes[matchers.ReasonTooManyCalls] || !codes[matchers.ReasonForbiddenCall] {
		t.Errorf("verdict %+v, want a fail with too_many_calls and forbidden_call", v.Reasons)
	}
	line, err := record.Marshal(&record.Record{Trace: out.Trace})
	if err != nil || len(line) > record.MaxRecordBytes {
		t.Errorf("record of the run: %d bytes, %v", len(line), err)
	}
}

// TestCallsPerTurnLimitIsPerTurn: the limit counts each turn afresh.
func TestCallsPerTurnLimitIsPerTurn(t *testing.T) {
	three := []backend.ToolCall{call("add", "{}"), call("add", "{}"), call("add", "{}")}
	b := &script{replies: []backend.Message{{ToolCalls: three}, {ToolCalls: three}, {Content: "done"}}}
	tl := &tools{}
	in := input()
	in.MaxCallsPerTurn = 2
	out, err := Run(context.Background(), b, tl, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.calls) != 4 || out.Trace.Calls[2].NotExecuted == "" || out.Trace.Calls[5].NotExecuted == "" || out.Trace.Calls[3].NotExecuted != "" {
		t.Errorf("executed %d; trace %+v", len(tl.calls), out.Trace.Calls)
	}
}
