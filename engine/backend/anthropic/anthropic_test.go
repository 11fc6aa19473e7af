package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/fixtures/fakes/fakeanthropic"
	"github.com/toolward/toolward/schema"
)

var calc = backend.Tool{Name: "calculate", Description: "Evaluates arithmetic.", InputSchema: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`)}

func newBackend(t *testing.T, cfg Config) *Backend {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func chat(t *testing.T, b *Backend, msgs ...backend.Message) *backend.Response {
	t.Helper()
	resp, err := b.Chat(context.Background(), &backend.Request{Model: fakeanthropic.DefaultModel, Messages: msgs, Tools: []backend.Tool{calc}, Temperature: 0.5, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestRequestShape: system at the top level, text as messages, calls as
// tool_use blocks, the results of one turn in one user message as
// tool_result blocks (is_error for an error), tools as {name,
// description, input_schema}, temperature and tool_choice, and no seed
// (the fake refuses fields the API does not know).
func TestRequestShape(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.Start(t, fakeanthropic.Options{Script: fakeanthropic.Queue(fakeanthropic.Reply{Content: "done"})})
	b := newBackend(t, Config{BaseURL: fake.URL, ToolChoice: "any", DisableParallelToolUse: true, MaxTokens: 512})
	chat(t, b,
		backend.Message{Role: "system", Content: "Be brief."},
		backend.Message{Role: "user", Content: "What are 2 + 3 and 1 / 0?"},
		backend.Message{Role: "assistant", Content: "Computing.", ToolCalls: []backend.ToolCall{
			{ID: "toolu_a", Name: "calculate", Arguments: json.RawMessage(`{"expression": "2 + 3"}`)},
			{Name: "calculate", Arguments: json.RawMessage(`"1 / 0"`)},
		}},
		backend.Message{Role: "tool", Content: "5", ToolCallID: "toolu_a"},
		backend.Message{Role: "tool", Content: "Error: division by zero", IsError: true},
	)
	raw := fake.RawRequests()
	if len(raw) != 1 {
		t.Fatalf("%d requests", len(raw))
	}
	want := `{"model":"claude-sonnet-4-6","max_tokens":512,"system":"Be brief.","messages":[` +
		`{"role":"user","content":"What are 2 + 3 and 1 / 0?"},` +
		`{"role":"assistant","content":[{"type":"text","text":"Computing."},{"type":"tool_use","id":"toolu_a","name":"calculate","input":{"expression":"2 + 3"}},{"type":"tool_use","id":"toolu_2_1","name":"calculate","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"5"},{"type":"tool_result","tool_use_id":"toolu_2_1","content":"Error: division by zero","is_error":true}]}],` +
		`"tools":[{"name":"calculate","description":"Evaluates arithmetic.","input_schema":{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}}],` +
		`"tool_choice":{"type":"any","disable_parallel_tool_use":true},"temperature":0.5,"stream":true}`
	if string(raw[0]) != want {
		t.Errorf("request\n got %s\nwant %s", raw[0], want)
	}
}

// TestStream: text and input_json_delta fragments joined per block index
// with pings between, usage from message_start and message_delta (input
// tokens read from the cache counted in and apart), and the
// stop reason mapped to the other backends' done reasons.
func TestStream(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.Start(t, fakeanthropic.Options{PingEvery: 1, Script: fakeanthropic.Queue(
		fakeanthropic.Reply{Content: "Let me compute both.", Chunks: 5, InputTokens: 40, CachedTokens: 10, OutputTokens: 31, ToolCalls: []fakeanthropic.ToolCall{
			{ID: "toolu_1", Name: "calculate", Args: `{"expression": "2 + 3"}`},
			{ID: "toolu_2", Name: "calculate", Args: `{"expression": "4 * 5"}`},
		}},
		fakeanthropic.Reply{Content: "They are 5 and 20."},
		fakeanthropic.Reply{Content: "cut", ToolCalls: []fakeanthropic.ToolCall{{Name: "calculate", Args: `{"expression": "7 *`}}, StopReason: "max_tokens"},
		fakeanthropic.Reply{Content: "I can't help with that.", StopReason: "refusal"},
	)})
	b := newBackend(t, Config{BaseURL: fake.URL})
	user := backend.Message{Role: "user", Content: "What are 2 + 3 and 4 * 5?"}
	resp := chat(t, b, user)
	m := resp.Message
	if m.Content != "Let me compute both." || len(m.ToolCalls) != 2 || resp.DoneReason != "tool_calls" || resp.TokensIn != 50 || resp.TokensCached != 10 || resp.TokensOut != 31 || m.Blocks != nil {
		t.Fatalf("reply %+v", resp)
	}
	for i, want := range []string{`{"expression": "2 + 3"}`, `{"expression": "4 * 5"}`} {
		if c := m.ToolCalls[i]; c.ID != fmt.Sprintf("toolu_%d", i+1) || c.Name != "calculate" || string(c.Arguments) != want {
			t.Errorf("call %d: %+v", i, c)
		}
	}
	if resp := chat(t, b, user); resp.DoneReason != "stop" || resp.Message.Content != "They are 5 and 20." {
		t.Errorf("second reply %+v", resp)
	}
	// max_tokens in the middle of a call: the call is kept as sent (the
	// agent finds it malformed) and the reason says the reply was cut.
	if resp := chat(t, b, user); resp.DoneReason != "length" || len(resp.Message.ToolCalls) != 1 || string(resp.Message.ToolCalls[0].Arguments) != `{"expression": "7 *` {
		t.Errorf("cut reply %+v", resp)
	}
	if resp := chat(t, b, user); resp.DoneReason != "refusal" {
		t.Errorf("refusal %+v", resp)
	}
}

// TestThinkingSentBack: with a thinking budget, the reply's thinking is
// recorded and its blocks, signature included, go back unchanged at the
// head of the assistant turn; the fake refuses the second request
// otherwise.
func TestThinkingSentBack(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.Start(t, fakeanthropic.Options{Script: fakeanthropic.Queue(
		fakeanthropic.Reply{Thinking: "The user wants 2 + 3; use the calculator.", ToolCalls: []fakeanthropic.ToolCall{{ID: "toolu_1", Name: "calculate", Args: `{"expression": "2 + 3"}`}}},
		fakeanthropic.Reply{Thinking: "It said 5.", Content: "5"},
	)})
	b := newBackend(t, Config{BaseURL: fake.URL, ThinkingBudget: 1024, MaxTokens: 2048})
	user := backend.Message{Role: "user", Content: "What is 2 + 3?"}
	ctx := context.Background()
	req := &backend.Request{Model: fakeanthropic.DefaultModel, Messages: []backend.Message{user}, Tools: []backend.Tool{calc}, Temperature: 1}
	first, err := b.Chat(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if first.Message.Thinking != "The user wants 2 + 3; use the calculator." || first.Message.Blocks == nil || len(first.Message.ToolCalls) != 1 {
		t.Fatalf("first reply %+v", first.Message)
	}
	req.Messages = append(req.Messages, first.Message, backend.Message{Role: "tool", Content: "5", ToolCallID: "toolu_1"})
	second, err := b.Chat(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if second.Message.Content != "5" || second.Message.Thinking != "It said 5." {
		t.Fatalf("second reply %+v", second.Message)
	}
	got := fake.Requests()[1].Messages[1].Blocks()
	if len(got) != 2 || got[0].Type != "thinking" || got[0].Signature != fakeanthropic.Signature("The user wants 2 + 3; use the calculator.") || got[1].Type != "tool_use" {
		t.Errorf("assistant turn sent back as %+v", got)
	}
	if th := fake.Requests()[0].Thinking; th == nil || th.Type != "enabled" || th.BudgetTokens != 1024 {
		t.Errorf("thinking sent as %+v", th)
	}

	// Without the blocks (a history from elsewhere) the fake, like the
	// API, refuses the turn: the test above can fail.
	plain := first.Message
	plain.Blocks = nil
	req.Messages[1] = plain
	if _, err := b.Chat(ctx, req); err == nil || !strings.Contains(err.Error(), "must start with a thinking block") {
		t.Errorf("a turn without its thinking blocks: %v", err)
	}
}

func kindOf(err error) (string, bool) {
	var be *backend.Error
	if errors.As(err, &be) {
		return be.Kind, be.Retryable
	}
	return "", false
}

// TestErrors: what each refusal becomes.
func TestErrors(t *testing.T) {
	t.Setenv("TOOLWARD_NO_SUCH_KEY_ENV", "k")
	for _, tc := range []struct {
		rep       fakeanthropic.Reply
		kind      string
		retryable bool
		says      string
	}{
		{fakeanthropic.Reply{Status: 401, Error: "invalid x-api-key"}, backend.KindBadRequest, false, "check that $TOOLWARD_NO_SUCH_KEY_ENV (backend.anthropic.api_key_env)"},
		{fakeanthropic.Reply{Status: 403, Error: "not allowed"}, backend.KindBadRequest, false, "api_key_env"},
		{fakeanthropic.Reply{Status: 404, Error: "model: claude-x"}, backend.KindModelMissing, false, "GET "},
		{fakeanthropic.Reply{Status: 400, Error: "prompt is too long: 210000 tokens > 200000 maximum"}, backend.KindContextOverflow, false, "context window"},
		{fakeanthropic.Reply{Status: 413, Error: "Request exceeds the maximum allowed number of bytes."}, backend.KindContextOverflow, false, "413"},
		{fakeanthropic.Reply{Status: 400, Error: "tools.0: something else"}, backend.KindBadRequest, false, "something else (invalid_request_error)"},
		{fakeanthropic.Reply{Status: 500, Error: "Internal server error"}, backend.KindUnavailable, true, "api_error"},
		{fakeanthropic.Reply{Status: 504, Error: "gateway"}, backend.KindTimeout, true, "504"},
		{fakeanthropic.Reply{Content: "partial", StreamError: "Overloaded"}, backend.KindThrottled, true, "mid-reply: Overloaded (overloaded_error)"},
		{fakeanthropic.Reply{Content: "partial", StreamError: "Internal", StreamErrorType: "api_error"}, backend.KindUnavailable, true, "mid-reply: Internal (api_error)"},
		{fakeanthropic.Reply{Status: 429, Error: "slow down", RetryAfter: "7"}, backend.KindThrottled, true, "retry after 7s"},
		{fakeanthropic.Reply{Status: 529, Error: "Overloaded"}, backend.KindThrottled, true, "overloaded_error"},
		{fakeanthropic.Reply{Content: "partial", StreamError: "prompt is too long: 3 tokens > 2 maximum", StreamErrorType: "invalid_request_error"}, backend.KindContextOverflow, false, "mid-reply"},
		{fakeanthropic.Reply{Content: "partial text here", ErrorAfter: 2}, backend.KindUnavailable, true, "broken reply"},
	} {
		fake := fakeanthropic.Start(t, fakeanthropic.Options{Script: fakeanthropic.Queue(tc.rep)})
		b := newBackend(t, Config{BaseURL: fake.URL, APIKeyEnv: "TOOLWARD_NO_SUCH_KEY_ENV"})
		_, err := b.Chat(context.Background(), &backend.Request{Model: fakeanthropic.DefaultModel, Messages: []backend.Message{{Role: "user", Content: "hi"}}})
		kind, retry := kindOf(err)
		if kind != tc.kind || retry != tc.retryable || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v: got %s retryable %v: %v", tc.rep, kind, retry, err)
		}
	}
}

// TestThrottle: 429 and 529 are KindThrottled with the server's
// retry-after, so that backend.Throttle (which the engine wraps every
// backend in) waits for it and sends the same request again.
func TestThrottle(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.Start(t, fakeanthropic.Options{FailFirst: 3, FailStatus: 529, FailRetryAfter: "2",
		Script: fakeanthropic.Queue(fakeanthropic.Reply{Content: "ok"})})
	b := newBackend(t, Config{BaseURL: fake.URL})
	var waits []time.Duration
	th := &backend.Throttle{Backend: b, Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	resp, err := th.Chat(context.Background(), &backend.Request{Model: fakeanthropic.DefaultModel, Messages: []backend.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	raw := fake.RawRequests()
	if resp.Message.Content != "ok" || len(raw) != 4 || string(raw[0]) != string(raw[3]) || len(waits) != 3 || waits[0] != 2*time.Second {
		t.Fatalf("reply %+v after %d requests, waits %v", resp, len(raw), waits)
	}
}

// serve answers every POST with the stream body.
func serve(t *testing.T, body func(w io.Writer)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		body(w)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

const streamHead = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"

// TestBounds: a reply past MaxReplyBytes, one with more than
// MaxReplyCalls calls, and a stream of junk.
func TestBounds(t *testing.T) {
	t.Parallel()
	long := serve(t, func(w io.Writer) {
		io.WriteString(w, streamHead+"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		for range 50 {
			io.WriteString(w, "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"0123456789\"}}\n\n")
		}
	})
	b := newBackend(t, Config{BaseURL: long, MaxReplyBytes: 95})
	if resp := chat(t, b, backend.Message{Role: "user", Content: "hi"}); resp.DoneReason != DoneReplyLimit || len(resp.Message.Content) != 95 {
		t.Errorf("long reply: %s, %d bytes", resp.DoneReason, len(resp.Message.Content))
	}

	many := serve(t, func(w io.Writer) {
		io.WriteString(w, streamHead)
		for i := range MaxReplyCalls + 5 {
			fmt.Fprintf(w, "data: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t%d\",\"name\":\"calculate\",\"input\":{}}}\n\n", i, i)
		}
		io.WriteString(w, "data: {\"type\":\"message_stop\"}\n\n")
	})
	b = newBackend(t, Config{BaseURL: many})
	if resp := chat(t, b, backend.Message{Role: "user", Content: "hi"}); resp.DoneReason != DoneReplyLimit || len(resp.Message.ToolCalls) != MaxReplyCalls {
		t.Errorf("many calls: %s, %d calls", resp.DoneReason, len(resp.Message.ToolCalls))
	}

	for name, junk := range map[string]string{
		"comments": ": keep-alive\n",
		"blank":    "\n",
		"pings":    "event: ping\ndata: {\"type\":\"ping\"}\n\n",
	} {
		flood := serve(t, func(w io.Writer) {
			io.WriteString(w, streamHead)
			for range 2000 {
				io.WriteString(w, junk)
			}
		})
		b = newBackend(t, Config{BaseURL: flood, MaxReplyBytes: 1000})
		_, err := b.Chat(context.Background(), &backend.Request{Model: "m", Messages: []backend.Message{{Role: "user", Content: "hi"}}})
		if kind, retry := kindOf(err); kind != backend.KindUnavailable || !retry || !errors.Is(err, errJunk) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestEncodeTool: the tool as sent; names the API refuses and schemas
// that are not JSON are bad requests.
func TestEncodeTool(t *testing.T) {
	t.Parallel()
	got, err := EncodeTool(backend.Tool{Name: "list_documents", Description: "Lists."})
	if err != nil || string(got) != `{"name":"list_documents","description":"Lists.","input_schema":{"type":"object","properties":{}}}` {
		t.Errorf("empty schema: %s %v", got, err)
	}
	for _, bad := range []backend.Tool{{Name: "fs.read"}, {Name: strings.Repeat("x", 129)}, {Name: "ok", InputSchema: json.RawMessage("{")}} {
		if _, err := EncodeTool(bad); err == nil {
			t.Errorf("%q: no error", bad.Name)
		} else if kind, _ := kindOf(err); kind != backend.KindBadRequest {
			t.Errorf("%q: %v", bad.Name, err)
		}
	}
}

// TestPreflight: every page of the model list is read; a listed model
// needs no probe, an alias is probed and warned about, and the Info says
// the backend takes no seed.
func TestPreflight(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.Start(t, fakeanthropic.Options{PageSize: 1, Aliases: []string{"claude-sonnet-latest"},
		Models: []fakeanthropic.Model{{ID: "claude-haiku-4-5-20251001"}, {ID: "claude-sonnet-4-6"}, {ID: "claude-opus-4-6"}}})
	b := newBackend(t, Config{BaseURL: fake.URL})
	info, err := b.Preflight(context.Background(), []string{"claude-opus-4-6", "claude-sonnet-latest"})
	if err != nil {
		t.Fatal(err)
	}
	if !info.Unseeded || info.Models["claude-opus-4-6"].ID != "claude-opus-4-6" || info.Models["claude-opus-4-6"].Created == 0 ||
		len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "does not list claude-sonnet-latest, but it answers") || fake.Probes() != 1 || fake.Pages() != 3 {
		t.Errorf("info %+v, %d probes, %d pages", info, fake.Probes(), fake.Pages())
	}
	_, err = b.Preflight(context.Background(), []string{"claude-sonet-4-6"})
	if kind, _ := kindOf(err); kind != backend.KindModelMissing || !strings.Contains(err.Error(), "has no model claude-sonet-4-6 (did you mean claude-sonnet-4-6?); it lists: claude-haiku-4-5-20251001, claude-opus-4-6, claude-sonnet-4-6") {
		t.Errorf("missing model: %v", err)
	}
}

// TestNewKey: a named variable that is not set is an error naming it; the
// key goes in x-api-key only.
func TestNewKey(t *testing.T) {
	if _, err := New(Config{APIKeyEnv: "TOOLWARD_TEST_UNSET_KEY"}); err == nil || !strings.Contains(err.Error(), "$TOOLWARD_TEST_UNSET_KEY, which is not set") {
		t.Errorf("unset key: %v", err)
	}
	if _, err := New(Config{ThinkingBudget: 4096}); err == nil {
		t.Error("a thinking budget of max_tokens: no error")
	}
}

// A cell's options set goes over the configuration: top_p, max_tokens
// and a thinking budget where the backend has none.
func TestRequestCellOptions(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.Start(t, fakeanthropic.Options{Script: fakeanthropic.Queue(fakeanthropic.Reply{Content: "done"}, fakeanthropic.Reply{Content: "done"})})
	b := newBackend(t, Config{BaseURL: fake.URL, MaxTokens: 512})
	topP, maxTokens, budget := 0.8, 8192, 2048
	req := &backend.Request{Model: fakeanthropic.DefaultModel, Messages: []backend.Message{{Role: "user", Content: "2+3?"}}, Temperature: 1,
		Options: &schema.OptionsSet{Anthropic: &schema.AnthropicOptions{TopP: &topP, MaxTokens: &maxTokens, ThinkingBudget: &budget}}}
	if _, err := b.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	req.Options = nil
	if _, err := b.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	raw := fake.RawRequests()
	for _, want := range []string{`"max_tokens":8192`, `"top_p":0.8`, `"thinking":{"type":"enabled","budget_tokens":2048}`} {
		if !strings.Contains(string(raw[0]), want) {
			t.Errorf("with options: no %s in %s", want, raw[0])
		}
	}
	if s := string(raw[1]); !strings.Contains(s, `"max_tokens":512`) || strings.Contains(s, "top_p") || strings.Contains(s, "thinking") {
		t.Errorf("without options: %s", s)
	}
}
