package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRescoredHeader: a directory written by `toolward score` says in
// the header of report.md and report.html, and in summary.json, which
// directory its verdicts were re-judged from and when, with the path
// escaped for each format. Before, scored_from was in config.json only.
func TestRescoredHeader(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/basic/" + RunsFile)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, RunsFile), src, 0o644)
	from := "results/x`<b>&amp;|/20261201T100000Z"
	cfg := `{"config": {"name": "x"}, "created": "2026-12-01T10:30:00Z", "scored_from": "results/x` + "`" + `<b>&amp;|/20261201T100000Z"}`
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Rescored; r == nil || r.From != from || r.At.Format("15:04") != "10:30" {
		t.Fatalf("Rescored = %+v", r)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if md := read("report.md"); !strings.Contains(md, "re-scored from `results/x'<b>&amp;\\|/20261201T100000Z` on 2026-12-01 10:30:00Z") {
		t.Errorf("report.md header lacks the origin:\n%s", head(md))
	}
	if h := read("report.html"); !strings.Contains(h, `<span id="rescored">re-scored from results/x`+"`"+`&lt;b&gt;&amp;amp;|/20261201T100000Z on 2026-12-01 10:30:00Z</span>`) {
		t.Errorf("report.html header lacks the origin:\n%s", h[strings.Index(h, "<header"):][:600])
	}
	if j := read("summary.json"); !strings.Contains(j, `"rescored": {`) {
		t.Errorf("summary.json lacks rescored")
	}
}

func head(s string) string {
	if i := strings.Index(s, "\n## "); i > 0 {
		return s[:i]
	}
	return s
}
