package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolward/toolward/fixtures/fakes/hostilemcp"
)

// TestEvilToolNames: tool names holding ESC, NUL, U+202E or a newline
// are printed by tools and init as visible escapes, never raw; a
// 10,000-character name gets a short case file name, so init writes the
// whole suite. Before, init printed them raw and failed with
// ENAMETOOLONG after writing part of the suite, and tools printed U+202E
// and newlines raw.
func TestEvilToolNames(t *testing.T) {
	hs := httptest.NewServer(hostilemcp.Handler("evilnames"))
	defer hs.Close()
	raw := func(t *testing.T, out string) {
		t.Helper()
		for _, c := range []string{"\x1b", "\x00", "\u202e", "two\nlines"} {
			if strings.Contains(out, c) {
				t.Errorf("output holds %q raw:\n%.2000s", c, out)
			}
		}
	}
	var stdout, stderr strings.Builder
	if code := runTools([]string{"--url", hs.URL}, &stdout, &stderr); code != 0 {
		t.Fatalf("tools: exit %d: %s", code, stderr.String())
	}
	raw(t, stdout.String()+stderr.String())
	if !strings.Contains(stdout.String(), `\u202egnp.exe`) || !strings.Contains(stdout.String(), `two\nlines`) {
		t.Errorf("tools does not show the escapes:\n%.3000s", stdout.String())
	}

	dir := filepath.Join(t.TempDir(), "suite")
	stdout.Reset()
	stderr.Reset()
	if code := runInit([]string{"--url", hs.URL, dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr.String())
	}
	raw(t, stdout.String()+stderr.String())
	ents, err := os.ReadDir(filepath.Join(dir, "cases"))
	if err != nil {
		t.Fatal(err)
	}
	long := false
	for _, e := range ents {
		if len(e.Name()) > 80 {
			t.Errorf("case file name of %d bytes", len(e.Name()))
		}
		long = long || strings.HasPrefix(e.Name(), "nnnn")
	}
	if !long || len(ents) != 2 {
		t.Errorf("cases %v, want echo and the long name's", ents)
	}
}
