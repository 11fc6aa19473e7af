package results_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/internal/analysis/diff"
	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/internal/analysis/rescore"
	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// The de-duplication rule of results.Runs is the rule of every reader:
// resume (Compact), merge, report, diff and score keep the same record
// for each run of one runs.jsonl. Before there was one reader, report and
// diff kept the last record of an id and the others the first verdict.

const ruleCases = `id: a
prompt: What is 2 + 3?
needs: [add]
expect:
  answer: {$contains: "5"}
`

// chosen marks, by its Attempts, the record the rule keeps; duplicates
// carry dupAttempts.
const chosen, dupAttempts = 1, 7

// ruleDir writes a result directory for case a × seeds 1–4 whose
// runs.jsonl has, in file order:
//
//	seed 1: error, then pass       → the pass (a verdict beats an error)
//	seed 2: fail, then pass        → the fail (the first verdict)
//	seed 3: error, then error      → the first error
//	seed 4: pass, and a bad line   → the pass
func ruleDir(t *testing.T) (dir string, p *plan.Plan) {
	t.Helper()
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	if err := os.WriteFile("cases/a.yaml", []byte(ruleCases), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &schema.Config{Name: "t", Cases: []string{"cases/*.yaml"}, Matrix: schema.Matrix{}.
		With(cell.Model, "m").With(cell.Seed, "1", "2", "3", "4").With(cell.Temperature, "0").
		With(cell.Tools, "needed").With(cell.Confirm, "auto").With(cell.Descriptions, "default")}
	cases, err := schema.LoadCases(cfg.Cases)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = plan.New(cfg, cases); err != nil {
		t.Fatal(err)
	}
	rules, err := score.CaseRules(cases[0])
	if err != nil {
		t.Fatal(err)
	}
	rec := func(seed int, outcome record.Outcome, attempts int) *record.Record {
		r := p.Run(int64(seed - 1))
		answer := map[record.Outcome]string{record.Pass: "It is 5.", record.Fail: "No idea."}[outcome]
		out := &record.Record{ID: r.ID, Case: r.Case.ID, Cell: r.Cell, Attempts: attempts, Outcome: outcome,
			Trace: record.Trace{Offered: []string{"add"}, Turns: []record.Turn{{Content: answer}}, Answer: answer}}
		if outcome == record.Error {
			out.Error = &record.InfraError{Kind: "backend", Message: "down"}
		} else {
			rules.Score(out)
			if out.Outcome != outcome {
				t.Fatalf("fixture: seed %d scored %s, want %s", seed, out.Outcome, outcome)
			}
		}
		return out
	}
	lines := []*record.Record{
		rec(1, record.Error, dupAttempts), rec(1, record.Pass, chosen),
		rec(2, record.Fail, chosen), rec(2, record.Pass, dupAttempts),
		rec(3, record.Error, chosen), rec(3, record.Error, dupAttempts),
		rec(4, record.Pass, chosen),
	}
	dir = filepath.Join("results", "t", "20261201T090000Z")
	if err := results.CreateAt(dir); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i, r := range lines {
		line, err := record.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
		if i == 3 {
			b.WriteString("{\"id\": \"cut short\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, results.RunsFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := &results.Meta{Version: results.MetaVersion, Config: cfg, Planned: p.Len(), Total: p.Len(),
		Cases: map[string]string{"a": cases[0].RunDigest}, Rules: map[string]string{"a": rules.Digest}}
	if err := results.WriteMeta(dir, meta); err != nil {
		t.Fatal(err)
	}
	return dir, p
}

// kept returns "seed:outcome" of every record in dir/runs.jsonl, failing
// the test on a duplicate's marker.
func kept(t *testing.T, who, dir string) []string {
	t.Helper()
	var out []string
	err := eachLine(dir, func(rec *record.Record, err error) error {
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		if rec.Attempts != chosen {
			t.Errorf("%s kept a duplicate: seed %d %s", who, rec.Cell.Seed, rec.Outcome)
		}
		out = append(out, string(rune('0'+rec.Cell.Seed))+":"+string(rec.Outcome))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

var wantKept = []string{"1:pass", "2:fail", "3:error", "4:pass"}

func TestOneRuleForEveryReader(t *testing.T) {
	dir, p := ruleDir(t)

	var viaRuns []string
	st, err := results.Runs(func(rec *record.Record) error {
		if rec.Attempts != chosen {
			t.Errorf("Runs chose a duplicate: seed %d %s", rec.Cell.Seed, rec.Outcome)
		}
		viaRuns = append(viaRuns, string(rune('0'+rec.Cell.Seed))+":"+string(rec.Outcome))
		return nil
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(viaRuns)
	if !slices.Equal(viaRuns, wantKept) || st.Duplicates != 3 || st.BadLines != 1 || st.Records != 4 {
		t.Errorf("Runs: %v, stats %+v", viaRuns, st)
	}

	// merge
	merged := filepath.Join(t.TempDir(), "merged")
	if _, err := results.MergeEach(merged, []string{dir}, nil); err != nil {
		t.Fatal(err)
	}
	if got := kept(t, "merge", merged); !slices.Equal(got, wantKept) {
		t.Errorf("merge kept %v, want %v", got, wantKept)
	}

	// score
	res, err := rescore.Dir(dir, rescore.DirOptions{Out: filepath.Join(t.TempDir(), "scored")})
	if err != nil {
		t.Fatal(err)
	}
	if got := kept(t, "score", res.Out); !slices.Equal(got, wantKept) {
		t.Errorf("score kept %v, want %v", got, wantKept)
	}

	// report
	s, err := report.Summarize(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tt := s.Totals; tt.Runs != 4 || tt.Pass != 2 || tt.Fail != 1 || tt.Error != 1 || s.Duplicates != 3 {
		t.Errorf("report totals %+v, duplicates %d; want 2 pass, 1 fail, 1 error, 3 duplicates", tt, s.Duplicates)
	}

	// diff: against the merged directory (the chosen records alone),
	// nothing changes and every run pairs.
	d, err := diff.Compare(dir, merged, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if d.Paired != 4 || d.Scored != 3 || d.ErrorPairs != 1 || len(d.Regressions)+len(d.Fixes)+len(d.Verdicts) != 0 {
		t.Errorf("diff: paired %d scored %d errors %d, regressions %v fixes %v verdicts %v",
			d.Paired, d.Scored, d.ErrorPairs, d.Regressions, d.Fixes, d.Verdicts)
	}

	// resume: Compact keeps the chosen verdicts and drops the error
	// (its run runs again).
	pos := map[string]int64{}
	for i := range p.Len() {
		pos[p.ID(i)] = i
	}
	c, err := results.Compact(context.Background(), dir, func(rec *record.Record) (int64, bool) {
		i, ok := pos[rec.ID]
		return i, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := kept(t, "compact", dir); !slices.Equal(got, []string{"1:pass", "2:fail", "4:pass"}) || c.Errors != 1 || c.Bad != 1 {
		t.Errorf("compact kept %v, errors %d bad %d", got, c.Errors, c.Bad)
	}
}

// eachLine calls fn for every line of dir's runs.jsonl, as record.Reader
// reads it, with no de-duplication.
func eachLine(dir string, fn func(*record.Record, error) error) error {
	f, err := os.Open(filepath.Join(dir, results.RunsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	r := record.NewReader(f, f.Name())
	for r.Scan() {
		if err := fn(r.Record()); err != nil {
			return err
		}
	}
	return r.Err()
}

// TestMergeReportFromStream: the reports merge builds from the records
// as it writes them (report.Stream) are the reports `toolward report`
// builds from the merged directory, byte for byte.
func TestMergeReportFromStream(t *testing.T) {
	dir, _ := ruleDir(t)
	out := filepath.Join("results", "t", "merged")
	rep := report.NewStream(dir)
	if _, err := results.MergeEach(out, []string{dir}, rep.Add); err != nil {
		t.Fatal(err)
	}
	streamed, err := rep.Build(out)
	if err != nil {
		t.Fatal(err)
	}
	files := []string{report.SummaryFile, report.MarkdownFile, report.HTMLFile, report.JUnitFile}
	got := map[string][]byte{}
	for _, f := range files {
		got[f], _ = os.ReadFile(filepath.Join(out, f))
	}
	read, err := report.Build(out)
	if err != nil {
		t.Fatal(err)
	}
	if streamed.Totals != read.Totals || read.Totals.Runs != 4 {
		t.Errorf("streamed totals %+v, read back %+v", streamed.Totals, read.Totals)
	}
	for _, f := range files {
		want, _ := os.ReadFile(filepath.Join(out, f))
		if string(got[f]) != string(want) {
			t.Errorf("%s from the merge stream differs from the report of the merged directory:\n%s\nwant:\n%s", f, got[f], want)
		}
	}
}

// TestScoreReportFromStream: the reports score builds from the records
// as it writes them are the reports of the new directory read back.
func TestScoreReportFromStream(t *testing.T) {
	dir, _ := ruleDir(t)
	rep := report.NewStream(dir)
	res, err := rescore.Dir(dir, rescore.DirOptions{Out: filepath.Join("results", "t", "scored"), Each: rep.Add})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rep.Build(res.Out); err != nil {
		t.Fatal(err)
	}
	files := []string{report.SummaryFile, report.MarkdownFile, report.HTMLFile, report.JUnitFile}
	got := map[string][]byte{}
	for _, f := range files {
		got[f], _ = os.ReadFile(filepath.Join(res.Out, f))
	}
	if _, err := report.Build(res.Out); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		want, _ := os.ReadFile(filepath.Join(res.Out, f))
		if len(want) == 0 || string(got[f]) != string(want) {
			t.Errorf("%s from the score stream differs from the report of the scored directory:\n%s\nwant:\n%s", f, got[f], want)
		}
	}
}
