package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoMatchHint: a pattern that matches nothing from the working
// directory says where it resolved from and where it would match: from
// the config's directory, or from a directory above.
func TestNoMatchHint(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "evals", "cases"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "evals", "cases", "a.yaml"), []byte("id: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(root, "evals"))
	got := NoMatchHint("evals/cases/**/*.yaml", "replay.cue")
	if !strings.Contains(got, "resolved from the working directory "+filepath.Join(root, "evals")) ||
		!strings.HasSuffix(got, "from "+root+" it matches 1 file: run toolward there (cd ..)") {
		t.Errorf("from a subdirectory: %s", got)
	}
	t.Chdir(root)
	got = NoMatchHint("cases/*.yaml", filepath.Join("evals", "replay.cue"))
	if !strings.HasSuffix(got, `from the config's directory it matches 1 file: write "evals/cases/*.yaml", or run toolward in evals`) {
		t.Errorf("relative to the config: %s", got)
	}
	if got := NoMatchHint("**/*.yaml", ""); strings.Contains(got, "it matches") {
		t.Errorf("a pattern starting with ** is not tried elsewhere: %s", got)
	}
}
