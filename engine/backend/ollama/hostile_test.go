package ollama

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/fixtures/fakes/hostilemodel"
)

// TestHostileModelStreams: a stream cut by what no model writes (a
// field padded without end, blank lines or spaces without end, bytes
// that are not JSON) is an infrastructure error, read within bounds;
// before, it ended as a reply cut at reply_limit (scored as the model's
// failure) or was read until the run timeout. A line with 100,000 tool
// calls is the model writing too much: cut at reply_limit, keeping the
// calls that fit (before, none: "echo was never called").
func TestHostileModelStreams(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"padfield", "blanklines", "spaces", "garbage", "manycalls"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			hm := &hostilemodel.Server{Mode: mode}
			hs := httptest.NewServer(hm.Ollama())
			t.Cleanup(hs.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := hostBackend(t, hs.URL, Config{MaxReplyBytes: 64 << 10}).Chat(ctx, simpleRequest())
			if mode == "manycalls" {
				if err != nil {
					t.Fatal(err)
				}
				if resp.DoneReason != DoneReplyLimit || len(resp.Message.ToolCalls) == 0 || resp.Message.ToolCalls[0].Name != "echo" {
					t.Fatalf("done %q, %d calls", resp.DoneReason, len(resp.Message.ToolCalls))
				}
				return
			}
			be := wantKind(t, err, backend.KindUnavailable, true)
			t.Log(be)
			if n := hm.Written.Load(); n > 32<<20 {
				t.Fatalf("the server wrote %d bytes before the client stopped reading", n)
			}
		})
	}
}
