package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
)

// transcript is one captured reply of a real Ollama (testdata/wire).
type transcript struct {
	status      int
	contentType string
	body        string
}

// readTranscript parses the "### response (curl -i)" part of a capture.
func readTranscript(t *testing.T, name string) transcript {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "wire", name))
	if err != nil {
		t.Fatal(err)
	}
	_, resp, ok := strings.Cut(string(raw), "### response (curl -i)\n")
	if !ok {
		t.Fatalf("%s: no response section", name)
	}
	head, body, _ := strings.Cut(resp, "\r\n\r\n") // curl -i: CRLF headers, then the body
	lines := strings.Split(head, "\r\n")
	var tr transcript
	if f := strings.Fields(lines[0]); len(f) < 2 {
		t.Fatalf("%s: status line %q", name, lines[0])
	} else if tr.status, err = strconv.Atoi(f[1]); err != nil {
		t.Fatalf("%s: status line %q", name, lines[0])
	}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ": "); ok && strings.EqualFold(k, "Content-Type") {
			tr.contentType = v
		}
	}
	tr.body = body
	return tr
}

// serve answers every /api/chat with h; the server closes when the test
// ends.
func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func serveTranscript(t *testing.T, tr transcript) *httptest.Server {
	return serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", tr.contentType)
		w.WriteHeader(tr.status)
		io.WriteString(w, tr.body)
	})
}

