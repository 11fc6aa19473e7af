package diff

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/results"
)

// writeServerDir writes a result directory with no runs whose
// config.json records server (nil: none, as before servers were
// recorded).
func writeServerDir(t *testing.T, server *results.Server) string {
	t.Helper()
	dir := t.TempDir()
	if err := results.WriteMeta(dir, &results.Meta{Config: &schema.Config{Name: "x"}, Server: server}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "runs.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCompareWarnsOnDifferentTools: diff says when the two directories
// ran different tool lists, and stays quiet when they ran the same one or
// a directory predates the record.
func TestCompareWarnsOnDifferentTools(t *testing.T) {
	a := &results.Server{Name: "srv", Version: "1.0", ToolsDigest: strings.Repeat("a", 64), Tools: 3}
	b := &results.Server{Name: "srv", Version: "1.1", ToolsDigest: strings.Repeat("b", 64), Tools: 4}
	warned := func(base, nw *results.Server) string {
		r, err := Compare(writeServerDir(t, base), writeServerDir(t, nw), 0.05)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range r.Warnings {
			if strings.Contains(w, "tool lists") {
				return w
			}
		}
		return ""
	}
	want := "the two directories ran different tool lists: base srv 1.0 (3 tools, digest aaaaaaaaaaaa), new srv 1.1 (4 tools, digest bbbbbbbbbbbb)"
	if w := warned(a, b); !strings.HasPrefix(w, want) {
		t.Errorf("got %q, want it to start %q", w, want)
	}
	same := *a
	same.Version = "1.0.1"
	for _, tt := range []struct{ base, nw *results.Server }{{a, &same}, {a, nil}, {nil, b}} {
		if w := warned(tt.base, tt.nw); w != "" {
			t.Errorf("%+v vs %+v: warned %q", tt.base, tt.nw, w)
		}
	}
}
