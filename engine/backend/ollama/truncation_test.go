package ollama

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
)

// capturedReplies returns the JSON lines of testdata/wire/truncation.txt
// (or the file named) that follow each "# " header, keyed by the header.
func capturedReplies(t *testing.T, file ...string) map[string]string {
	t.Helper()
	name := "truncation.txt"
	if len(file) > 0 {
		name = file[0]
	}
	f, err := os.Open("testdata/wire/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	head := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# request:"):
		case strings.HasPrefix(line, "# "):
			head = line
		case strings.HasPrefix(line, "{") && head != "":
			out[head] = line
			head = ""
		}
	}
	return out
}

func captured(t *testing.T, replies map[string]string, prefix string) string {
	t.Helper()
	for h, body := range replies {
		if strings.HasPrefix(h, prefix) {
			return body
		}
	}
	t.Fatalf("the capture has no reply under a header starting %q", prefix)
	return ""
}

func tools(n int) []backend.Tool {
	out := make([]backend.Tool, n)
	for i := range out {
		out[i] = backend.Tool{Name: "tool" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), Description: "does something", InputSchema: []byte(`{"type":"object","properties":{}}`)}
	}
	return out
}

// TestChatCapturedTruncation serves Ollama 0.17.4's own replies to a
// 15,591-token prompt at num_ctx 512 and without num_ctx (the server's
// 4,096): both are context_truncated, not a reply for the scorer.
func TestChatCapturedTruncation(t *testing.T) {
	t.Parallel()
	replies := capturedReplies(t)
	cut := captured(t, replies, "# POST /api/chat, 64 tools")
	ps := captured(t, replies, "# GET /api/ps")
	fits := captured(t, replies, "# same, 1 tool, num_ctx 512")
	var reply atomic.Value
	reply.Store(cut)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch r.URL.Path {
		case "/api/chat":
			w.Write([]byte(reply.Load().(string) + "\n"))
		case "/api/ps":
			w.Write([]byte(ps))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	req := &backend.Request{Model: "qwen3:0.6b", Messages: []backend.Message{{Role: "user", Content: "What is 2 + 3 * 4?"}}, Tools: tools(64)}

	b, err := New(Config{Host: srv.URL, NumCtx: 512})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Chat(context.Background(), req)
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindContextTruncated || be.Retryable {
		t.Fatalf("Chat error = %v; want a context_truncated error, not retryable", err)
	}
	// The server has no /api/show here, so the full size is unknown.
	if want := "needs more than 512 tokens and Ollama cut it to 512 (num_ctx is 512)"; !strings.Contains(be.Msg, want) {
		t.Errorf("message %q lacks %q", be.Msg, want)
	}

	reply.Store(fits)
	resp, err := b.Chat(context.Background(), &backend.Request{Model: "qwen3:0.6b", Messages: req.Messages, Tools: tools(1)})
	if err != nil || resp.TokensIn != 300 {
		t.Fatalf("a prompt of 300 tokens at num_ctx 512: %+v, %v; want a reply", resp, err)
	}
}

// truncatingServer is a fake Ollama with the captured sizes: 64 tools
// make 15,591 prompt tokens, one tool 300; the server's default context
// is 4,096 and the model's own 40,960.
func truncatingServer(t *testing.T) *fakeollama.Server {
	return fakeollama.Start(t, fakeollama.Options{
		Models:  []fakeollama.Model{{Name: "qwen3:0.6b", ContextLength: 40960}},
		Context: 4096,
		PromptTokens: func(req *api.ChatRequest) int {
			if len(req.Tools) == 64 {
				return 15591
			}
			return 300
		},
		Script: fakeollama.Queue(fakeollama.Reply{Content: "14"}, fakeollama.Reply{Content: "14"}),
	})
}

// TestChatTruncatedNamesWhatFits: a server that honours truncate false
// refuses the prompt; the error is context_truncated, with the prompt's
// full size and the num_ctx that fits. (One that ignores it and cuts:
// TestChatCapturedTruncation.)
func TestChatTruncatedNamesWhatFits(t *testing.T) {
	t.Parallel()
	srv := truncatingServer(t)
	req := &backend.Request{Model: "qwen3:0.6b", Messages: []backend.Message{{Role: "user", Content: "What is 2 + 3 * 4?"}}, Tools: tools(64)}
	for _, tt := range []struct {
		numCtx int
		want   string
	}{
		{512, "the prompt needs 15,591 tokens, more than its context (num_ctx is 512); Ollama would cut it without saying so, and refused it as asked (truncate false)"},
		{0, "more than its context (num_ctx is not set, and Ollama gives qwen3:0.6b a context of 4,096)"},
	} {
		b := newBackend(t, srv, Config{NumCtx: tt.numCtx})
		_, err := b.Chat(context.Background(), req)
		var be *backend.Error
		if !errors.As(err, &be) || be.Kind != backend.KindContextTruncated {
			t.Fatalf("num_ctx %d: Chat error = %v; want context_truncated", tt.numCtx, err)
		}
		if !strings.Contains(be.Msg, tt.want) || !strings.Contains(be.Msg, "set backend.ollama.num_ctx to at least 16384") {
			t.Errorf("num_ctx %d: message = %q; want it to contain %q and the num_ctx to set", tt.numCtx, be.Msg, tt.want)
		}
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("the server got %d scripted chat requests; want 2 (measuring is a one-token probe)", n)
	}

	b := newBackend(t, srv, Config{NumCtx: 16384})
	resp, err := b.Chat(context.Background(), req)
	if err != nil || resp.TokensIn != 15591 || resp.Message.Content != "14" {
		t.Fatalf("at num_ctx 16384: %+v, %v; want the scripted reply", resp, err)
	}
}

func TestMeasurePrompt(t *testing.T) {
	t.Parallel()
	srv := truncatingServer(t)
	b := newBackend(t, srv, Config{NumCtx: 4096})
	req := &backend.Request{Model: "qwen3:0.6b", Messages: []backend.Message{{Role: "user", Content: "hi"}}, Tools: tools(64)}
	f, err := b.MeasurePrompt(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Cut() || f.Need != 15591 || f.Limit != 4096 || f.Context != "num_ctx is 4096" || f.Fix != "set backend.ollama.num_ctx to at least 16384" {
		t.Errorf("fit = %+v", f)
	}
	req.Tools = tools(1)
	if f, err := b.MeasurePrompt(context.Background(), req); err != nil || f.Cut() || f.Tokens != 300 {
		t.Errorf("one tool: fit = %+v, %v; want 300 tokens, not cut", f, err)
	}
	if len(srv.Requests()) != 0 || srv.Probes() == 0 {
		t.Errorf("measuring sent %d scripted requests and %d probes; want only probes", len(srv.Requests()), srv.Probes())
	}
}

// TestChatNumCtxCappedByModel: Ollama caps num_ctx at the model's own
// context (llm/server.go, "requested context size too large for model"),
// as the real server does with the 4,096-token test models: a num_ctx of
// 16384 does not let a 15,591-token prompt through, and the message says
// why and what can.
func TestChatNumCtxCappedByModel(t *testing.T) {
	t.Parallel()
	srv := fakeollama.Start(t, fakeollama.Options{
		Models:  []fakeollama.Model{{Name: "synth-tools", ContextLength: 4096}},
		Context: 4096,
		PromptTokens: func(req *api.ChatRequest) int {
			return 15591
		},
		Script: fakeollama.Queue(fakeollama.Reply{Content: "14"}),
	})
	b := newBackend(t, srv, Config{NumCtx: 16384})
	_, err := b.Chat(context.Background(), &backend.Request{Model: "synth-tools", Messages: []backend.Message{{Role: "user", Content: "hi"}}, Tools: tools(64)})
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindContextTruncated {
		t.Fatalf("Chat error = %v; want context_truncated", err)
	}
	for _, want := range []string{"needs more than 4,096 tokens", "num_ctx is 16384, which Ollama caps at the model's own context of 4,096", "offer fewer tools"} {
		if !strings.Contains(be.Msg, want) {
			t.Errorf("message %q lacks %q", be.Msg, want)
		}
	}
}

// TestRealOllamaTruncation runs against a real Ollama when OLLAMA_URL is
// set (../shared/real-ollama's up.sh starts one with the synth-tools
// model; OLLAMA_TOOL_MODEL names another): 64 tools at num_ctx 512 are
// cut, and Chat and MeasurePrompt say so.
func TestRealOllamaTruncation(t *testing.T) {
	url := os.Getenv("OLLAMA_URL")
	if url == "" {
		t.Skip("OLLAMA_URL is not set")
	}
	model := os.Getenv("OLLAMA_TOOL_MODEL")
	if model == "" {
		model = "synth-tools"
	}
	b, err := New(Config{Host: url, NumCtx: 512})
	if err != nil {
		t.Fatal(err)
	}
	many := tools(64)
	for i := range many {
		many[i].Description = strings.Repeat("Looks something up in a large catalog of records. ", 4)
		many[i].InputSchema = []byte(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for"},"limit":{"type":"integer"}},"required":["query"]}`)
	}
	req := &backend.Request{Model: model, Messages: []backend.Message{{Role: "user", Content: "What is 2 + 3 * 4?"}}, Tools: many}
	_, err = b.Chat(context.Background(), req)
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindContextTruncated {
		t.Fatalf("Chat error = %v; want context_truncated", err)
	}
	t.Log(be.Msg)
	f, err := b.MeasurePrompt(context.Background(), req)
	if err != nil || !f.Cut() || f.Tokens != 512 {
		t.Fatalf("MeasurePrompt = %+v, %v; want cut at 512", f, err)
	}
	req.Tools = many[:1]
	b2, _ := New(Config{Host: url, NumCtx: 2048})
	if f, err := b2.MeasurePrompt(context.Background(), req); err != nil || f.Cut() {
		t.Errorf("one tool at num_ctx 2048: %+v, %v; want it to fit", f, err)
	}
}

// TestChatCapturedRefusal serves Ollama 0.17.4's replies to a
// conversation of 2,120 prompt tokens at num_ctx 500: asked with truncate
// false it refuses (a 400), which is context_truncated with the size
// measured at larger contexts; asked without, it would have dropped the
// oldest messages and answered a 127-token prompt, which nothing in the
// reply shows to be cut. Chat always asks with truncate false.
func TestChatCapturedRefusal(t *testing.T) {
	t.Parallel()
	replies := capturedReplies(t, "truncation-messages.txt")
	full := captured(t, replies, "# POST /api/chat, num_ctx 4096: fits")
	dropped := captured(t, replies, "# same, num_ctx 500: the oldest messages dropped")
	refused := captured(t, replies, "# same, num_ctx 500, truncate false")
	ps := captured(t, replies, "# GET /api/ps")
	var unasked atomic.Int64 // chat requests without truncate false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch r.URL.Path {
		case "/api/chat":
			var req api.ChatRequest
			json.NewDecoder(r.Body).Decode(&req)
			n, _ := req.Options["num_ctx"].(float64)
			switch {
			case n >= 4096:
				w.Write([]byte(full + "\n"))
			case req.Truncate == nil || *req.Truncate:
				unasked.Add(1)
				w.Write([]byte(dropped + "\n"))
			default:
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(refused))
			}
		case "/api/ps":
			w.Write([]byte(ps))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	b, err := New(Config{Host: srv.URL, NumCtx: 500})
	if err != nil {
		t.Fatal(err)
	}
	conv := []backend.Message{
		{Role: "system", Content: "You play a user who wants 2 + 3 * 4."},
		{Role: "assistant", Content: strings.Repeat("What is 2 + 3 * 4? ", 60)},
		{Role: "user", Content: "The result is 14."}, {Role: "assistant", Content: "Are you sure?"}, {Role: "user", Content: "The result is 14."},
	}
	_, err = b.Chat(context.Background(), &backend.Request{Model: "synth-tools", Messages: conv})
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindContextTruncated || be.Retryable {
		t.Fatalf("Chat error = %v; want a context_truncated error, not retryable", err)
	}
	for _, want := range []string{"the prompt needs 2,120 tokens, more than its context (num_ctx is 500)", "refused it", "set backend.ollama.num_ctx to at least 4096"} {
		if !strings.Contains(be.Msg, want) {
			t.Errorf("message %q lacks %q", be.Msg, want)
		}
	}
	if n := unasked.Load(); n != 0 {
		t.Errorf("%d chat requests left Ollama free to drop messages (no truncate false)", n)
	}
}

// TestChatReplyFillsContext: a prompt that fits but whose reply fills the
// context is context_truncated: a server asked not to shift (shift
// false, as Chat always asks) ends the reply there with done reason
// "length"; one that ignores shift goes on past the context, having
// dropped part of the prompt, which its counts show.
func TestChatReplyFillsContext(t *testing.T) {
	t.Parallel()
	fake := fakeollama.Start(t, fakeollama.Options{Context: 4096, PromptTokens: func(*api.ChatRequest) int { return 300 },
		Script: func(*api.ChatRequest) fakeollama.Reply {
			return fakeollama.Reply{Content: "a long answer", EvalTokens: 400}
		}})
	var shifted atomic.Bool
	ignores := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			http.NotFound(w, r)
			return
		}
		var req api.ChatRequest
		json.NewDecoder(r.Body).Decode(&req)
		shifted.Store(req.Shift != nil && !*req.Shift)
		w.Write([]byte(`{"model":"m","message":{"role":"assistant","content":"a long answer"},"done":true,"done_reason":"stop","prompt_eval_count":300,"eval_count":400}` + "\n"))
	}))
	t.Cleanup(ignores.Close)
	req := &backend.Request{Model: fakeollama.DefaultModel, Messages: []backend.Message{{Role: "user", Content: "Tell me everything."}}}
	for _, tt := range []struct {
		name, host, want string
	}{
		{"stops", fake.URL, "the prompt (300 tokens) and the reply (213 so far) filled the context (num_ctx is 512); Ollama would drop part of the prompt to go on without saying so, and stopped the reply as asked"},
		{"shifts anyway", ignores.URL, "the prompt (300 tokens) and the reply (400 so far) filled the context (num_ctx is 512); the server went on past it"},
	} {
		b, err := New(Config{Host: tt.host, NumCtx: 512})
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Chat(context.Background(), req)
		var be *backend.Error
		if !errors.As(err, &be) || be.Kind != backend.KindContextTruncated || be.Retryable {
			t.Fatalf("%s: Chat error = %v; want context_truncated", tt.name, err)
		}
		if !strings.Contains(be.Msg, tt.want) || !strings.Contains(be.Msg, "set backend.ollama.num_ctx to at least 2048") {
			t.Errorf("%s: message %q; want %q and the num_ctx to set", tt.name, be.Msg, tt.want)
		}
	}
	if !shifted.Load() {
		t.Error("Chat did not ask the server not to shift (shift false)")
	}
	b, _ := New(Config{Host: fake.URL, NumCtx: 1024})
	if resp, err := b.Chat(context.Background(), req); err != nil || resp.TokensOut != 400 {
		t.Errorf("at num_ctx 1024: %+v, %v; want the whole reply", resp, err)
	}
}

