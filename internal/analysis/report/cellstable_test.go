package report

import (
	"slices"
	"testing"

	"github.com/toolward/toolward/schema/cell"
)

// TestCellsTableFollowsAxes: the cells table has a column per axis of the
// cell key (every axis but the seed), in table order and headed as the
// table says, then the tool count; a Quiet axis only when a cell is off
// its default. Each row shows the cell's values in those columns.
func TestCellsTableFollowsAxes(t *testing.T) {
	t.Parallel()
	c := cell.Cell{Model: "m", Seed: 2, Temperature: 0.5, Tools: "n8", Confirm: "deny", Descriptions: "terse", Options: "deep"}
	var want, wantRow []string
	for _, a := range cell.Axes {
		if a.Name != cell.Seed {
			want = append(want, a.ColumnHeading())
			wantRow = append(wantRow, a.Format(c))
		}
	}
	heads := func(c cell.Cell) ([]string, []string) {
		s := &Summary{Cells: []CellSummary{{Cell: KeyOf(c)}}}
		tab := s.cellsTable()
		var h, r []string
		for i, col := range tab.Columns {
			h = append(h, col.Head.Text())
			r = append(r, tab.Rows[0][i].Text())
		}
		return h, r
	}
	h, r := heads(c)
	if !slices.Equal(h[:len(want)], want) || h[len(want)] != "offered" || !slices.Equal(r[:len(want)], wantRow) {
		t.Errorf("columns %v, row %v; want the axes %v then offered, values %v", h, r, want, wantRow)
	}
	c.Options = ""
	h, _ = heads(c)
	if slices.Contains(h, cell.Options) || len(h) != len(want)-1+8 {
		t.Errorf("default options: columns %v, want no options column", h)
	}
}
