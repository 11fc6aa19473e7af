package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolward/toolward/schema"
)

// listRunDirs lists the run directories under dir (in the jobs'
// directories of run directories).
func listRunDirs(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, runDirsPrefix+"*", "run-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitDirs waits until dir holds n run directories (the warm pool's
// starts are asynchronous), failing after a generous bound.
func waitDirs(t *testing.T, dir string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(listRunDirs(t, dir)) != n {
		if time.Now().After(deadline) {
			t.Fatalf("run directories %v, want %d", listRunDirs(t, dir), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWarmPool: with isolation "run", Open starts Warm processes ahead,
// each in its own seeded directory that {run_dir} names; a session takes
// one (seeded state, its writes its own), its close kills the process
// and removes the directory while the pool starts the next, and closing
// the source leaves no directory behind.
func TestWarmPool(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	seed := t.TempDir()
	os.WriteFile(filepath.Join(seed, "notes.json"), []byte(`["seeded"]`), 0o644)
	srv := selfCommand(t, "notes")
	srv.Env["NOTES_FILE"] = schema.RunDirVar + "/notes.json"
	srv.Isolation, srv.Seed = schema.IsolationRun, seed
	ctx := context.Background()
	src, err := Open(ctx, Options{Server: srv, Warm: 3})
	if err != nil {
		t.Fatal(err)
	}
	waitDirs(t, tmp, 3) // started before any run asked; the listing one is gone
	for i := range 2 {
		sess, err := src.Session(ctx, ConfirmAuto)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := sess.Call(ctx, "remember", map[string]any{"fact": "mine"}, 0); err != nil || r.IsError {
			t.Fatalf("remember: %v %+v", err, r)
		}
		r, err := sess.Call(ctx, "recall", map[string]any{}, 0)
		if err != nil || r.Text != `{"facts":["seeded","mine"]}` {
			t.Fatalf("session %d recalled %q, %v: want the seed and its own fact only", i, r.Text, err)
		}
		sess.Close()
	}
	waitDirs(t, tmp, 3) // the used ones removed, the pool full again
	src.Close()
	if left, _ := filepath.Glob(filepath.Join(tmp, "toolward-*")); len(left) != 0 {
		t.Fatalf("left behind after Close: %v", left)
	}
}
