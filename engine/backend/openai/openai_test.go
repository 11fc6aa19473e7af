package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/openai"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
	"github.com/toolward/toolward/schema"
)

var calcTool = backend.Tool{
	Name: "calculate", Description: "Evaluate an arithmetic expression",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string","minLength":1}},"required":["expression"]}`),
}

func newBackend(t *testing.T, cfg openai.Config) *openai.Backend {
	t.Helper()
	b, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func chat(t *testing.T, b *openai.Backend, msgs ...backend.Message) (*backend.Response, error) {
	t.Helper()
	if len(msgs) == 0 {
		msgs = []backend.Message{{Role: "user", Content: "What is 2 + 3 * 4?"}}
	}
	return b.Chat(context.Background(), &backend.Request{Model: fakeopenai.DefaultModel, Messages: msgs, Tools: []backend.Tool{calcTool}})
}

func TestProbePromptAgrees(t *testing.T) {
	if openai.ProbePrompt != fakeopenai.ProbePrompt {
		t.Fatalf("openai.ProbePrompt %q, fakeopenai.ProbePrompt %q", openai.ProbePrompt, fakeopenai.ProbePrompt)
	}
}

// TestChatShapes: fragmented and whole arguments, streamed and not, give
// the same message; usage, finish reason, ids and reasoning come through.
func TestChatShapes(t *testing.T) {
	reply := fakeopenai.Reply{
		Reasoning: "Use the tool.",
		ToolCalls: []fakeopenai.ToolCall{
			{ID: "call_a", Name: "calculate", Args: `{"expression": "2 + 3 * 4"}`},
			{ID: "call_b", Name: "calculate", Args: `{"expression": "(2 + 3) * 4"}`},
		},
		Chunks: 7, PromptTokens: 311, CompletionTokens: 22,
	}
	whole := reply
	whole.Whole = true
	for _, tc := range []struct {
		name     string
		reply    fakeopenai.Reply
		noStream bool
	}{{"fragments", reply, false}, {"whole", whole, false}, {"not streamed", reply, true}} {
		fake := fakeopenai.Start(t, fakeopenai.Options{Script: fakeopenai.Queue(tc.reply)})
		b := newBackend(t, openai.Config{BaseURL: fake.BaseURL, NoStream: tc.noStream})
		resp, err := chat(t, b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		m := resp.Message
		if len(m.ToolCalls) != 2 || m.ToolCalls[0].ID != "call_a" || string(m.ToolCalls[0].Arguments) != `{"expression": "2 + 3 * 4"}` ||
			m.ToolCalls[1].ID != "call_b" || string(m.ToolCalls[1].Arguments) != `{"expression": "(2 + 3) * 4"}` {
			t.Errorf("%s: calls %+v", tc.name, m.ToolCalls)
		}
		if m.Thinking != "Use the tool." || resp.TokensIn != 311 || resp.TokensOut != 22 || resp.DoneReason != "tool_calls" {
			t.Errorf("%s: thinking %q, tokens %d/%d, done %q", tc.name, m.Thinking, resp.TokensIn, resp.TokensOut, resp.DoneReason)
		}
		if stream := fake.Requests()[0].Stream; stream == tc.noStream {
			t.Errorf("%s: stream %v sent", tc.name, stream)
		}
	}
}

// TestRequestFields: seed and temperature are sent even when zero; the
// optional fields only when configured, and tool_choice and
// parallel_tool_calls only with tools; the schema goes unchanged; tool
// results quote their call's id; the key and the headers are sent.
func TestRequestFields(t *testing.T) {
	t.Setenv("FAKE_KEY", "sk-test-123")
	fake := fakeopenai.Start(t, fakeopenai.Options{APIKey: "sk-test-123", Script: func(*fakeopenai.Request) fakeopenai.Reply {
		return fakeopenai.Reply{Content: "14"}
	}})
	plain := newBackend(t, openai.Config{BaseURL: fake.BaseURL, APIKeyEnv: "FAKE_KEY"})
	if _, err := chat(t, plain); err != nil {
		t.Fatal(err)
	}
	raw := string(fake.RawRequests()[0])
	for _, want := range []string{`"seed":0`, `"temperature":0`, `"stream":true`, `"stream_options":{"include_usage":true}`, `"parameters":{"type":"object","properties":{"expression":{"type":"string","minLength":1}},"required":["expression"]}`} {
		if !strings.Contains(raw, want) {
			t.Errorf("request lacks %s: %s", want, raw)
		}
	}
	for _, absent := range []string{"max_tokens", "tool_choice", "parallel_tool_calls"} {
		if strings.Contains(raw, absent) {
			t.Errorf("request has %s though it is not configured: %s", absent, raw)
		}
	}

	yes := true
	set := newBackend(t, openai.Config{
		BaseURL: fake.BaseURL, APIKeyEnv: "FAKE_KEY", Headers: map[string]string{"X-Team": "evals"},
		MaxTokens: 256, ToolChoice: "required", ParallelToolCalls: &yes,
	})
	history := []backend.Message{
		{Role: "user", Content: "What is 2 + 3 * 4?"},
		{Role: "assistant", ToolCalls: []backend.ToolCall{{ID: "call_x1", Name: "calculate", Arguments: json.RawMessage(`{"expression":"2 + 3 * 4"}`)}}},
		{Role: "tool", Content: "14", ToolName: "calculate", ToolCallID: "call_x1"},
	}
	if _, err := chat(t, set, history...); err != nil {
		t.Fatal(err)
	}
	req := fake.Requests()[1]
	if req.MaxTokens == nil || *req.MaxTokens != 256 || string(req.ToolChoice) != `"required"` || req.ParallelToolCalls == nil || !*req.ParallelToolCalls {
		t.Errorf("optional fields: max_tokens %v, tool_choice %s, parallel_tool_calls %v", req.MaxTokens, req.ToolChoice, req.ParallelToolCalls)
	}
	if req.Header.Get("X-Team") != "evals" || req.Header.Get("Authorization") != "Bearer sk-test-123" {
		t.Errorf("headers %v", req.Header)
	}
	if m := req.Messages[2]; m.Role != "tool" || m.ToolCallID != "call_x1" || req.Messages[1].ToolCalls[0].Function.Arguments != `{"expression":"2 + 3 * 4"}` {
		t.Errorf("history %+v", req.Messages)
	}

	// Without tools, tool_choice and parallel_tool_calls would be refused.
	if _, err := set.Chat(context.Background(), &backend.Request{Model: fakeopenai.DefaultModel, Messages: history[:1]}); err != nil {
		t.Fatal(err)
	}
	if raw := string(fake.RawRequests()[2]); strings.Contains(raw, "tool_choice") || strings.Contains(raw, "parallel_tool_calls") || strings.Contains(raw, `"tools"`) {
		t.Errorf("request without tools: %s", raw)
	}
}

func TestKeyEnvUnset(t *testing.T) {
	t.Setenv("TOOLWARD_TEST_NO_SUCH_KEY", "")
	_, err := openai.New(openai.Config{APIKeyEnv: "TOOLWARD_TEST_NO_SUCH_KEY"})
	if err == nil || !strings.Contains(err.Error(), "$TOOLWARD_TEST_NO_SUCH_KEY, which is not set") {
		t.Fatalf("err %v", err)
	}
}

// TestMalformedArguments: arguments that are not JSON are the model's
// doing: returned as sent, with no error.
func TestMalformedArguments(t *testing.T) {
	fake := fakeopenai.Start(t, fakeopenai.Options{Script: fakeopenai.Queue(fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{Name: "calculate", Args: `{"expression": 2 + `}}})})
	resp, err := chat(t, newBackend(t, openai.Config{BaseURL: fake.BaseURL}))
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Message.ToolCalls; len(c) != 1 || string(c[0].Arguments) != `{"expression": 2 + ` {
		t.Fatalf("calls %+v", c)
	}
}