func hostBackend(t *testing.T, host string, cfg Config) *Backend {
	t.Helper()
	cfg.Host = host
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestChatWireTranscripts reads the replies of a real Ollama, byte for
// byte as captured.
func TestChatWireTranscripts(t *testing.T) {
	t.Run("tool call", func(t *testing.T) {
		srv := serveTranscript(t, readTranscript(t, "chat-stream-turn1.txt"))
		resp, err := hostBackend(t, srv.URL, Config{}).Chat(context.Background(), simpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		if c := resp.Message.ToolCalls; len(c) != 1 || c[0].Name != "calculate" || string(c[0].Arguments) != `{"expression":"2 + 3 * 4"}` {
			t.Errorf("tool calls = %+v", c)
		}
		if resp.TokensIn != 311 || resp.TokensOut != 2 || resp.DoneReason != "stop" || resp.Message.Content != "" {
			t.Errorf("reply = %+v", resp)
		}
	})
	t.Run("answer", func(t *testing.T) {
		srv := serveTranscript(t, readTranscript(t, "chat-stream-turn2.txt"))
		resp, err := hostBackend(t, srv.URL, Config{}).Chat(context.Background(), simpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Message.Content != "The result is 14." || len(resp.Message.ToolCalls) != 0 || resp.TokensIn != 335 {
			t.Errorf("reply = %+v", resp)
		}
	})
	t.Run("missing model", func(t *testing.T) {
		srv := serveTranscript(t, readTranscript(t, "chat-missing-model.txt"))
		req := simpleRequest()
		req.Model = "nope:1b"
		_, err := hostBackend(t, srv.URL, Config{}).Chat(context.Background(), req)
		be := wantKind(t, err, backend.KindModelMissing, false)
		if !strings.Contains(be.Error(), "ollama pull nope:1b") {
			t.Errorf("error %q", be)
		}
	})
	t.Run("cannot think", func(t *testing.T) {
		srv := serveTranscript(t, readTranscript(t, "chat-think-unsupported.txt"))
		_, err := hostBackend(t, srv.URL, Config{Think: true}).Chat(context.Background(), simpleRequest())
		be := wantKind(t, err, backend.KindBadRequest, false)
		if !strings.Contains(be.Error(), `400 Bad Request: "synth-tools" does not support thinking`) {
			t.Errorf("error %q", be)
		}
	})
}

// TestChatErrorReplies covers error replies the api package's client
// would map poorly: bodies that are not JSON, empty bodies, 401, and a
// stream line that is not JSON.
func TestChatErrorReplies(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		kind        string
		retryable   bool
		msg         string
	}{
		{name: "proxy HTML", status: 502, contentType: "text/html", body: "<html><body>upstream down</body></html>\n", kind: backend.KindUnavailable, retryable: true, msg: "502 Bad Gateway: <html><body>upstream down</body></html>"},
		{name: "empty 503", status: 503, kind: backend.KindUnavailable, retryable: true, msg: "503 Service Unavailable"},
		{name: "empty 400", status: 400, kind: backend.KindBadRequest, msg: "400 Bad Request"},
		{name: "401", status: 401, contentType: "application/json", body: `{"error":"unauthorized","signin_url":"https://ollama.com/connect"}`, kind: backend.KindBadRequest, msg: "not authorized"},
		{name: "429", status: 429, contentType: "application/json", body: `{"error":"too many requests"}`, kind: backend.KindThrottled, retryable: true, msg: "too many requests"},
		{name: "garbled line", status: 200, contentType: "application/x-ndjson", body: "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"done\":false}\nnot json at all\n", kind: backend.KindUnavailable, retryable: true, msg: "garbled reply: garbled line not json at all"},
		{name: "no final chunk", status: 200, contentType: "application/x-ndjson", body: "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"done\":false}\n", kind: backend.KindUnavailable, retryable: true, msg: "stream ended before the final chunk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveTranscript(t, transcript{status: tt.status, contentType: tt.contentType, body: tt.body})
			_, err := hostBackend(t, srv.URL, Config{}).Chat(context.Background(), simpleRequest())
			be := wantKind(t, err, tt.kind, tt.retryable)
			if !strings.Contains(be.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", be, tt.msg)
			}
		})
	}
}

// TestChatErrorBodyBounded: an error reply is read only up to
// maxErrorBody.
func TestChatErrorBodyBounded(t *testing.T) {
	srv := serveTranscript(t, transcript{status: 500, contentType: "text/plain", body: strings.Repeat("x", 4*maxErrorBody)})
	_, err := hostBackend(t, srv.URL, Config{}).Chat(context.Background(), simpleRequest())
	be := wantKind(t, err, backend.KindUnavailable, true)
	if n := strings.Count(be.Error(), "x"); n > maxErrorBody {
		t.Errorf("error holds %d bytes of the body, want at most %d", n, maxErrorBody)
	}
}

// TestChatReplyLimit: a reply longer than MaxReplyBytes is cut there, as
// a reply (not an error) whose DoneReason says so.
func TestChatReplyLimit(t *testing.T) {
	tests := []struct {
		name      string
		limit     int
		reply     fakeollama.Reply
		content   string
		thinking  string
		calls     []backend.ToolCall
		done      string
		tokensOut int
	}{
		{name: "content over many chunks", limit: 10, reply: fakeollama.Reply{Content: "0123456789abcdef", Chunks: 8},
			content: "0123456789", done: DoneReplyLimit},
		{name: "thinking counts", limit: 10, reply: fakeollama.Reply{Thinking: "hmm, hmm", Content: "0123456789", Chunks: 1},
			thinking: "hmm, hmm", content: "01", done: DoneReplyLimit},
		{name: "arguments cut", limit: 20, reply: fakeollama.Reply{ToolCalls: []fakeollama.ToolCall{{Name: "calculate", Args: `{"expression":"6*7"}`}}},
			calls: []backend.ToolCall{{Name: "calculate", Arguments: []byte(`{"expressio`)}}, done: DoneReplyLimit},
		{name: "cut on a rune boundary", limit: 9, reply: fakeollama.Reply{Content: "12345678é9", Chunks: 1},
			content: "12345678", done: DoneReplyLimit},
		{name: "no call past the cut", limit: 5, reply: fakeollama.Reply{Content: "0123456789", Chunks: 1, ToolCalls: []fakeollama.ToolCall{{Name: "calculate"}}},
			content: "01234", done: DoneReplyLimit},
		{name: "exactly the limit", limit: 10, reply: fakeollama.Reply{Content: "0123456789", Chunks: 2, EvalTokens: 3},
			content: "0123456789", done: "stop", tokensOut: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeollama.Start(t, fakeollama.Options{Script: fakeollama.Queue(tt.reply)})
			resp, err := newBackend(t, srv, Config{MaxReplyBytes: tt.limit}).Chat(context.Background(), simpleRequest())
			if err != nil {
				t.Fatal(err)
			}
			m := resp.Message
			if m.Content != tt.content || m.Thinking != tt.thinking || resp.DoneReason != tt.done || resp.TokensOut != tt.tokensOut {
				t.Errorf("content %q thinking %q done %q tokens %d, want %q %q %q %d", m.Content, m.Thinking, resp.DoneReason, resp.TokensOut, tt.content, tt.thinking, tt.done, tt.tokensOut)
			}
			if len(m.ToolCalls) != len(tt.calls) {
				t.Fatalf("calls = %+v", m.ToolCalls)
			}
			for i, c := range tt.calls {
				if m.ToolCalls[i].Name != c.Name || string(m.ToolCalls[i].Arguments) != string(c.Arguments) {
					t.Errorf("call %d = %s %s, want %s %s", i, m.ToolCalls[i].Name, m.ToolCalls[i].Arguments, c.Name, c.Arguments)
				}
			}
		})
	}
}

