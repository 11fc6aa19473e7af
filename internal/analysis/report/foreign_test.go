package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// planDir writes a result directory whose config.json records a plan of
// two cases × three seeds and whose runs.jsonl holds one passing record
// per run, then appends extra lines.
func planDir(t *testing.T, extra ...string) string {
	t.Helper()
	cfg := &schema.Config{Name: "members", Matrix: schema.Matrix{}.With(cell.Model, "m").With(cell.Seed, "1", "2", "3")}
	cases := []*schema.Case{{ID: "a", RunDigest: "da"}, {ID: "b", RunDigest: "db"}}
	p, err := plan.New(cfg, cases)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m := &results.Meta{Version: results.MetaVersion, Config: cfg, Planned: p.Len(), Total: p.Len(), Cases: map[string]string{"a": "da", "b": "db"}}
	if err := results.WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	for i := range p.Len() {
		r := p.Run(i)
		if err := w.Write(&record.Record{ID: r.ID, Case: r.Case.ID, Cell: r.Cell, Outcome: record.Pass}); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range extra {
		buf.WriteString(l + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, RunsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReportDropsForeign: lines appended to runs.jsonl that are not runs
// of the plan config.json records (an id-only record, a record of a case
// the plan does not hold, a run's case and cell under another id) are
// left out and counted in a warning; before the fix the report counted
// 9 runs over 3 cases.
func TestReportDropsForeign(t *testing.T) {
	cell := `"cell":{"model":"m","seed":1,"temperature":0,"tools":"needed","confirm":"auto","descriptions":"default"}`
	dir := planDir(t,
		`{"version":2,"id":"zzz","outcome":"pass"}`,
		`{"version":2,"id":"evil000000000000","case":"<b>evil</b>",`+cell+`,"outcome":"pass"}`,
		`{"version":2,"id":"0123456789abcdef","case":"a",`+cell+`,"outcome":"fail"}`,
	)
	s, err := Summarize(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Totals.Runs != 6 || s.Totals.Pass != 6 || s.Totals.Cases != 2 || s.Foreign != 3 {
		t.Errorf("totals %+v, foreign %d; want 6 passing runs over 2 cases, 3 foreign", s.Totals, s.Foreign)
	}
	if !strings.Contains(strings.Join(s.Warnings, "\n"), `ignored 3 record(s) of runs.jsonl that are not runs of the plan`) {
		t.Errorf("warnings %q", s.Warnings)
	}
	clean, err := Summarize(planDir(t))
	if err != nil || clean.Foreign != 0 || clean.Totals.Runs != 6 {
		t.Errorf("a clean directory: %+v, %v", clean, err)
	}
}
