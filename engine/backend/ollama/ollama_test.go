package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/schema"
)

func newBackend(t testing.TB, srv *fakeollama.Server, cfg Config) *Backend {
	t.Helper()
	cfg.Host = srv.URL
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func simpleRequest() *backend.Request {
	return &backend.Request{
		Model:    fakeollama.DefaultModel,
		Messages: []backend.Message{{Role: "user", Content: "What is 6*7?"}},
	}
}

func TestChatAccumulatesStream(t *testing.T) {
	srv := fakeollama.Start(t, fakeollama.Options{Script: fakeollama.Queue(fakeollama.Reply{
		Thinking: "The user wants a product; I should use the calculator.",
		Content:  "Let me compute that for you.",
		ToolCalls: []fakeollama.ToolCall{
			{Name: "calculate", Args: `{"expression":"6*7","precision":2}`},
			{Name: "query_database", Args: `{"sql":"SELECT 1","limit":5,"a":true}`},
		},
		Chunks:       5,
		PromptTokens: 120,
		EvalTokens:   14,
		DoneReason:   "stop",
	})})
	b := newBackend(t, srv, Config{})
	resp, err := b.Chat(context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	m := resp.Message
	if m.Role != "assistant" || m.Content != "Let me compute that for you." || m.Thinking != "The user wants a product; I should use the calculator." {
		t.Errorf("message = %+v", m)
	}
	if len(m.ToolCalls) != 2 {
		t.Fatalf("tool calls = %+v", m.ToolCalls)
	}
	if m.ToolCalls[0].Name != "calculate" || string(m.ToolCalls[0].Arguments) != `{"expression":"6*7","precision":2}` {
		t.Errorf("call 0 = %s %s", m.ToolCalls[0].Name, m.ToolCalls[0].Arguments)
	}
	// Key order as the model sent it, not sorted.
	if m.ToolCalls[1].Name != "query_database" || string(m.ToolCalls[1].Arguments) != `{"sql":"SELECT 1","limit":5,"a":true}` {
		t.Errorf("call 1 = %s %s", m.ToolCalls[1].Name, m.ToolCalls[1].Arguments)
	}
	if resp.TokensIn != 120 || resp.TokensOut != 14 || resp.DoneReason != "stop" {
		t.Errorf("tokens %d/%d done %q", resp.TokensIn, resp.TokensOut, resp.DoneReason)
	}
	if resp.Latency <= 0 {
		t.Errorf("latency %v", resp.Latency)
	}
}

func TestChatRequestOnTheWire(t *testing.T) {
	srv := fakeollama.Start(t, fakeollama.Options{Script: func(*api.ChatRequest) fakeollama.Reply {
		return fakeollama.Reply{Content: "ok"}
	}})
	b := newBackend(t, srv, Config{NumCtx: 4096, KeepAlive: "5m"})
	req := &backend.Request{
		Model: fakeollama.DefaultModel,
		Messages: []backend.Message{
			{Role: "system", Content: "Be brief."},
			{Role: "user", Content: "Raise?"},
			{Role: "assistant", ToolCalls: []backend.ToolCall{{Name: "query_database", Arguments: json.RawMessage(`{"sql":"SELECT 2","b":1}`)}}},
			{Role: "tool", ToolName: "query_database", Content: "708000"},
		},
		Tools: []backend.Tool{{Name: "query_database", Description: "Run SQL.", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"sql":{"type":"string","description":"A SELECT."}},"required":["sql"]}`)}},
		Seed:        0,
		Temperature: 0,
	}
	if _, err := b.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	raw := srv.RawRequests()
	if len(raw) != 1 {
		t.Fatalf("%d requests", len(raw))
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw[0], &body); err != nil {
		t.Fatal(err)
	}
	if got := string(body["think"]); got != "false" {
		t.Errorf("think = %s, want explicit false", got)
	}
	if got := string(body["stream"]); got != "true" {
		t.Errorf("stream = %s", got)
	}
	if got := string(body["keep_alive"]); got != `"5m0s"` {
		t.Errorf("keep_alive = %s", got)
	}
	var opts map[string]json.RawMessage
	if err := json.Unmarshal(body["options"], &opts); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"seed": "0", "temperature": "0", "num_ctx": "4096"} {
		if got, ok := opts[k]; !ok || string(got) != want {
			t.Errorf("options.%s = %s (present %v), want %s", k, got, ok, want)
		}
	}
	got := srv.Requests()[0]
	if len(got.Messages) != 4 || got.Messages[3].Role != "tool" || got.Messages[3].ToolName != "query_database" || got.Messages[3].Content != "708000" {
		t.Errorf("messages = %+v", got.Messages)
	}
	if tc := got.Messages[2].ToolCalls; len(tc) != 1 || tc[0].Function.Name != "query_database" || tc[0].Function.Arguments.String() != `{"sql":"SELECT 2","b":1}` {
		t.Errorf("assistant tool calls = %+v", tc)
	}
	if len(got.Tools) != 1 || got.Tools[0].Function.Name != "query_database" || got.Tools[0].Function.Description != "Run SQL." {
		t.Fatalf("tools = %v", got.Tools)
	}
	params := got.Tools[0].Function.Parameters
	if p, ok := params.Properties.Get("sql"); !ok || p.Description != "A SELECT." || len(params.Required) != 1 {
		t.Errorf("tool parameters = %s", params.String())
	}
}

func TestChatThinkOnAndSeed(t *testing.T) {
	srv := fakeollama.Start(t, fakeollama.Options{Script: func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Content: "ok"} }})
	b := newBackend(t, srv, Config{Think: true})
	req := simpleRequest()
	req.Seed, req.Temperature = 7, 0.7
	if _, err := b.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Think   json.RawMessage            `json:"think"`
		Options map[string]json.RawMessage `json:"options"`
	}
	json.Unmarshal(srv.RawRequests()[0], &body)
	if string(body.Think) != "true" || string(body.Options["seed"]) != "7" || string(body.Options["temperature"]) != "0.7" {
		t.Errorf("think %s options %v", body.Think, body.Options)
	}
	if _, ok := body.Options["num_ctx"]; ok {
		t.Errorf("num_ctx sent though NumCtx is 0")
	}
}

func wantKind(t *testing.T, err error, kind string, retryable bool) *backend.Error {
	t.Helper()
	var be *backend.Error
	if !errors.As(err, &be) {
		t.Fatalf("error %v (%T) is not a *backend.Error", err, err)
	}
	if be.Kind != kind || be.Retryable != retryable {
		t.Fatalf("error %q: kind %s retryable %v, want %s %v", be, be.Kind, be.Retryable, kind, retryable)
	}
	return be
}

func TestChatErrors(t *testing.T) {
	tests := []struct {
		name      string
		opts      fakeollama.Options
		model     string
		tools     bool
		timeout   time.Duration
		kind      string
		retryable bool
		msg       string
	}{
		{name: "model missing", model: "nope:1b", kind: backend.KindModelMissing, msg: "ollama pull nope:1b"},
		{name: "no tools", opts: fakeollama.Options{Models: []fakeollama.Model{{Name: "gemma:2b", NoTools: true}}}, model: "gemma:2b", tools: true, kind: backend.KindNoTools, msg: "cannot call tools"},
		{name: "500", opts: fakeollama.Options{Script: fakeollama.Queue(fakeollama.Reply{Status: 500, Error: "runner crashed"})}, kind: backend.KindUnavailable, retryable: true, msg: "runner crashed"},
		{name: "503 busy", opts: fakeollama.Options{Script: fakeollama.Queue(fakeollama.Reply{Status: 503, Error: "server busy"})}, kind: backend.KindUnavailable, retryable: true},
		{name: "other 400", opts: fakeollama.Options{Script: fakeollama.Queue(fakeollama.Reply{Status: 400, Error: "invalid options"})}, kind: backend.KindBadRequest, msg: "invalid options"},
		{name: "error mid-stream", opts: fakeollama.Options{Script: fakeollama.Queue(fakeollama.Reply{Content: "partial answer", ErrorAfter: 2, Error: "llama runner process has terminated"})}, kind: backend.KindUnavailable, retryable: true, msg: "terminated"},
		{name: "slow reply times out", opts: fakeollama.Options{Script: fakeollama.Queue(fakeollama.Reply{Content: "late", Delay: time.Minute})}, timeout: 50 * time.Millisecond, kind: backend.KindTimeout, retryable: true},
		{name: "garbled arguments", opts: fakeollama.Options{Script: fakeollama.Queue(fakeollama.Reply{ToolCalls: []fakeollama.ToolCall{{Name: "x", Args: `"not an object"`}}})}, kind: backend.KindUnavailable, retryable: true},
		{name: "no script", kind: backend.KindUnavailable, retryable: true, msg: "no script"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeollama.Start(t, tt.opts)
			b := newBackend(t, srv, Config{})
			req := simpleRequest()
			if tt.model != "" {
				req.Model = tt.model
			}
			if tt.tools {
				req.Tools = []backend.Tool{{Name: "calculate", InputSchema: json.RawMessage(`{"type":"object"}`)}}
			}
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			resp, err := b.Chat(ctx, req)
			if err == nil {
				t.Fatalf("no error; reply %+v", resp)
			}
			be := wantKind(t, err, tt.kind, tt.retryable)
			if !strings.Contains(be.Error(), tt.msg) {
				t.Errorf("error %q does not mention %q", be.Error(), tt.msg)
			}
		})
	}
}

func TestChatHTTPClientTimeout(t *testing.T) {
	srv := fakeollama.Start(t, fakeollama.Options{Script: fakeollama.Queue(fakeollama.Reply{Content: "late", Delay: time.Minute})})
	b := newBackend(t, srv, Config{HTTPClient: &http.Client{Timeout: 30 * time.Millisecond}})
	_, err := b.Chat(context.Background(), simpleRequest())
	wantKind(t, err, backend.KindTimeout, true)
}

func TestChatServerDown(t *testing.T) {
	srv := fakeollama.New(fakeollama.Options{})
	b := newBackend(t, srv, Config{})
	srv.Close()
	_, err := b.Chat(context.Background(), simpleRequest())
	be := wantKind(t, err, backend.KindUnavailable, true)
	if !strings.Contains(be.Error(), srv.URL) {
		t.Errorf("error %q does not name the host", be)
	}
}

func TestChatCanceled(t *testing.T) {
	srv := fakeollama.Start(t, fakeollama.Options{Script: fakeollama.Queue(fakeollama.Reply{Delay: time.Minute})})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(srv.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := newBackend(t, srv, Config{}).Chat(ctx, simpleRequest())
	wantKind(t, err, backend.KindUnavailable, false)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v does not wrap context.Canceled", err)
	}
}

func TestChatFailFirstThenSucceed(t *testing.T) {
	srv := fakeollama.Start(t, fakeollama.Options{FailFirst: 2, Script: func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Content: "fine"} }})
	b := newBackend(t, srv, Config{})
	for i := 0; i < 2; i++ {
		_, err := b.Chat(context.Background(), simpleRequest())
		wantKind(t, err, backend.KindUnavailable, true)
	}
	resp, err := b.Chat(context.Background(), simpleRequest())
	if err != nil || resp.Message.Content != "fine" {
		t.Fatalf("third try: %+v %v", resp, err)
	}
}

func TestPreflight(t *testing.T) {
	srv := fakeollama.Start(t, fakeollama.Options{Version: "0.17.4", Models: []fakeollama.Model{
		{Name: "qwen3:0.6b", Digest: "abc123"}, {Name: "llama3.2:latest", Digest: "def456"}, {Name: "gemma:2b", NoTools: true},
	}})
	b := newBackend(t, srv, Config{})
	ctx := context.Background()

	info, err := b.Preflight(ctx, []string{"qwen3:0.6b", "llama3.2"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Server != "ollama 0.17.4 at "+srv.URL {
		t.Errorf("server = %q", info.Server)
	}
	if info.Digests["qwen3:0.6b"] != "abc123" || info.Digests["llama3.2"] != "def456" {
		t.Errorf("digests = %v", info.Digests)
	}

	_, err = b.Preflight(ctx, []string{"qwen3:0.6b", "mistral:7b", "phi3"})
	be := wantKind(t, err, backend.KindModelMissing, false)
	for _, want := range []string{"mistral:7b, phi3", "gemma:2b, llama3.2:latest, qwen3:0.6b", "`ollama pull mistral:7b`", "`ollama pull phi3`"} {
		if !strings.Contains(be.Msg, want) {
			t.Errorf("message %q lacks %q", be.Msg, want)
		}
	}

	// A misspelt name gets a did-you-mean.
	_, err = b.Preflight(ctx, []string{"qwen3:06b"})
	be = wantKind(t, err, backend.KindModelMissing, false)
	if !strings.Contains(be.Msg, `did you mean "qwen3:0.6b" for "qwen3:06b"?`) || strings.Contains(be.Msg, "mistral") {
		t.Errorf("message %q", be.Msg)
	}

	_, err = b.Preflight(ctx, []string{"gemma:2b"})
	be = wantKind(t, err, backend.KindNoTools, false)
	if !strings.Contains(be.Msg, "gemma:2b cannot call tools") {
		t.Errorf("message %q", be.Msg)
	}
}

func TestPreflightThinking(t *testing.T) {
	srv := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{
		{Name: "qwen3:0.6b", Capabilities: []string{"completion", "tools", "thinking"}}, {Name: "llama3.2:1b"},
	}})
	b := newBackend(t, srv, Config{Think: true})
	if _, err := b.Preflight(context.Background(), []string{"qwen3:0.6b", "qwen3:0.6b"}); err != nil {
		t.Fatal(err)
	}
	_, err := b.Preflight(context.Background(), []string{"qwen3:0.6b", "llama3.2:1b"})
	be := wantKind(t, err, backend.KindBadRequest, false)
	if !strings.Contains(be.Msg, "llama3.2:1b cannot think") {
		t.Errorf("message %q", be.Msg)
	}
}

func TestPreflightUnreachable(t *testing.T) {
	srv := fakeollama.New(fakeollama.Options{})
	b := newBackend(t, srv, Config{})
	srv.Close()
	_, err := b.Preflight(context.Background(), []string{"demo-model"})
	be := wantKind(t, err, backend.KindUnavailable, true)
	for _, want := range []string{srv.URL, "ollama serve", "backend.ollama.host"} {
		if !strings.Contains(be.Msg, want) {
			t.Errorf("message %q lacks %q", be.Msg, want)
		}
	}
}

func TestNewConfig(t *testing.T) {
	b, err := New(Config{})
	if err != nil || b.Host() != DefaultHost {
		t.Fatalf("default: %v %v", b, err)
	}
	b, err = New(Config{Host: "10.0.0.2:11434/"})
	if err != nil || b.Host() != "http://10.0.0.2:11434" {
		t.Fatalf("bare host: %v %v", b.Host(), err)
	}
	for _, cfg := range []Config{{Host: "ftp://x"}, {Host: "http://"}, {KeepAlive: "soon"}, {NumCtx: -1}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func BenchmarkOllamaChat(b *testing.B) {
	srv := fakeollama.New(fakeollama.Options{Script: func(*api.ChatRequest) fakeollama.Reply {
		return fakeollama.Reply{Content: "The total is $84,960.", ToolCalls: []fakeollama.ToolCall{{Name: "calculate", Args: `{"expression":"708000 * 0.12"}`}}}
	}})
	defer srv.Close()
	be := newBackend(b, srv, Config{HTTPClient: &http.Client{}})
	req := simpleRequest()
	req.Tools = []backend.Tool{{Name: "calculate", Description: "Evaluate arithmetic.", InputSchema: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`)}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := be.Chat(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// A cell's options set goes over the backend's settings: think and
// num_ctx replace the configured ones, sampling options are added.
func TestChatCellOptions(t *testing.T) {
	t.Parallel()
	srv := fakeollama.Start(t, fakeollama.Options{Script: func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Content: "ok"} }})
	b := newBackend(t, srv, Config{Think: false, NumCtx: 4096})
	req := simpleRequest()
	ctx, topK, topP := 32768, 20, 0.9
	req.Options = &schema.OptionsSet{Ollama: &schema.OllamaOptions{Think: "high", NumCtx: &ctx, TopK: &topK, TopP: &topP}}
	if _, err := b.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	// Without options the backend's settings stand.
	if _, err := b.Chat(context.Background(), simpleRequest()); err != nil {
		t.Fatal(err)
	}
	var with, without struct {
		Think   json.RawMessage            `json:"think"`
		Options map[string]json.RawMessage `json:"options"`
	}
	json.Unmarshal(srv.RawRequests()[0], &with)
	json.Unmarshal(srv.RawRequests()[1], &without)
	if string(with.Think) != `"high"` || string(with.Options["num_ctx"]) != "32768" || string(with.Options["top_k"]) != "20" || string(with.Options["top_p"]) != "0.9" {
		t.Errorf("with options: think %s options %v", with.Think, with.Options)
	}
	if _, ok := with.Options["min_p"]; ok {
		t.Errorf("unset min_p sent")
	}
	if string(without.Think) != "false" || string(without.Options["num_ctx"]) != "4096" || without.Options["top_k"] != nil {
		t.Errorf("without options: think %s options %v", without.Think, without.Options)
	}
}