// TestChatHugeLine: one stream line far longer than the reply may be is
// not read whole; the reply is cut before it, and the backend keeps
// working.
func TestChatHugeLine(t *testing.T) {
	huge := strings.Repeat("y", 8<<20)
	var n int
	var mu sync.Mutex
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"model":"m","message":{"role":"assistant","content":"start "},"done":false}`+"\n")
		if first {
			io.WriteString(w, `{"model":"m","message":{"role":"assistant","content":"`+huge+`"},"done":false}`+"\n")
		}
		io.WriteString(w, `{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":2}`+"\n")
	})
	b := hostBackend(t, srv.URL, Config{MaxReplyBytes: 1000})
	resp, err := b.Chat(context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "start " || resp.DoneReason != DoneReplyLimit {
		t.Errorf("content %.40q done %q", resp.Message.Content, resp.DoneReason)
	}
	resp, err = b.Chat(context.Background(), simpleRequest())
	if err != nil || resp.Message.Content != "start " || resp.DoneReason != "stop" {
		t.Fatalf("second request: %+v %v", resp, err)
	}
}

// TestLineReaderBounded: a line longer than the limit costs at most the
// limit and one read buffer of memory.
func TestLineReaderBounded(t *testing.T) {
	const limit = 100 << 10
	in := io.MultiReader(strings.NewReader("short\n"), strings.NewReader(strings.Repeat("z", 10<<20)+"\nafter\n"))
	lr := getLineReader(in)
	defer putLineReader(lr)
	if l, err := lr.next(limit); err != nil || string(l) != "short" {
		t.Fatalf("first line %q %v", l, err)
	}
	if _, err := lr.next(limit); !errors.Is(err, backend.ErrCut) {
		t.Fatalf("long line: error %v, want backend.ErrCut", err)
	}
	if c := cap(lr.lines.Partial()); c > 2*(limit+readBufSize) {
		t.Errorf("long-line buffer grew to %d bytes for a limit of %d", c, limit)
	}
}

// TestLineReaderLines: line endings, a last line without one, a line
// longer than the read buffer.
func TestLineReaderLines(t *testing.T) {
	long := strings.Repeat("L", 3*readBufSize)
	lr := getLineReader(strings.NewReader("a\r\n\nb\n" + long + "\nlast"))
	defer putLineReader(lr)
	var got []string
	for {
		l, err := lr.next(1 << 20)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(l))
	}
	want := []string{"a", "", "b", long, "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %.60q", got)
	}
}

// eofBody records whether the reply body was read to its end before it
// was closed: only then can the transport reuse the connection.
type eofBody struct {
	io.ReadCloser
	eof *bool
}

func (b eofBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		*b.eof = true
	}
	return n, err
}

type recordingTransport struct {
	eof *bool
}

func (rt recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = eofBody{resp.Body, rt.eof}
	}
	return resp, err
}

