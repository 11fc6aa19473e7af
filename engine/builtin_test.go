package engine

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolward/toolward/engine/backend"
)

// countingPreflight counts the preflights and chats that reach it.
type countingPreflight struct {
	scripted
	calls atomic.Int64
}

func (c *countingPreflight) Preflight(ctx context.Context, models []string) (*backend.Info, error) {
	c.calls.Add(1)
	return &backend.Info{}, nil
}

func (c *countingPreflight) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	c.calls.Add(1)
	return c.scripted.Chat(ctx, req)
}

// TestBuiltinNotHandedIn: the engine does not build the bundled server
// itself (cmd/toolward hands it in); a builtin config without
// Options.Builtin is an error that says so, before the backend is
// contacted or a result directory made.
func TestBuiltinNotHandedIn(t *testing.T) {
	setup(t)
	be := &countingPreflight{}
	_, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: be})
	if err == nil || !strings.Contains(err.Error(), "builtin MCP server") || !strings.Contains(err.Error(), "Options.Builtin") {
		t.Fatalf("err = %v, want one naming the builtin server and Options.Builtin", err)
	}
	if n := be.calls.Load(); n != 0 {
		t.Errorf("the backend was contacted %d times", n)
	}
	if _, err := os.Stat("results"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a result directory was created: %v", err)
	}
}