// TestChatNumPredictAtContext: a reply that num_predict stops (done
// reason "length") just as prompt and reply reach the context is not
// context_truncated: Ollama stops a reply at the context one token over
// it (TestChatReplyFillsContext), so this one was not cut.
func TestChatNumPredictAtContext(t *testing.T) {
	t.Parallel()
	fake := fakeollama.Start(t, fakeollama.Options{Context: 4096, PromptTokens: func(*api.ChatRequest) int { return 300 },
		Script: func(*api.ChatRequest) fakeollama.Reply {
			return fakeollama.Reply{Content: "a long answer", EvalTokens: 212, DoneReason: "length"}
		}})
	b, err := New(Config{Host: fake.URL, NumCtx: 512})
	if err != nil {
		t.Fatal(err)
	}
	req := &backend.Request{Model: fakeollama.DefaultModel, Messages: []backend.Message{{Role: "user", Content: "Tell me everything."}}}
	resp, err := b.Chat(context.Background(), req)
	if err != nil || resp.TokensIn+resp.TokensOut != 512 || resp.DoneReason != "length" {
		t.Errorf("Chat = %+v, %v; want the reply num_predict stopped at 512 tokens in all", resp, err)
	}
}

// TestChatReplyFillsGuessedContext: without num_ctx, and with the model
// not in /api/ps (unloaded once it answered, keep_alive 0), the context
// is the model's own capped at ollamactx.DefaultContext, a guess; a reply
// Ollama stopped there (one token over it, done reason "length") is
// context_truncated all the same.
func TestChatReplyFillsGuessedContext(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/chat":
			w.Write([]byte(`{"model":"m","message":{"role":"assistant","content":"a long answer"},"done":true,"done_reason":"length","prompt_eval_count":4000,"eval_count":97}` + "\n"))
		case "/api/ps":
			w.Write([]byte(`{"models":[]}`))
		case "/api/show":
			w.Write([]byte(`{"model_info":{"general.architecture":"llama","llama.context_length":32768}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	b, err := New(Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Chat(context.Background(), &backend.Request{Model: "m", Messages: []backend.Message{{Role: "user", Content: "Tell me everything."}}})
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindContextTruncated || !strings.Contains(be.Msg, "Ollama gives m a context of 4,096") {
		t.Errorf("Chat error = %v; want context_truncated at the guessed context of 4,096", err)
	}
}