// TestReplyLimitCuts: a reply longer than MaxReplyBytes is cut there,
// not an error.
func TestReplyLimitCuts(t *testing.T) {
	fake := fakeopenai.Start(t, fakeopenai.Options{Script: fakeopenai.Queue(fakeopenai.Reply{Content: strings.Repeat("la ", 10000), Chunks: 50})})
	resp, err := chat(t, newBackend(t, openai.Config{BaseURL: fake.BaseURL, MaxReplyBytes: 1000}))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.Content) != 1000 || resp.DoneReason != openai.DoneReplyLimit {
		t.Fatalf("%d bytes kept, done %q", len(resp.Message.Content), resp.DoneReason)
	}
	// Not streamed, a reply over the limit cannot be decoded in part: it
	// is dropped, with the same done reason.
	fake = fakeopenai.Start(t, fakeopenai.Options{Script: fakeopenai.Queue(fakeopenai.Reply{Content: strings.Repeat("la ", 100000)})})
	resp, err = chat(t, newBackend(t, openai.Config{BaseURL: fake.BaseURL, MaxReplyBytes: 1000, NoStream: true}))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "" || resp.DoneReason != openai.DoneReplyLimit {
		t.Fatalf("not streamed: %d bytes kept, done %q", len(resp.Message.Content), resp.DoneReason)
	}
}

