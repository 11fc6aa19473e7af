package report

import (
	"strings"
	"testing"

	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// TestRunCSV: a column per axis of the cell table, and no cell a
// spreadsheet would evaluate as a formula; negative numbers stay numbers.
func TestRunCSV(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	w, err := NewRunCSV(&b)
	if err != nil {
		t.Fatal(err)
	}
	rec := &record.Record{ID: "r1", Case: "=HYPERLINK(\"x\")", Tags: []string{"@a", "b"}, Outcome: record.Pass, Attempts: 1,
		Cell: record.Cell{Model: "-m", Seed: -3}}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if head := strings.Split(lines[0], ","); strings.Join(head[3:3+len(cell.Axes)], ",") != strings.Join(cell.Names(), ",") {
		t.Errorf("header %s", lines[0])
	}
	if !strings.HasPrefix(lines[1], `r1,"'=HYPERLINK(""x"")",'@a;b,'-m,-3,`) {
		t.Errorf("row %s", lines[1])
	}
}
