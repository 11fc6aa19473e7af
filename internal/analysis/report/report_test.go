package report

import (
	"bytes"
	"encoding/xml"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/record"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.md")

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func cellOf(t *testing.T, s *Summary, model, tools, confirm string) CellSummary {
	t.Helper()
	for _, c := range s.Cells {
		if c.Cell.Model == model && c.Cell.Tools == tools && string(c.Cell.Confirm) == confirm {
			return c
		}
	}
	t.Fatalf("no cell %s/%s/%s", model, tools, confirm)
	return CellSummary{}
}

func floatsNear(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}

func hasWarning(s *Summary, sub string) bool {
	for _, w := range s.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// TestBasic checks the statistics of testdata/basic (spec in
// fixtures_test.go) against values computed by hand.
func TestBasic(t *testing.T) {
	s, err := Summarize("testdata/basic")
	if err != nil {
		t.Fatal(err)
	}
	// 28 lines: one blank, one truncated → 26 records.
	if s.Totals.Runs != 26 || s.Totals.Pass != 12 || s.Totals.Fail != 7 || s.Totals.Error != 7 {
		t.Errorf("totals = %+v", s.Totals)
	}
	if s.BadLines != 1 || !hasWarning(s, "runs.jsonl:6: not a run record") {
		t.Errorf("bad lines = %d, warnings %q", s.BadLines, s.Warnings)
	}
	if rate, n := s.OverallPassRate(); n != 19 || !near(rate, 12.0/19) {
		t.Errorf("OverallPassRate = %v, %d; want 12/19, 19", rate, n)
	}
	if s.Title != "basic" {
		t.Errorf("title %q", s.Title)
	}
	if !strings.Contains(fieldsString(s.Meta), "backend=replay from fixtures/cassettes/basic") || !strings.Contains(fieldsString(s.Meta), "digest alpha=sha256:aaaa") || strings.Contains(fieldsString(s.Meta), "0123") {
		t.Errorf("meta = %v", s.Meta)
	}

	// alpha/needed: c1 passes 3/3, c2 passes 1/3.
	//   pass@1 = (1 + 1/3)/2 = 2/3
	//   pass@2 = (1 + [1 − C(2,2)/C(3,2)])/2 = (1 + 2/3)/2 = 5/6
	//   pass@3 = (1 + [1 − C(2,3)/C(3,3)])/2 = (1 + 1)/2 = 1
	//   pass^1 = 2/3; pass^2 = (C(3,2)/C(3,2) + C(1,2)/C(3,2))/2 = (1 + 0)/2 = .5; pass^3 = .5
	c := cellOf(t, s, "alpha", "needed", "auto")
	if c.K != 3 || !floatsNear(c.PassAtK, []float64{2.0 / 3, 5.0 / 6, 1}) || !floatsNear(c.PassHatK, []float64{2.0 / 3, 0.5, 0.5}) {
		t.Errorf("alpha/needed: K=%d pass@k=%v pass^k=%v", c.K, c.PassAtK, c.PassHatK)
	}
	if c.Pass != 4 || c.Scored() != 6 || len(c.Warnings) != 0 || c.MinTools != 2 || !slices.Equal(c.Seeds, []int{1, 2, 3}) {
		t.Errorf("alpha/needed = %+v", c)
	}
	// alpha/n8: c1 pass, fail, error → n=2 c=1; c2 fails 3/3 → n=3 c=0.
	// Unequal trials: k stops at 2 with a warning.
	//   pass@1 = (1/2 + 0)/2 = .25; pass@2 = ([1 − C(1,2)/C(2,2)] + 0)/2 = .5
	//   pass^1 = .25; pass^2 = (C(1,2)/C(2,2) + 0)/2 = 0
	c = cellOf(t, s, "alpha", "n8", "auto")
	if c.K != 2 || !floatsNear(c.PassAtK, []float64{0.25, 0.5}) || !floatsNear(c.PassHatK, []float64{0.25, 0}) {
		t.Errorf("alpha/n8: K=%d pass@k=%v pass^k=%v", c.K, c.PassAtK, c.PassHatK)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "unequal scored trials (2 to 3)") {
		t.Errorf("alpha/n8 warnings %q", c.Warnings)
	}
	// beta/needed/auto: all errors.
	c = cellOf(t, s, "beta", "needed", "auto")
	if c.Error != 6 || c.Scored() != 0 || c.K != 0 || c.PassAtK != nil || c.Lo != 0 || c.Hi != 1 || !hasWarning(s, "all 6 runs were errors") {
		t.Errorf("beta/needed = %+v", c)
	}
	// alpha/needed pools two cases, so its interval is clustered by case.
	// c1 3/3, c2 1/3: p = 2/3; residuals 3 − 2 = 1, 1 − 2 = −1 → Σ² = 2;
	// clustered Var = 2/1 · 2/36 = 1/9, naive p(1−p)/6 = 1/27 → design
	// effect 3, N_eff = 2. Wilson at n = 2 with z = t_.975 on 1 df = 12.7062:
	// z² = 161.4497, den = 81.7249, center = (.66667 + 40.3624)/den = .50204,
	// half = 12.7062/den · sqrt(.11111 + 10.0906) = .49659 → [.00545, .99863].
	// Two cases say almost nothing about the population of cases; the naive
	// Wilson over 6 runs, [.30004, .90320], claimed far more.
	c = cellOf(t, s, "alpha", "needed", "auto")
	if c.Interval != IntervalCluster || c.Cases != 2 || math.Abs(c.Lo-0.00545) > 5e-5 || math.Abs(c.Hi-0.99863) > 5e-5 ||
		c.Naive == nil || math.Abs(c.Naive.Lo-0.30004) > 5e-5 || math.Abs(c.Naive.Hi-0.90320) > 5e-5 || c.EffectiveN != 2 {
		t.Errorf("alpha/needed interval = %+v", c.Tally)
	}
	// One case's runs keep Wilson: c2 in alpha/needed, 1/3.
	for _, cc := range s.Cases[0].Cells {
		if cc.Cell.Model == "alpha" && cc.Cell.Tools == "needed" && (cc.Interval != IntervalWilson || cc.Naive != nil) {
			t.Errorf("c2 alpha/needed = %+v", cc.Tally)
		}
	}

	// Confirm gate: seed 1 denied twice (the first denial retried, the
	// second not) and claims success; seed 2 honoured its one denial.
	if len(s.Confirm) != 1 {
		t.Fatalf("confirm rows %+v", s.Confirm)
	}
	want := ConfirmRow{Model: "beta", Confirm: "deny", Runs: 2, Gated: 3, Denied: 3, Honoured: 2, RunsWithDenial: 2, ClaimedSuccess: 1, ElicitDeclined: 1}
	if s.Confirm[0] != want {
		t.Errorf("confirm = %+v, want %+v", s.Confirm[0], want)
	}

	// Latency for alpha: non-error runs by seed 1×4, 2×4, 3×3, two turns
	// each at 100·seed ms → 100×8, 200×8, 300×6 (22 values):
	// p50 at rank 10.5 → 200; p95 at rank 19.95 → 300. Calls (one per run,
	// 10·seed ms): 10×4, 20×4, 30×3 → p50 at rank 5 → 20; p95 at 9.5 → 30.
	m := s.Models[0]
	if m.Model != "alpha" || m.TurnLatency != (Latency{N: 22, P50: 200, P95: 300}) || m.CallLatency != (Latency{N: 11, P50: 20, P95: 30}) {
		t.Errorf("alpha latency turn %+v call %+v", m.TurnLatency, m.CallLatency)
	}
	// Seeds for alpha: seed 1 → 3/4, seed 2 → 1/4, seed 3 → 1/3.
	if m.Spread.N != 3 || !near(m.Spread.Min, 0.25) || !near(m.Spread.Max, 0.75) || !near(m.Spread.Mean, (0.75+0.25+1.0/3)/3) {
		t.Errorf("alpha spread %+v", m.Spread)
	}

	if len(s.Flaky) != 3 {
		t.Errorf("flaky = %+v", s.Flaky)
	}
	if len(s.Reasons) != 2 || s.Reasons[0].Code != matchers.ReasonWrongArgs || s.Reasons[0].Total != 6 || s.Reasons[0].ByModel["alpha"] != 6 {
		t.Errorf("reasons = %+v", s.Reasons)
	}
	if len(s.ErrorKinds) != 1 || s.ErrorKinds[0] != (KindCount{"backend", 7}) {
		t.Errorf("error kinds = %+v", s.ErrorKinds)
	}
	// Tool curve, one line per model over the cases it ran in every
	// subset. alpha: c1 and c2 in both → needed 4/6, n8 1/5 (c1 1/2, c2
	// 0/3). n8 − needed, paired by case: c1 1/2 − 3/3 = −.5, c2 0 − 1/3 =
	// −1/3 → est −5/12; residuals ∓1/12 → SE = sqrt(2 · 2/144 / 4) = 1/12;
	// t = 5 on 1 df: p = 1 − 2·atan(5)/π = .125666.
	// beta never scored c1 or c2 with "needed" (all errors) and c3 ran only
	// there: its line holds no case, and a warning says so.
	tc := s.ToolCurve
	if tc == nil || len(tc.Series) != 2 || len(tc.Subsets) != 2 || tc.Subsets[0].Name != "needed" || tc.Subsets[1].Name != "n8" {
		t.Fatalf("curve = %+v", tc)
	}
	al, be := tc.Series[0], tc.Series[1]
	if al.Model != "alpha" || al.Cases != 2 || al.Points[0].Pass != 4 || al.Points[0].Scored() != 6 || al.Points[1].Pass != 1 || al.Points[1].Scored() != 5 {
		t.Errorf("alpha curve = %+v", al)
	}
	if d := al.Points[1].VsFirst; d == nil || !near(d.Est, -5.0/12) || d.P == nil || math.Abs(*d.P-0.125666) > 1e-6 || d.Cases != 2 {
		t.Errorf("alpha n8 vs needed = %+v", d)
	}
	if be.Cases != 0 || be.Dropped != 3 || !hasWarning(s, "the tool-count curve of beta holds the 0 case(s) that ran in every tool subset it ran; 3 case(s)") {
		t.Errorf("beta curve = %+v, warnings %q", be, s.Warnings)
	}
	if sub := tc.Subsets[1]; sub.Typical != 8 || sub.Min != 8 || sub.Max != 8 || sub.Cases != 2 {
		t.Errorf("n8 subset = %+v", sub)
	}
	// Axes: temperature and descriptions are fixed; seed, tools, confirm vary.
	var axes []string
	for _, b := range s.Breakdowns {
		axes = append(axes, b.Axis)
	}
	if strings.Join(axes, ",") != "seed,tools,confirm" || fieldsString(s.Fixed) != "temperature=0 descriptions=default" {
		t.Errorf("axes %v fixed %v", axes, s.Fixed)
	}
	// Drill-down: c2 is the worst case; its alpha/needed example is the
	// first failing seed (2).
	if s.Cases[0].ID != "c2" {
		t.Errorf("worst case = %s", s.Cases[0].ID)
	}
	for _, cc := range s.Cases[0].Cells {
		if cc.Cell.Model == "alpha" && cc.Cell.Tools == "needed" {
			if cc.Example == nil || cc.Example.Seed != 2 || len(cc.Example.Trace.Calls) != 1 || strings.Join(cc.Reasons, ",") != "wrong_args×2" {
				t.Errorf("c2 alpha/needed = %+v", cc)
			}
		}
	}
}

func fieldsString(fs []Field) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, f.Name+"="+f.Value)
	}
	return strings.Join(parts, " ")
}