func kindOf(err error) (*backend.Error, bool) {
	var be *backend.Error
	ok := errors.As(err, &be)
	return be, ok
}

// TestChatErrors: every failure is a *backend.Error of the right kind,
// retryable when a retry may help.
func TestChatErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reply     fakeopenai.Reply
		opts      fakeopenai.Options
		kind      string
		retryable bool
		after     time.Duration
		says      string
	}{
		{name: "5xx", reply: fakeopenai.Reply{Status: 503, Error: "loading model"}, kind: backend.KindUnavailable, retryable: true, says: "loading model"},
		{name: "429", reply: fakeopenai.Reply{Status: 429, Error: "Rate limit reached", RetryAfter: "7"}, kind: backend.KindThrottled, retryable: true, after: 7 * time.Second, says: "retry after 7s"},
		{name: "503 with Retry-After", reply: fakeopenai.Reply{Status: 503, Error: "overloaded", RetryAfter: "2"}, kind: backend.KindThrottled, retryable: true, after: 2 * time.Second, says: "retry after 2s"},
		{name: "401", opts: fakeopenai.Options{APIKey: "right"}, kind: backend.KindBadRequest, says: "api_key_env"},
		{name: "404 model", reply: fakeopenai.Reply{Status: 404, Error: "The model `demo-model` does not exist."}, kind: backend.KindModelMissing, says: "matrix.models"},
		{name: "overflow", opts: fakeopenai.Options{ContextTokens: 3}, kind: backend.KindContextOverflow, says: "context window"},
		{name: "jinja", reply: fakeopenai.Reply{Status: 500, Error: "tools param requires --jinja flag"}, kind: backend.KindNoTools, says: "--jinja"},
		{name: "other 4xx", reply: fakeopenai.Reply{Status: 422, Error: "bad field"}, kind: backend.KindBadRequest, says: "bad field"},
		{name: "broken stream", reply: fakeopenai.Reply{Content: "The result is", ErrorAfter: 2}, kind: backend.KindUnavailable, retryable: true, says: "broken reply"},
		{name: "error event", reply: fakeopenai.Reply{Content: "The result", StreamError: "CUDA error"}, kind: backend.KindUnavailable, retryable: true, says: "CUDA error"},
		{name: "overflow event", reply: fakeopenai.Reply{StreamError: "the request exceeds the available context size"}, kind: backend.KindContextOverflow},
	} {
		opts := tc.opts
		opts.Script = fakeopenai.Queue(tc.reply)
		fake := fakeopenai.Start(t, opts)
		_, err := chat(t, newBackend(t, openai.Config{BaseURL: fake.BaseURL}))
		be, ok := kindOf(err)
		if !ok || be.Kind != tc.kind || be.Retryable != tc.retryable || be.RetryAfter != tc.after || !strings.Contains(be.Error(), tc.says) {
			t.Errorf("%s: %#v", tc.name, err)
		}
	}
}

func TestTransportErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, err = chat(t, newBackend(t, openai.Config{BaseURL: "http://" + addr + "/v1"}))
	if be, ok := kindOf(err); !ok || be.Kind != backend.KindUnavailable || !be.Retryable {
		t.Errorf("refused: %#v", err)
	}

	fake := fakeopenai.Start(t, fakeopenai.Options{Script: fakeopenai.Queue(fakeopenai.Reply{Content: "late", Delay: time.Hour})})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = newBackend(t, openai.Config{BaseURL: fake.BaseURL}).Chat(ctx, &backend.Request{Model: fakeopenai.DefaultModel})
	if be, ok := kindOf(err); !ok || be.Kind != backend.KindTimeout || !be.Retryable {
		t.Errorf("timeout: %#v", err)
	}
}

// TestPreflight: what stops a job before it starts, and what only warns.
func TestPreflight(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		fake := fakeopenai.Start(t, fakeopenai.Options{ServerHeader: "llama.cpp", Models: []fakeopenai.Model{{ID: "qwen3:0.6b", OwnedBy: "llamacpp"}, {ID: "synth:latest"}}})
		info, err := newBackend(t, openai.Config{BaseURL: fake.BaseURL}).Preflight(context.Background(), []string{"qwen3:0.6b", "synth", "qwen3:0.6b"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(info.Server, "Server: llama.cpp") || info.Models["qwen3:0.6b"].OwnedBy != "llamacpp" || info.Models["synth"].ID != "synth:latest" || len(info.Warnings) != 0 {
			t.Errorf("info %+v", info)
		}
		if fake.Probes() != 2 {
			t.Errorf("%d probes, want one per model", fake.Probes())
		}
	})
	t.Run("no model list", func(t *testing.T) {
		fake := fakeopenai.Start(t, fakeopenai.Options{NoModels: true})
		info, err := newBackend(t, openai.Config{BaseURL: fake.BaseURL}).Preflight(context.Background(), []string{fakeopenai.DefaultModel})
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "cannot list models") {
			t.Errorf("warnings %q", info.Warnings)
		}
	})
	t.Run("unlisted but served", func(t *testing.T) {
		fake := fakeopenai.Start(t, fakeopenai.Options{AnyModel: true})
		info, err := newBackend(t, openai.Config{BaseURL: fake.BaseURL}).Preflight(context.Background(), []string{"whatever"})
		if err != nil || len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "does not list model whatever") {
			t.Errorf("info %+v, err %v", info, err)
		}
	})
	for _, tc := range []struct {
		name string
		opts fakeopenai.Options
		kind string
		says []string
	}{
		{"missing", fakeopenai.Options{Models: []fakeopenai.Model{{ID: "a"}, {ID: "b"}}}, backend.KindModelMissing, []string{"does not serve models x, y", "it lists: a, b"}},
		{"missing, no list", fakeopenai.Options{NoModels: true}, backend.KindModelMissing, []string{"does not serve models x, y"}},
		{"401", fakeopenai.Options{APIKey: "k"}, backend.KindBadRequest, []string{"401", "api_key_env"}},
	} {
		fake := fakeopenai.Start(t, tc.opts)
		_, err := newBackend(t, openai.Config{BaseURL: fake.BaseURL}).Preflight(context.Background(), []string{"x", "y"})
		be, ok := kindOf(err)
		if !ok || be.Kind != tc.kind {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		for _, s := range tc.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", tc.name, err, s)
			}
		}
	}
	t.Run("nothing listens", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := l.Addr().String()
		l.Close()
		_, err := newBackend(t, openai.Config{BaseURL: "http://" + addr + "/v1"}).Preflight(context.Background(), []string{"m"})
		if err == nil || !strings.Contains(err.Error(), "cannot reach an OpenAI-compatible server at http://"+addr+"/v1; start it") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("tools refused", func(t *testing.T) {
		srv := http.NewServeMux()
		srv.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"data":[{"id":"m"}]}`))
		})
		srv.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			w.Write([]byte(`{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`))
		})
		hs := startServer(t, srv)
		_, err := newBackend(t, openai.Config{BaseURL: hs + "/v1"}).Preflight(context.Background(), []string{"m"})
		if be, ok := kindOf(err); !ok || be.Kind != backend.KindNoTools || !strings.Contains(err.Error(), "--enable-auto-tool-choice --tool-call-parser") {
			t.Errorf("err %v", err)
		}
	})
}

func startServer(t *testing.T, h http.Handler) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// TestPreflightNotAChatServer: a server that answers 200 with something
// other than a chat completion stops the job at preflight.
func TestPreflightNotAChatServer(t *testing.T) {
	hs := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>welcome</html>"))
	}))
	_, err := newBackend(t, openai.Config{BaseURL: hs}).Preflight(context.Background(), []string{"m"})
	if be, ok := kindOf(err); !ok || be.Kind != backend.KindBadRequest || !strings.Contains(err.Error(), "is base_url ("+hs+") an OpenAI-compatible API root") {
		t.Fatalf("err %v", err)
	}
}

// TestPreflightWaitsOutRateLimit: a 429 at preflight is retried after
// the server's Retry-After, not a reason to stop the job.
func TestPreflightWaitsOutRateLimit(t *testing.T) {
	var probes atomic.Int64
	hs := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Write([]byte(`{"data":[{"id":"m"}]}`))
			return
		}
		if probes.Add(1) == 1 {
			w.Header().Set("Retry-After", "0.01")
			w.WriteHeader(429)
			w.Write([]byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`))
			return
		}
		w.Write([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"OK"},"finish_reason":"length"}]}`))
	}))
	if _, err := newBackend(t, openai.Config{BaseURL: hs + "/v1"}).Preflight(context.Background(), []string{"m"}); err != nil || probes.Load() != 2 {
		t.Fatalf("err %v after %d probes", err, probes.Load())
	}
}

// TestOverlongEventIsReplyLimit: one server-sent event longer than the
// whole reply may be, cut inside the model's content (a content delta
// with no end), is a reply cut at the limit, with its done reason, as on
// the Ollama backend; not an empty reply with no reason. (Cut anywhere
// else it is the server's fault: TestHostileModelStreams.)
func TestOverlongEventIsReplyLimit(t *testing.T) {
	hs := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"42 "}}]}` + "\n\n"))
		w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("x", 1<<20)))
	}))
	resp, err := chat(t, newBackend(t, openai.Config{BaseURL: hs, MaxReplyBytes: 1000}))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "42 " || resp.DoneReason != openai.DoneReplyLimit {
		t.Fatalf("content %.40q, done %q; want %q, %q", resp.Message.Content, resp.DoneReason, "42 ", openai.DoneReplyLimit)
	}
}

