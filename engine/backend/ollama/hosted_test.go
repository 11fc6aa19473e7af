package ollama

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
)

// hostedBackend is a backend for http://ollama.com whose connections go
// to srv, signing with a key made under a $HOME of the test's own.
func hostedBackend(t *testing.T, srv *fakeollama.Server, cfg Config) *Backend {
	t.Helper()
	home := t.TempDir()
	if err := fakeollama.WriteSigningKey(home); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("OLLAMA_AUTH", "")
	addr := strings.TrimPrefix(srv.URL, "http://")
	cfg.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	b := hostBackend(t, "http://ollama.com", cfg)
	if !b.signed {
		t.Fatal("requests to ollama.com are not signed")
	}
	return b
}

// TestHostedReadsBounded: chats with ollama.com (signed requests) are
// read as a local server's are: a line of what no model writes past the
// reply's room is an infrastructure error read within bounds, an error
// body is read up to maxErrorBody, an answer to the small requests up to
// answerLimit. Before, those requests went through the api package's
// client, which read lines of up to 8 MiB and bodies whole.
func TestHostedReadsBounded(t *testing.T) {
	const limit = 1 << 10
	long := strings.Repeat("y", 4*limit)
	srv := fakeollama.Start(t, fakeollama.Options{Hosted: true, Script: fakeollama.Queue(
		fakeollama.Reply{Content: long, Chunks: 1},
		fakeollama.Reply{Content: "hi", Padding: 2 * lineSlack},
		fakeollama.Reply{Status: http.StatusInternalServerError, Error: strings.Repeat("e", 2*maxErrorBody)},
	)})
	b := hostedBackend(t, srv, Config{MaxReplyBytes: limit})
	ctx := context.Background()
	if _, err := b.Preflight(ctx, []string{fakeollama.DefaultModel}); err != nil {
		t.Fatalf("preflight with ollama.com: %v", err)
	}

	// A model that writes too much: cut at the limit, the model's doing.
	resp, err := b.Chat(ctx, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.DoneReason != DoneReplyLimit || resp.Message.Content != long[:limit] {
		t.Errorf("long reply: done %q, %d bytes kept", resp.DoneReason, len(resp.Message.Content))
	}
	// A line padded past what the reply may hold: the server's fault.
	_, err = b.Chat(ctx, simpleRequest())
	var sf *backend.StreamFault
	if wantKind(t, err, backend.KindUnavailable, true); !errors.As(err, &sf) {
		t.Errorf("padded line: %v, want a stream fault", err)
	}
	// An error body is read up to maxErrorBody.
	_, err = b.Chat(ctx, simpleRequest())
	if be := wantKind(t, err, backend.KindUnavailable, true); len(be.Error()) > maxErrorBody+1<<10 {
		t.Errorf("error of %d bytes: the error body was read past %d", len(be.Error()), maxErrorBody)
	}

	// The small requests' answers are bounded too.
	b.answerLimit = 64
	_, err = b.Preflight(ctx, []string{fakeollama.DefaultModel})
	if be := wantKind(t, err, backend.KindUnavailable, true); !strings.Contains(be.Error(), "longer than 64 bytes") {
		t.Errorf("long answer: %v", be)
	}
}

// TestHostedUnsigned: the hosted fake refuses what is not signed, so the
// test above proves the signing; a host that is not ollama.com is not
// signed unless OLLAMA_AUTH is set, and a missing key is a clear error.
func TestHostedUnsigned(t *testing.T) {
	srv := fakeollama.Start(t, fakeollama.Options{Hosted: true})
	t.Setenv("OLLAMA_AUTH", "")
	t.Setenv("HOME", t.TempDir()) // no key
	ctx := context.Background()
	_, err := hostBackend(t, srv.URL, Config{}).Preflight(ctx, []string{fakeollama.DefaultModel})
	if be := wantKind(t, err, backend.KindBadRequest, false); !strings.Contains(be.Error(), "not authorized") {
		t.Errorf("unsigned: %v", be)
	}
	t.Setenv("OLLAMA_AUTH", "1")
	b := hostBackend(t, srv.URL, Config{})
	if !b.signed {
		t.Fatal("OLLAMA_AUTH=1: requests are not signed")
	}
	_, err = b.Preflight(ctx, []string{fakeollama.DefaultModel})
	if be := wantKind(t, err, backend.KindBadRequest, false); !strings.Contains(be.Error(), "ollama signin") {
		t.Errorf("no key: %v", be)
	}
	_, err = b.Chat(ctx, simpleRequest())
	if be := wantKind(t, err, backend.KindBadRequest, false); !strings.Contains(be.Error(), "ollama signin") {
		t.Errorf("no key, chat: %v", be)
	}
}