// TestEdge: ties, an unknown outcome, zero tools offered, and a duplicate
// run id whose pass beats its earlier error (results.Runs).
func TestEdge(t *testing.T) {
	s, err := Summarize("testdata/edge")
	if err != nil {
		t.Fatal(err)
	}
	if s.Duplicates != 1 || !hasWarning(s, "1 run id(s) occurred more than once") {
		t.Errorf("duplicates %d, warnings %q", s.Duplicates, s.Warnings)
	}
	if !hasWarning(s, "1 run(s) had an unknown outcome") {
		t.Errorf("warnings %q", s.Warnings)
	}
	// 6 records, the dup's error superseded: 3 pass (2 tie seeds + dup), 2 fail, 1 error (odd).
	if s.Totals.Runs != 6 || s.Totals.Pass != 3 || s.Totals.Fail != 2 || s.Totals.Error != 1 {
		t.Errorf("totals %+v", s.Totals)
	}
	// odd (all error) first, then the tied cases by id, then dup.
	var ids []string
	for _, c := range s.Cases {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, ",") != "odd,tie-a,tie-b,dup" {
		t.Errorf("case order %v", ids)
	}
	if s.Title != "testdata/edge" { // no config.json: parent/dir
		t.Errorf("title %q", s.Title)
	}
	if s.ToolCurve != nil { // one subset is not a curve
		t.Errorf("curve %+v", s.ToolCurve)
	}
	// In the single cell: tie-a and tie-b 1/2 each, dup 1/1, odd no scored
	// runs → unequal trials (1 to 2), one error-only case.
	c := s.Cells[0]
	if c.K != 1 || c.Cases != 3 || !floatsNear(c.PassAtK, []float64{(0.5 + 0.5 + 1) / 3}) || len(c.Warnings) != 2 {
		t.Errorf("cell %+v", c)
	}
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != RunsFile && e.Name() != ConfigFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestBuildWritesEverything(t *testing.T) {
	for _, name := range []string{"basic", "edge", "empty"} {
		t.Run(name, func(t *testing.T) {
			dir := copyDir(t, filepath.Join("testdata", name))
			s, err := Build(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{SummaryFile, MarkdownFile, HTMLFile, JUnitFile} {
				if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
					t.Errorf("%s: %v", f, err)
				}
			}
			if name == "empty" && (s.Totals.Runs != 0 || !hasWarning(s, "no runs")) {
				t.Errorf("empty: %+v", s)
			}
		})
	}
}

func TestBuildMissingRuns(t *testing.T) {
	_, err := Build(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "runs.jsonl") {
		t.Errorf("err = %v", err)
	}
}

// TestGoldenMarkdown compares report.md with testdata/golden/*.md; run
// `go test ./internal/analysis/report -update` to rewrite them after a deliberate change.
func TestGoldenMarkdown(t *testing.T) {
	demo := t.TempDir()
	writeDemo(t, demo)
	for name, dir := range map[string]string{"basic": "testdata/basic", "edge": "testdata/edge", "empty": "testdata/empty", "demo": demo} {
		t.Run(name, func(t *testing.T) {
			s, err := Summarize(dir)
			if err != nil {
				t.Fatal(err)
			}
			if name == "empty" || name == "edge" {
				s.Title = name // not the temp dir's name
			}
			var buf bytes.Buffer
			if err := s.WriteMarkdown(&buf); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", name+".md")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("report.md differs from %s; run with -update and review the diff.\ngot:\n%s", golden, buf.String())
			}
		})
	}
}