// TestChatReadsStreamToEnd: a reply is read to EOF, so its connection
// goes back to the pool; the default client keeps enough idle
// connections for many runs in flight.
func TestChatReadsStreamToEnd(t *testing.T) {
	srv := serveTranscript(t, readTranscript(t, "chat-stream-turn2.txt"))
	var eof bool
	b := hostBackend(t, srv.URL, Config{HTTPClient: &http.Client{Transport: recordingTransport{&eof}}})
	if _, err := b.Chat(context.Background(), simpleRequest()); err != nil {
		t.Fatal(err)
	}
	if !eof {
		t.Error("the reply body was closed before its end: the connection cannot be reused")
	}
	def := hostBackend(t, srv.URL, Config{})
	if tr, ok := def.http.Transport.(*http.Transport); !ok || tr.MaxIdleConnsPerHost < 64 {
		t.Errorf("default transport keeps %d idle connections per host, want 64 or more", tr.MaxIdleConnsPerHost)
	}
}

// TestChatAllocatesLittle guards against allocating per request what a
// request does not need (the api package's client allocates an 8 MiB
// scan buffer per chat). The bound counts the in-process fake server's
// allocations too.
func TestChatAllocatesLittle(t *testing.T) {
	srv := fakeollama.Start(t, fakeollama.Options{Script: func(*api.ChatRequest) fakeollama.Reply {
		return fakeollama.Reply{Content: "The total is $84,960.", ToolCalls: []fakeollama.ToolCall{{Name: "calculate", Args: `{"expression":"708000 * 0.12"}`}}}
	}})
	b := newBackend(t, srv, Config{})
	req := simpleRequest()
	if _, err := b.Chat(context.Background(), req); err != nil { // warm up: pools, connection
		t.Fatal(err)
	}
	const n = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if _, err := b.Chat(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 256<<10 {
		t.Errorf("%d bytes allocated per chat request, want well under 256 KiB", per)
	}
}

func TestNewRejectsNegativeReplyLimit(t *testing.T) {
	if _, err := New(Config{MaxReplyBytes: -1}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("New accepted MaxReplyBytes -1: %v", err)
	}
}

// TestChatConcurrentReplies: concurrent chats share the pooled readers
// but never each other's replies.
func TestChatConcurrentReplies(t *testing.T) {
	srv := fakeollama.Start(t, fakeollama.Options{Script: func(req *api.ChatRequest) fakeollama.Reply {
		q := req.Messages[0].Content
		return fakeollama.Reply{Content: "answer to " + q + strings.Repeat(".", 2*readBufSize), Chunks: 4,
			ToolCalls: []fakeollama.ToolCall{{Name: "echo", Args: `{"q":"` + q + `"}`}}}
	}})
	b := newBackend(t, srv, Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				q := strconv.Itoa(g*1000 + i)
				req := simpleRequest()
				req.Messages = []backend.Message{{Role: "user", Content: q}}
				resp, err := b.Chat(context.Background(), req)
				if err != nil {
					errs <- err
					return
				}
				m := resp.Message
				if !strings.HasPrefix(m.Content, "answer to "+q+".") || len(m.Content) != len("answer to "+q)+2*readBufSize ||
					len(m.ToolCalls) != 1 || string(m.ToolCalls[0].Arguments) != `{"q":"`+q+`"}` {
					errs <- fmt.Errorf("request %s got another reply: %.30q, calls %s", q, m.Content, m.ToolCalls)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestEncodeChatAsAPIClient: the body sent has the members, byte for
// byte, that the api package's client would send (tools come from the
// memo, spliced in last).
func TestEncodeChatAsAPIClient(t *testing.T) {
	b := hostBackend(t, "http://127.0.0.1:1", Config{NumCtx: 2048, KeepAlive: "1m"})
	req := simpleRequest()
	req.Messages = append(req.Messages, backend.Message{Role: "assistant", ToolCalls: []backend.ToolCall{{Name: "calculate", Arguments: []byte(`{"expression":"6*7","z":{"b":1,"a":2}}`)}}},
		backend.Message{Role: "tool", ToolName: "calculate", Content: "42"})
	for _, tools := range [][]backend.Tool{nil, {
		{Name: "calculate", Description: "Evaluate <arithmetic> & more.", InputSchema: []byte(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`)},
		{Name: "search", Description: "Search.", InputSchema: []byte(`{"type":"object","properties":{"q":{"type":"string","enum":["a","b"]},"n":{"type":["integer","null"]}}}`)},
	}} {
		req.Tools = tools
		creq, encs, err := b.request(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeChat(creq, encs)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(creq)
		if err != nil {
			t.Fatal(err)
		}
		var g, w map[string]json.RawMessage
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("body %s: %v", got, err)
		}
		json.Unmarshal(want, &w)
		if len(g) != len(w) {
			t.Errorf("%d tools: members %d, want %d:\n%s\n%s", len(tools), len(g), len(w), got, want)
		}
		for k, wv := range w {
			if string(g[k]) != string(wv) {
				t.Errorf("%d tools: %s = %s, want %s", len(tools), k, g[k], wv)
			}
		}
	}
}

// streamLines answers every chat with lines, one flush each, and then
// keeps the reply open until the client goes or the test ends when open
// is set.
func streamLines(t *testing.T, open bool, lines ...string) (*httptest.Server, *int) {
	t.Helper()
	var mu sync.Mutex
	conns := 0
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, l := range lines {
			io.WriteString(w, l+"\n")
			w.(http.Flusher).Flush()
		}
		if open {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: handlers return, Close does not wait
	return srv, &conns
}

const (
	lineHi   = `{"model":"m","message":{"role":"assistant","content":"Hi"},"done":false}`
	lineDone = `{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":2}`
)

// TestChatStopsAtDone: a server that keeps the reply open after its final
// chunk (done: true) does not hold the turn until the run's timeout: the
// reply is complete at done. The deadline only keeps a regression from
// hanging the test.
func TestChatStopsAtDone(t *testing.T) {
	srv, _ := streamLines(t, true, lineHi, lineDone)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := hostBackend(t, srv.URL, Config{}).Chat(ctx, simpleRequest())
	if err != nil {
		t.Fatalf("a reply kept open after done: %v", err)
	}
	if resp.Message.Content != "Hi" || resp.DoneReason != "stop" || resp.TokensOut != 2 {
		t.Errorf("reply %+v", resp)
	}
	if ctx.Err() != nil {
		t.Error("Chat returned only at the deadline")
	}
}

// TestChatReusesConnectionAfterDone: stopping at done still reads the
// stream's end when the server sends it, so the connection is reused.
func TestChatReusesConnectionAfterDone(t *testing.T) {
	srv, conns := streamLines(t, false, lineHi, lineDone)
	b := hostBackend(t, srv.URL, Config{})
	for i := range 3 {
		if resp, err := b.Chat(context.Background(), simpleRequest()); err != nil || resp.Message.Content != "Hi" {
			t.Fatalf("chat %d: %+v %v", i, resp, err)
		}
	}
	if *conns != 1 {
		t.Errorf("3 chats opened %d connections, want 1", *conns)
	}
}

// TestChatCallsBounded: a reply with more tool calls than MaxReplyCalls
// keeps the first MaxReplyCalls and is cut there.
func TestChatCallsBounded(t *testing.T) {
	var calls strings.Builder
	for i := range MaxReplyCalls + 500 {
		if i > 0 {
			calls.WriteByte(',')
		}
		calls.WriteString(`{"function":{"name":"c","arguments":{}}}`)
	}
	srv, _ := streamLines(t, false,
		`{"model":"m","message":{"role":"assistant","content":"","tool_calls":[`+calls.String()+`]},"done":false}`, lineDone)
	resp, err := hostBackend(t, srv.URL, Config{}).Chat(context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != MaxReplyCalls || resp.DoneReason != DoneReplyLimit {
		t.Errorf("%d calls, done %q; want %d, %q", len(resp.Message.ToolCalls), resp.DoneReason, MaxReplyCalls, DoneReplyLimit)
	}
}
