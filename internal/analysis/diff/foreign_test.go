package diff

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

// planSide writes a result directory of a plan of the given cases (one
// model, one seed) holding a passing record of each case in runs, and
// the raw lines extra.
func planSide(t *testing.T, runs []string, extra ...string) string {
	t.Helper()
	cfg := &schema.Config{Name: "p", Matrix: schema.Matrix{}.With(cell.Model, "m")}
	p, err := plan.New(cfg, []*schema.Case{{ID: "a", RunDigest: "da"}, {ID: "b", RunDigest: "db"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := results.WriteMeta(dir, &results.Meta{Version: results.MetaVersion, Config: cfg, Cases: map[string]string{"a": "da", "b": "db"}}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	for i := range p.Len() {
		r := p.Run(i)
		if !strings.Contains(strings.Join(runs, ","), r.Case.ID) {
			continue
		}
		if err := w.Write(&record.Record{ID: r.ID, Case: r.Case.ID, Cell: r.Cell, Outcome: record.Pass}); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range extra {
		buf.WriteString(l + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "runs.jsonl"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestForeignCannotFillAGap: a record appended by hand to the new side,
// with a missing run's case and cell but not its id, neither pairs nor
// hides the gap from the gate; it is ignored with a warning.
func TestForeignCannotFillAGap(t *testing.T) {
	base := planSide(t, []string{"a", "b"})
	fake := `{"version":2,"id":"0123456789abcdef","case":"b","cell":{"model":"m","seed":1,"temperature":0,"tools":"needed","confirm":"auto","descriptions":"default"},"outcome":"pass"}`
	nw := planSide(t, []string{"a"}, fake)
	r, err := Compare(base, nw, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if r.Paired != 1 || strings.Join(r.DroppedCases, ",") != "b" || r.New.Runs != 1 {
		t.Errorf("paired %d, dropped %v, new runs %d", r.Paired, r.DroppedCases, r.New.Runs)
	}
	if err := r.GateWith(GateOptions{}); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("Gate() = %v, want incomplete", err)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), `ignored 1 record(s) of runs.jsonl that are not runs of the plan`) {
		t.Errorf("warnings %q", r.Warnings)
	}
}
