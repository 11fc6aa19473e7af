package openai_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/openai"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
	"github.com/toolward/toolward/fixtures/fakes/hostilemodel"
)

// TestHostileModelStreams: an event stream cut by what no model writes
// (a field padded without end, one endless comment, comments, blank
// lines or lines that are not events without end, spaces) is an
// infrastructure error, read within bounds; before, it ended as a reply
// cut at reply_limit, scored as the model's failure, or was read until
// the run timeout.
func TestHostileModelStreams(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"padfield", "blanklines", "spaces", "garbage", "comment", "comments"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			hm := &hostilemodel.Server{Mode: mode}
			hs := httptest.NewServer(hm.OpenAI())
			t.Cleanup(hs.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			b := newBackend(t, openai.Config{BaseURL: hs.URL + "/v1", MaxReplyBytes: 64 << 10})
			_, err := b.Chat(ctx, &backend.Request{Model: fakeopenai.DefaultModel, Messages: []backend.Message{{Role: "user", Content: "hi"}}})
			var be *backend.Error
			if !errors.As(err, &be) || be.Kind != backend.KindUnavailable || !be.Retryable {
				t.Fatalf("err = %v, want a retryable %s error", err, backend.KindUnavailable)
			}
			t.Log(be)
			if n := hm.Written.Load(); n > 32<<20 {
				t.Fatalf("the server wrote %d bytes before the client stopped reading", n)
			}
		})
	}
}
