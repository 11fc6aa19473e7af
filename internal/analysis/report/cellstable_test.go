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
	// A cell off the default of every axis.
	var c cell.Cell
	var want, wantRow []string
	for _, a := range cell.Axes {
		v := "x-" + a.Name
		switch {
		case a.Numeric:
			v = "2"
		case a.Closed:
			v = a.Known[len(a.Known)-1]
		}
		var err error
		if c, err = c.With(a.Name, v); err != nil {
			t.Fatal(err)
		}
		if a.Name != cell.Seed {
			want = append(want, a.ColumnHeading())
			wantRow = append(wantRow, v)
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

// TestBreakdownAxesFollowTable: a breakdown for every axis but the model,
// in table order but for the temperature before the seed.
func TestBreakdownAxesFollowTable(t *testing.T) {
	t.Parallel()
	var want []string
	for _, n := range cell.Names() {
		if n != cell.Model {
			want = append(want, n)
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(axisNames)), slices.Sorted(slices.Values(want))) || axisNames[0] != cell.Temperature || axisNames[1] != cell.Seed {
		t.Errorf("breakdown axes %v, want %v with the temperature first", axisNames, want)
	}
}
