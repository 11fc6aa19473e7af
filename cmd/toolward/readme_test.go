package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/runconfig"
)

// The README's examples are checked here, so the documentation cannot drift
// from the binary: its set-up commands, its example case, config and
// cassette.

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fences returns the README's fenced code blocks of the given language.
func fences(doc, lang string) []string {
	re := regexp.MustCompile("(?ms)^```" + lang + "\n(.*?)^```")
	var out []string
	for _, m := range re.FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestReadmeSetupCommands: the README opens with exactly two commands, the
// main job and the tests, and CI runs that same test command.
func TestReadmeSetupCommands(t *testing.T) {
	sh := fences(readme(t), "sh")
	if len(sh) == 0 {
		t.Fatal("README has no sh block")
	}
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(sh[0]), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	want := []string{"go run ./cmd/toolward run configs/demo.cue", "go vet ./... && go test -race ./..."}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Fatalf("README's first commands = %q, want %q", cmds, want)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "\n"+want[1]+"\n") {
		t.Errorf(".ci/run does not run the README's test command %q", want[1])
	}
}

// TestReadmeCase: the example case is valid and its golden passes.
func TestReadmeCase(t *testing.T) {
	var src string
	for _, b := range fences(readme(t), "yaml") {
		if strings.Contains(b, "\nid: ") {
			src = b
			break
		}
	}
	if src == "" {
		t.Fatal("README has no example case")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "example.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs := runconfig.CheckWith([]string{path}, runconfig.Options{}); len(errs) > 0 {
		t.Fatalf("README's example case: %v", errs)
	}
}

// TestReadmeConfig: the example config loads (from the repository root,
// where its case glob resolves).
func TestReadmeConfig(t *testing.T) {
	blocks := fences(readme(t), "cue")
	if len(blocks) == 0 {
		t.Fatal("README has no cue block")
	}
	path := filepath.Join(t.TempDir(), "example.cue")
	if err := os.WriteFile(path, []byte(blocks[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir("../..")
	if _, err := runconfig.Load(path); err != nil {
		t.Fatalf("README's example config: %v", err)
	}
}

// TestReadmeCassette: the example cassette parses.
func TestReadmeCassette(t *testing.T) {
	for _, b := range fences(readme(t), "yaml") {
		if strings.HasPrefix(b, "case: ") {
			if _, errs := schema.ParseCassettes("README.md", []byte(b)); len(errs) > 0 {
				t.Fatalf("README's example cassette: %v", errs)
			}
			return
		}
	}
	t.Fatal("README has no example cassette")
}