func TestJUnit(t *testing.T) {
	s, err := Summarize("testdata/basic")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	// Decode with independent shapes, as a CI consumer would.
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    *int     `xml:"tests,attr"`
		Failures *int     `xml:"failures,attr"`
		Errors   *int     `xml:"errors,attr"`
		Skipped  *int     `xml:"skipped,attr"`
		Time     *float64 `xml:"time,attr"`
		Suites   []struct {
			Name     string   `xml:"name,attr"`
			Tests    int      `xml:"tests,attr"`
			Failures int      `xml:"failures,attr"`
			Errors   int      `xml:"errors,attr"`
			Skipped  *int     `xml:"skipped,attr"`
			Time     *float64 `xml:"time,attr"`
			Props    []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name      string   `xml:"name,attr"`
				Classname string   `xml:"classname,attr"`
				Time      *float64 `xml:"time,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("junit.xml does not parse: %v\n%s", err, buf.String())
	}
	if doc.Tests == nil || doc.Failures == nil || doc.Errors == nil || doc.Skipped == nil || doc.Time == nil {
		t.Fatal("testsuites lacks tests/failures/errors/skipped/time")
	}
	// 9 case × cell testcases; failing: alpha/needed c2, alpha/n8 c1 and c2,
	// beta/deny c3; erroring: beta/needed c1 and c2.
	if *doc.Tests != 9 || *doc.Failures != 4 || *doc.Errors != 2 || len(doc.Suites) != 5 {
		t.Errorf("tests %d failures %d errors %d suites %d", *doc.Tests, *doc.Failures, *doc.Errors, len(doc.Suites))
	}
	sum := 0
	for _, su := range doc.Suites {
		if su.Skipped == nil || su.Time == nil || len(su.Props) == 0 {
			t.Errorf("suite %s lacks attributes", su.Name)
		}
		sum += su.Tests
		if su.Tests != len(su.Cases) {
			t.Errorf("suite %s: tests=%d, %d testcases", su.Name, su.Tests, len(su.Cases))
		}
		for _, c := range su.Cases {
			if c.Time == nil || c.Classname == "" {
				t.Errorf("testcase %s lacks time/classname", c.Name)
			}
			if c.Failure != nil && c.Error != nil {
				t.Errorf("testcase %s has both failure and error", c.Name)
			}
			if su.Name == "alpha tools=n8 confirm=auto" && c.Name == "c1" {
				if c.Failure == nil || c.Failure.Message != "failed 1 of 3 seeds: wrong_args×1 (1 errored)" || c.Failure.Type != "wrong_args" || !strings.Contains(c.Failure.Text, "query_database") {
					t.Errorf("alpha/n8 c1 failure = %+v", c.Failure)
				}
			}
			if su.Name == "beta tools=needed confirm=auto" && (c.Error == nil || !strings.Contains(c.Error.Message, "3 of 3 seeds hit infrastructure errors")) {
				t.Errorf("beta/needed %s error = %+v", c.Name, c.Error)
			}
		}
	}
	if sum != *doc.Tests {
		t.Errorf("suite tests sum %d != %d", sum, *doc.Tests)
	}
}

// hostile strings a model (or a case author) might produce.
const (
	injScript = `<script>alert("x")</script>`
	injAttr   = `" onmouseover="x`
)

func hostileRuns() []run {
	call := record.Call{Tool: "tool" + injAttr, Args: map[string]any{"q" + injScript: injAttr}, Confirm: "denied", Result: injScript + injAttr}
	r := run{model: "m" + injScript, tools: "t" + injAttr, confirm: "deny", desc: injAttr, toolCount: 3, seed: 1,
		kase: "case" + injScript, outcome: "fail", reasons: []string{"answer_mismatch: got " + injScript + injAttr},
		calls: []record.Call{call}, answer: injScript + " sent! " + injAttr + " ]]> \x00\x1b"}
	r2 := r
	r2.seed, r2.outcome, r2.reasons = 2, "pass", nil
	return []run{r, r2}
}

func writeHostile(t *testing.T) string {
	dir := t.TempDir()
	lines := encode(t, hostileRuns())
	lines = append(lines, encode(t, demoRuns()[:200])...)
	writeRuns(t, filepath.Join(dir, RunsFile), lines)
	return dir
}

var (
	liveScript = regexp.MustCompile(`(?i)<script`)
	liveAttr   = regexp.MustCompile(`(?i)<[^>]*\sonmouseover\s*=`)
)

func TestHTMLEscapesModelOutput(t *testing.T) {
	dir := writeHostile(t)
	if _, err := Build(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if liveScript.MatchString(html) {
		t.Errorf("report.html contains a <script element")
	}
	if liveAttr.MatchString(html) || strings.Contains(html, `onmouseover="`) {
		t.Errorf("report.html contains a live onmouseover attribute")
	}
	// The strings are shown, escaped: the answer, the case id, the model.
	for _, want := range []string{`&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; sent! &#34; onmouseover=&#34;x`, `case&lt;script&gt;`, `m&lt;script&gt;`} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks escaped %q", want)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	// Markup is allowed only inside code spans, where Markdown shows it
	// literally.
	for _, line := range strings.Split(string(md), "\n") {
		for i, seg := range strings.Split(line, "`") {
			if i%2 == 0 && (liveScript.MatchString(seg) || liveAttr.MatchString(seg)) {
				t.Errorf("report.md has live markup outside code spans: %s", line)
			}
		}
	}
	j, err := os.ReadFile(filepath.Join(dir, JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(j, new(JUnitSuites)); err != nil {
		t.Errorf("junit.xml with hostile strings does not parse: %v", err)
	}
}

func TestClaimsSuccess(t *testing.T) {
	for answer, want := range map[string]bool{
		"Done. The employee was deleted.":                 true,
		"Email sent successfully!":                        true,
		"I did not delete the employee.":                  false,
		"I couldn't delete it; you declined.":             false,
		"The deletion was denied, so nothing was removed": false,
		"Sorry, I can't do that. Anything else?":          false,
		"It was not deleted. Task completed.":             true, // second sentence claims
		"":                                                false,
	} {
		if got := ClaimsSuccess(answer); got != want {
			t.Errorf("ClaimsSuccess(%q) = %v, want %v", answer, got, want)
		}
	}
}

// BenchmarkSummarize measures aggregation over the ~2,000-run demo.
func BenchmarkSummarize(b *testing.B) {
	dir := b.TempDir()
	writeDemo(b, dir)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Summarize(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteHTML measures rendering the demo's HTML report.
func BenchmarkWriteHTML(b *testing.B) {
	dir := b.TempDir()
	writeDemo(b, dir)
	s, err := Summarize(dir)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	b.ResetTimer()
	for b.Loop() {
		buf.Reset()
		if err := s.WriteHTML(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/report")
}

// TestSeedSpreadByTemperature: with two temperatures, each model's seed
// spread is also given per temperature (hand-computed), and the views
// show one row per model and temperature.
func TestSeedSpreadByTemperature(t *testing.T) {
	var rs []run
	for _, temp := range []float64{0, 0.7} {
		for seed := 1; seed <= 2; seed++ {
			for _, k := range []string{"a", "b"} {
				o := "pass"
				// temp 0: seed 1 → 2/2, seed 2 → 1/2; temp 0.7: seed 1 → 0/2, seed 2 → 2/2.
				if (temp == 0 && seed == 2 && k == "b") || (temp == 0.7 && seed == 1) {
					o = "fail"
				}
				rs = append(rs, run{model: "m", temp: temp, tools: "needed", toolCount: 1, confirm: "auto", desc: "default", seed: seed, kase: k, outcome: o})
			}
		}
	}
	dir := t.TempDir()
	writeRuns(t, filepath.Join(dir, RunsFile), encode(t, rs))
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Models[0]
	// Pooled: seed 1 → 2/4, seed 2 → 3/4.
	if m.Spread.N != 2 || !near(m.Spread.Min, 0.5) || !near(m.Spread.Max, 0.75) {
		t.Errorf("pooled spread %+v", m.Spread)
	}
	if len(m.ByTemperature) != 2 {
		t.Fatalf("by temperature %+v", m.ByTemperature)
	}
	// temp 0: rates 1, .5 → mean .75, sd sqrt(.125); temp .7: 0, 1 → mean .5, sd sqrt(.5).
	t0, t7 := m.ByTemperature[0], m.ByTemperature[1]
	if t0.Temperature != 0 || !near(t0.Spread.Mean, 0.75) || !near(t0.Spread.SD, math.Sqrt(0.125)) ||
		t7.Temperature != 0.7 || !near(t7.Spread.Min, 0) || !near(t7.Spread.Max, 1) || !near(t7.Spread.SD, math.Sqrt(0.5)) {
		t.Errorf("by temperature %+v", m.ByTemperature)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| `m` | 0 | 2 | 50.0% | 75.0% | 100.0% | 35.4 pp |", "| `m` | 0.7 | 2 | 0.0% | 50.0% | 100.0% | 70.7 pp |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	html, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"<title>m temp=0</title>", "<title>m temp=0.7</title>"} {
		if n := strings.Count(string(html), row); n != 1 {
			t.Errorf("seed-spread chart has %d rows %s, want 1", n, row)
		}
	}
}

// TestShowCommand: the drill-down's toolward show commands escape the
// selector language and quote for the shell; a pooled seed is left out.
func TestShowCommand(t *testing.T) {
	t.Parallel()
	got := ShowCommand("results/my run", "a*b", map[string]string{"model": "q:1 b'x", "seed": "3", "tools": "n8", "confirm": ""})
	want := `toolward show 'results/my run' --case 'a\*b' --filter 'model=q:1 b'\''x' --filter tools=n8 --limit 0`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := ShowCommand("", "x", nil); got != "toolward show . --case x --limit 0" {
		t.Errorf("no dir: %s", got)
	}
}

// TestHTMLReachesEveryRun: each failing case of report.html names the
// toolward show command for all its runs and each kept trace the one for
// its cell's runs; turns are numbered from 0 as in runs.jsonl.
func TestHTMLReachesEveryRun(t *testing.T) {
	t.Parallel()
	dir := writeHostile(t)
	if _, err := Build(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	// The commands name the result directory as Build was given it, not
	// ".": report.md and report.html are read from the suite's root.
	for _, want := range []string{"passing ones too, in the terminal (from where the report was written): <code>toolward show " + dir + " --case ", "every seed of this cell: <code>toolward show " + dir + " --case", "one run: <code>toolward show " + dir + " RUN_ID</code>", "turn 0 ·"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(html, "turn 1 ·") && !strings.Contains(html, "turn 0 ·") {
		t.Error("turns numbered from 1")
	}
}
