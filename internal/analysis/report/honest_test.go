package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// allOrNothingRuns: 20 cases × 10 seeds; cases 0–11 pass every seed,
// cases 12–19 fail every seed.
func allOrNothingRuns() []run {
	var rs []run
	for c := range 20 {
		for seed := 1; seed <= 10; seed++ {
			o := "pass"
			if c >= 12 {
				o = "fail"
			}
			rs = append(rs, run{model: "m", tools: "needed", toolCount: 2, confirm: "auto", desc: "default", seed: seed,
				kase: fmt.Sprintf("case-%02d", c), outcome: o, answer: "ok"})
		}
	}
	return rs
}

// TestAllOrNothingHeadline: when every case passes all its seeds or fails
// all of them, the 200 runs carry the information of 20 cases, and the
// headline interval must be as wide as 20 cases allow, not 200 runs.
//
// By hand: p = 12/20 = .6; residuals Sum − p·N are +4 (12 cases) and −6
// (8 cases) → Σ² = 12·16 + 8·36 = 480; clustered Var = 20/19 · 480/200²
// = .0126316 = p(1−p)/19, so N_eff = 19 (G − 1). Wilson at n = 19 with
// z = t_.975 on 19 df = 2.093024: center .581263, half .212882 →
// [.368381, .794146], width .425764. The naive Wilson over 200 runs is
// [.530837, .665394], width .134557: three times too narrow.
func TestAllOrNothingHeadline(t *testing.T) {
	dir := t.TempDir()
	writeRuns(t, filepath.Join(dir, RunsFile), encode(t, allOrNothingRuns()))
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	tt := s.Totals
	if tt.Interval != IntervalCluster || tt.Cases != 20 || tt.EffectiveN != 19 || math.Abs(tt.Lo-0.368381) > 2e-6 || math.Abs(tt.Hi-0.794146) > 2e-6 {
		t.Errorf("headline = %+v", tt)
	}
	if tt.Naive == nil || math.Abs(tt.Naive.Lo-0.530837) > 2e-6 || math.Abs(tt.Naive.Hi-0.665394) > 2e-6 {
		t.Errorf("naive = %+v", tt.Naive)
	}
	note := "runs of a case agree: the effective sample is about 19 independent runs from 20 cases, not 200 runs"
	if tt.ClusterNote() != note || !hasWarning(s, note) {
		t.Errorf("note %q, warnings %q", tt.ClusterNote(), s.Warnings)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "**60.0%** pass rate over 200 scored runs of 20 cases (95% interval clustered by case 36.8–79.4%; Wilson over runs, as if runs were independent: 53.1–66.5%)"; !strings.Contains(string(md), want) {
		t.Errorf("report.md lacks %q:\n%s", want, md)
	}
	html, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "95% CI 36.8–79.4%, clustered by case") || !strings.Contains(string(html), note) {
		t.Error("report.html lacks the clustered headline interval or the note")
	}
	if got, want := s.PassRateLine(), "pass rate 60.0% [36.8, 79.4] over 200 scored runs of 20 cases (95% CI clustered by case)"; got != want {
		t.Errorf("PassRateLine = %q, want %q", got, want)
	}
	// summary.json carries the interval kind, the cases and the naive bounds.
	var js struct {
		Version int `json:"version"`
		Totals  struct {
			Interval   string  `json:"interval"`
			Cases      int     `json:"cases"`
			EffectiveN float64 `json:"effective_n"`
			Naive      *Bounds `json:"naive"`
		} `json:"totals"`
	}
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	if js.Version != 2 || js.Totals.Interval != "cluster" || js.Totals.Cases != 20 || js.Totals.EffectiveN != 19 || js.Totals.Naive == nil {
		t.Errorf("summary.json totals = %+v (version %d)", js.Totals, js.Version)
	}
}

// twoModelRuns: models x and y on six cases, two seeds each. x passes
// the cases listed in xPass, y those in yPass.
func twoModelRuns(xPass, yPass []int) []run {
	var rs []run
	in := func(c int, set []int) bool {
		for _, v := range set {
			if v == c {
				return true
			}
		}
		return false
	}
	for _, m := range []struct {
		name string
		pass []int
	}{{"x", xPass}, {"y", yPass}} {
		for c := range 6 {
			for seed := 1; seed <= 2; seed++ {
				o := "fail"
				if in(c, m.pass) {
					o = "pass"
				}
				rs = append(rs, run{model: m.name, tools: "needed", toolCount: 2, confirm: "auto", desc: "default", seed: seed,
					kase: fmt.Sprintf("k%d", c), outcome: o, answer: "ok"})
			}
		}
	}
	return rs
}

