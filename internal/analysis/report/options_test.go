package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestOptionsAxisReport: runs of two options sets give an options
// breakdown, a paired comparison on the options axis and an options
// column in the cells table; runs of only the default set give none of
// them (and no fixed "options" line).
func TestOptionsAxisReport(t *testing.T) {
	t.Parallel()
	var rs []run
	for c := range 4 {
		for _, o := range []string{"", "deep"} {
			outcome := "pass"
			if o == "" && c > 0 {
				outcome = "fail"
			}
			rs = append(rs, run{model: "m", tools: "needed", toolCount: 1, confirm: "auto", desc: "default", options: o, seed: 1,
				kase: fmt.Sprintf("k%d", c), outcome: outcome, answer: "ok"})
		}
	}
	dir := t.TempDir()
	writeRuns(t, filepath.Join(dir, RunsFile), encode(t, rs))
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, b := range s.Breakdowns {
		if b.Axis == "options" {
			found = len(b.Values) == 2 && b.Values[0] == "default" && b.Values[1] == "deep"
		}
	}
	if !found {
		t.Errorf("no options breakdown default, deep: %+v", s.Breakdowns)
	}
	var cmp *Comparison
	for i, c := range s.Comparisons {
		if c.Axis == "options" {
			cmp = &s.Comparisons[i]
		}
	}
	if cmp == nil || cmp.A != "deep" || cmp.B != "default" || cmp.Diff.Cases != 4 || !near(cmp.Diff.Est, 0.75) {
		t.Errorf("options comparison %+v", cmp)
	}
	md, _ := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if !bytes.Contains(md, []byte("| options |")) || !bytes.Contains(md, []byte("`deep`")) {
		t.Errorf("report.md lacks the options column:\n%s", md)
	}

	// Only the default set: nothing about options anywhere.
	var plain []run
	for _, r := range rs {
		if r.options == "" {
			plain = append(plain, r)
		}
	}
	dir = t.TempDir()
	writeRuns(t, filepath.Join(dir, RunsFile), encode(t, plain))
	s, err = Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range s.Fixed {
		if f.Name == "options" {
			t.Errorf("fixed options line %+v", f)
		}
	}
	md, _ = os.ReadFile(filepath.Join(dir, MarkdownFile))
	if bytes.Contains(md, []byte("options")) {
		t.Errorf("report.md of a matrix without options mentions them:\n%s", md)
	}
}