// TestReplyCallsBounded: a reply that streams more calls than
// MaxReplyCalls, each with its own index, keeps the first MaxReplyCalls
// and is cut there, streamed or not.
func TestReplyCallsBounded(t *testing.T) {
	const n = openai.MaxReplyCalls + 500
	var stream, whole strings.Builder
	whole.WriteString(`{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[`)
	for i := range n {
		fmt.Fprintf(&stream, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"name":"c","arguments":"{}"}}]}}]}`+"\n\n", i+1)
		if i > 0 {
			whole.WriteByte(',')
		}
		fmt.Fprintf(&whole, `{"id":"c%d","type":"function","function":{"name":"c","arguments":"{}"}}`, i)
	}
	stream.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	whole.WriteString(`]}}]}`)
	for _, tc := range []struct {
		name     string
		noStream bool
		body     string
	}{{"streamed", false, stream.String()}, {"whole", true, whole.String()}} {
		hs := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(tc.body))
		}))
		resp, err := chat(t, newBackend(t, openai.Config{BaseURL: hs, NoStream: tc.noStream}))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(resp.Message.ToolCalls) != openai.MaxReplyCalls || resp.DoneReason != openai.DoneReplyLimit {
			t.Errorf("%s: %d calls, done %q; want %d, %q", tc.name, len(resp.Message.ToolCalls), resp.DoneReason, openai.MaxReplyCalls, openai.DoneReplyLimit)
		}
		if c := resp.Message.ToolCalls[len(resp.Message.ToolCalls)-1]; c.Name != "c" || string(c.Arguments) != "{}" {
			t.Errorf("%s: last call kept %+v", tc.name, c)
		}
	}
}

// TestPreflightDidYouMean: a misspelt model name gets the closest listed
// one.
func TestPreflightDidYouMean(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.Start(t, fakeopenai.Options{Models: []fakeopenai.Model{{ID: "llama-3.1-8b-instruct"}, {ID: "qwen2.5-7b"}}})
	_, err := newBackend(t, openai.Config{BaseURL: fake.BaseURL}).Preflight(context.Background(), []string{"llama-3.1-8b-instrcut"})
	if err == nil || !strings.Contains(err.Error(), `did you mean "llama-3.1-8b-instruct" for "llama-3.1-8b-instrcut"?`) {
		t.Errorf("got %v", err)
	}
}

// TestPreflightEventStreamToNonStreaming: a server that answers the
// probe (sent with stream: false) with an event stream is told so, with
// what came, instead of blaming base_url.
func TestPreflightEventStreamToNonStreaming(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"OK\"}}]}\n\ndata: [DONE]\n\n")
	}))
	defer hs.Close()
	_, err := newBackend(t, openai.Config{BaseURL: hs.URL + "/v1"}).Preflight(context.Background(), []string{"m"})
	if err == nil || !strings.Contains(err.Error(), `answered with an event stream (Content-Type "text/event-stream", starting "data: {`) ||
		strings.Contains(err.Error(), "is base_url") {
		t.Errorf("got %v", err)
	}
}

