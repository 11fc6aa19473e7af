package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/runconfig"
)

// The README's and the docs' examples are checked here, so the
// documentation cannot drift from the binary: the README's set-up
// commands, its example case and config, the cassette example of
// docs/backends.md, the README's length and every relative link (and its
// anchor) in README.md, CONTRIBUTING.md and docs/.

// readmeMaxLines keeps the README a front door; reference text goes to docs/.
const readmeMaxLines = 500

func readme(t *testing.T) string { return doc(t, "README.md") }

// doc returns a file of the repository, by its path from the root.
func doc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", path))
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

// TestReadmeCassette: the example cassette of docs/backends.md parses.
func TestReadmeCassette(t *testing.T) {
	for _, b := range fences(doc(t, "docs/backends.md"), "yaml") {
		if strings.HasPrefix(b, "case: ") {
			if _, errs := schema.ParseCassettes("docs/backends.md", []byte(b)); len(errs) > 0 {
				t.Fatalf("docs/backends.md's example cassette: %v", errs)
			}
			return
		}
	}
	t.Fatal("docs/backends.md has no example cassette")
}

// TestReadmeLength: the README stays a front door.
func TestReadmeLength(t *testing.T) {
	if n := strings.Count(readme(t), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, over %d: move reference text into docs/", n, readmeMaxLines)
	}
}

// TestDocLinks: every relative link in README.md, CONTRIBUTING.md and
// docs/*.md names a file that exists and, with #anchor, a heading of it.
func TestDocLinks(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md", "CONTRIBUTING.md"}
	for _, p := range pages {
		files = append(files, filepath.ToSlash(strings.TrimPrefix(p, "../../")))
	}
	for _, f := range files {
		for _, target := range links(doc(t, f)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(f), path))
				if _, err := os.Stat(filepath.Join("../..", dest)); err != nil {
					t.Errorf("%s: link %q: no file %s", f, target, dest)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if !slices.Contains(anchors(doc(t, dest)), anchor) {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", f, target, dest, anchor)
			}
		}
	}
}

// TestDocsInstall: every page that shows `go install …@latest` says, in
// the same paragraph, that it works only once the module is published;
// before that only `go install ./cmd/toolward` from a clone does.
func TestDocsInstall(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md", "CONTRIBUTING.md"}
	for _, p := range pages {
		files = append(files, strings.TrimPrefix(filepath.ToSlash(p), "../../"))
	}
	for _, f := range files {
		for _, para := range strings.Split(doc(t, f), "\n\n") {
			if strings.Contains(para, "cmd/toolward@latest") && !strings.Contains(strings.Join(strings.Fields(para), " "), "once the module is published") {
				t.Errorf("%s: %q installs with @latest without saying it works only once the module is published", f, strings.TrimSpace(para))
			}
		}
	}
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// links returns the targets of a Markdown document's inline links,
// outside code fences.
func links(md string) []string {
	var out []string
	for _, line := range prose(md) {
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// anchors returns the anchors GitHub gives a document's headings: lower
// case, spaces to hyphens, punctuation other than - and _ dropped.
func anchors(md string) []string {
	var out []string
	for _, line := range prose(md) {
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !strings.HasPrefix(line, "#") || !ok {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// prose returns a Markdown document's lines outside fenced code blocks.
func prose(md string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out
}
