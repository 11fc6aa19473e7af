package mcpserver

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// logLines is a slog handler that passes each message on a channel, so
// a test can wait for what mcp-go's transport says it does.
type logLines chan string

func (l logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l logLines) Handle(_ context.Context, r slog.Record) error {
	select {
	case l <- r.Message:
	default:
	}
	return nil
}
func (l logLines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l logLines) WithGroup(string) slog.Handler      { return l }

// TestHTTPStreamLimitStopsClient: with DefaultMaxStreams event streams
// open, the next GET is refused in the way mcp-go's client takes as
// final (405: the server offers no stream), so it does not ask again
// every second for as long as it lives, as it did on the 503 this
// refusal used to be; its tool calls work without the stream.
func TestHTTPStreamLimitStopsClient(t *testing.T) {
	t.Parallel()
	s := fresh(t)
	var gets atomic.Int64
	h := s.HTTPHandler(HTTPOptions{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	addr := ts.Listener.Addr().String()
	id := initialize(t, ts.URL+Path)
	for i := range DefaultMaxStreams {
		if resp, _ := openStream(t, addr, id); resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d: %d", i+1, resp.StatusCode)
		}
	}

	logs := make(logLines, 64)
	trans, err := transport.NewStreamableHTTP(ts.URL+Path, transport.WithContinuousListening(), transport.WithHTTPLogger(slog.New(logs)))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(trans)
	start(t, c, mcp.ProtocolVersion20251125)
	for stopped := false; !stopped; {
		select {
		case msg := <-logs:
			switch {
			case strings.Contains(msg, "does not support listening"):
				stopped = true
			case strings.Contains(msg, "retry"):
				t.Fatalf("the client will ask for the stream again: %q", msg)
			}
		case <-time.After(hangGuard):
			t.Fatal("the client neither stopped nor retried")
		}
	}
	if n := gets.Load(); n != DefaultMaxStreams+1 {
		t.Errorf("%d GETs, want %d: the open streams and the client's one", n, DefaultMaxStreams+1)
	}
	if r := call(t, c, "calculate", map[string]any{"expression": "6*7"}); text(r) != "42" {
		t.Errorf("calculate without a stream: %s", text(r))
	}
}