// TestHeadlineComparison: the headline names the better model only when
// the paired, case-clustered interval excludes 0.
func TestHeadlineComparison(t *testing.T) {
	// x passes all six cases, y only k0: differences x − y per case 0, 1,
	// 1, 1, 1, 1 → est 5/6; residuals −5/6 and 1/6 (×5) → Σ² = 5/6;
	// Var = 6/5 · (5/6)/36 = 1/36 → SE 1/6; t_.975 on 5 df = 2.570582 →
	// [.404903, 1 (clamped)]; t = 5 → p = .004105 (t tables).
	dir := t.TempDir()
	writeRuns(t, filepath.Join(dir, RunsFile), encode(t, twoModelRuns([]int{0, 1, 2, 3, 4, 5}, []int{0})))
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := s.HeadlineComparison
	if c == nil || c.A != "x" || c.B != "y" || c.Diff.Cases != 6 || !near(c.Diff.Est, 5.0/6) || math.Abs(c.Diff.Lo-0.404903) > 2e-6 ||
		c.Diff.Hi != 1 || c.Diff.P == nil || math.Abs(*c.Diff.P-0.004105) > 2e-6 || c.Better() != "x" {
		t.Fatalf("headline comparison = %+v", c)
	}
	// Every case passes or fails both seeds: no noise within cases, so
	// twice the seeds detect nothing smaller; twice the cases do.
	if d := c.Diff; d.MDD == nil || d.MDDTwiceRuns == nil || d.MDDTwiceCases == nil || !near(*d.MDDTwiceRuns, *d.MDD) || *d.MDDTwiceCases >= *d.MDD {
		t.Errorf("MDD %v, twice runs %v, twice cases %v", d.MDD, d.MDDTwiceRuns, d.MDDTwiceCases)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Best two models: `x` − `y` = +83.3 pp [+40.5, +100.0] over 6 paired cases, p = 0.004, MDD "; !bytes.Contains(md, []byte(want)) || !bytes.Contains(md, []byte(": `x` is better.")) {
		t.Errorf("report.md lacks %q … x is better:\n%s", want, md)
	}
	if !bytes.Contains(md, []byte("## Comparisons")) || !bytes.Contains(md, []byte("| model | — | `x` | `y` | 6 | 100.0% | 16.7% | +83.3 pp [+40.5, +100.0] | 0.004 |")) {
		t.Errorf("report.md lacks the comparisons row:\n%s", md)
	}

	// x passes k0–k2, y passes k0, k1, k3: differences 0, 0, 1, −1, 0, 0
	// → est 0: the interval includes 0 and no model is named.
	dir = t.TempDir()
	writeRuns(t, filepath.Join(dir, RunsFile), encode(t, twoModelRuns([]int{0, 1, 2}, []int{0, 1, 3})))
	s, err = Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c := s.HeadlineComparison; c == nil || c.Better() != "" || c.Diff.Est != 0 || c.Diff.P == nil || *c.Diff.P != 1 {
		t.Fatalf("tied comparison = %+v", c)
	}
	md, err = os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(md, []byte("the interval includes 0, so these cases do not show which is better.")) || bytes.Contains(md, []byte("` is better.")) {
		t.Errorf("report.md names a better model on a tie:\n%s", md)
	}
}

// TestToolCurveFixedCases: a case that did not run in every subset is
// left out of every point, so the curve is not a case mix. Subsets needed
// (2 tools), n8 (8 or 9 tools: one case gets 9) and all (0 tools for one
// case, to exercise an axis that includes 0): k0 and k1 run in all three,
// k2 only in needed. needed: k0 pass, k1 fail; k2 pass would lift the
// pooled "needed" to 2/3 but stays out of the curve.
func TestToolCurveFixedCases(t *testing.T) {
	var rs []run
	add := func(tools string, n int, kase, outcome string) {
		rs = append(rs, run{model: "m", tools: tools, toolCount: n, confirm: "auto", desc: "default", seed: 1, kase: kase, outcome: outcome, answer: "ok"})
	}
	add("needed", 2, "k0", "pass")
	add("needed", 2, "k1", "fail")
	add("needed", 2, "k2", "pass")
	add("n8", 8, "k0", "pass")
	add("n8", 9, "k1", "pass")
	add("all", 0, "k0", "fail")
	add("all", 61, "k1", "fail")
	dir := t.TempDir()
	writeRuns(t, filepath.Join(dir, RunsFile), encode(t, rs))
	cfg := `{"config": {"name": "curve", "matrix": {"tools": [{"name": "needed"}, {"name": "n8", "count": 8}, {"name": "all"}]}}}`
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	tc := s.ToolCurve
	if tc == nil || len(tc.Series) != 1 || tc.Series[0].Cases != 2 || tc.Series[0].Dropped != 1 {
		t.Fatalf("curve = %+v", tc)
	}
	var names []string
	for _, sub := range tc.Subsets {
		names = append(names, fmt.Sprintf("%s:%g(%d-%d)", sub.Name, sub.Typical, sub.Min, sub.Max))
	}
	// Medians over k0, k1: needed 2, n8 (8+9)/2 = 8.5, all (0+61)/2 = 30.5.
	if got := strings.Join(names, " "); got != "needed:2(2-2) n8:8.5(8-9) all:30.5(0-61)" {
		t.Errorf("subsets = %s", got)
	}
	pts := tc.Series[0].Points
	// needed over k0, k1: 1/2 (not 2/3 with k2); n8 2/2; all 0/2.
	if pts[0].Pass != 1 || pts[0].Scored() != 2 || pts[1].Pass != 2 || pts[2].Pass != 0 || pts[2].Scored() != 2 {
		t.Errorf("points = %+v", pts)
	}
	// n8 − needed paired by case: k0 0, k1 +1 → +.5; all − needed: −1, 0 → −.5.
	if pts[0].VsFirst != nil || pts[1].VsFirst == nil || !near(pts[1].VsFirst.Est, 0.5) || !near(pts[2].VsFirst.Est, -0.5) {
		t.Errorf("differences = %+v %+v %+v", pts[0].VsFirst, pts[1].VsFirst, pts[2].VsFirst)
	}
	html, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	h := string(html)
	if !strings.Contains(h, `id="tool-curve"`) || strings.Contains(h, "log scale") || !strings.Contains(h, "spaced by log(1 ") {
		t.Error("the tool-count chart must exist and, with an axis that includes 0, not claim a log scale")
	}
	if !hasWarning(s, "the tool-count curve of m holds the 2 case(s) that ran in every tool subset it ran; 1 case(s)") {
		t.Errorf("warnings %q", s.Warnings)
	}
}