// A cell's options set goes into the request: reasoning_effort, top_p,
// max_tokens over the configured one, and extra merged into the body
// without replacing toolward's own fields.
func TestRequestCellOptions(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.Start(t, fakeopenai.Options{Script: func(*fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Reply{Content: "14"} }})
	b := newBackend(t, openai.Config{BaseURL: fake.BaseURL, MaxTokens: 256})
	topP, maxTokens := 0.5, 1024
	opts := &schema.OptionsSet{OpenAI: &schema.OpenAIOptions{ReasoningEffort: "high", TopP: &topP, MaxTokens: &maxTokens,
		Extra: map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": true}, "model": "other"}}}
	req := &backend.Request{Model: fakeopenai.DefaultModel, Messages: []backend.Message{{Role: "user", Content: "2+3?"}}, Tools: []backend.Tool{calcTool}, Options: opts}
	if _, err := b.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(fake.RawRequests()[0], &body); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"reasoning_effort": `"high"`, "top_p": "0.5", "max_tokens": "1024",
		"chat_template_kwargs": `{"enable_thinking":true}`, "model": `"` + fakeopenai.DefaultModel + `"`, "seed": "0"} {
		if got := string(body[k]); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
	if _, err := chat(t, b); err != nil {
		t.Fatal(err)
	}
	if raw := string(fake.RawRequests()[1]); strings.Contains(raw, "reasoning_effort") || strings.Contains(raw, "top_p") || !strings.Contains(raw, `"max_tokens":256`) {
		t.Errorf("request without options: %s", raw)
	}
}
