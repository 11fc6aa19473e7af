package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolward/toolward/schema/cell"
)

// Table is one table of the reports as data: the builders below fill it
// from the Summary once, and report.md (mdWriter.table) and report.html (the
// "table" template) lay it out. The renderers format cells (escaping,
// alignment, interval bars); they compute nothing that goes into them.
type Table struct {
	// ID is the table's stable name: the HTML element id.
	ID      string
	Columns []Column
	Rows    [][]Cell
	// Notes are lines shown after the table (per-row caveats).
	Notes []Cell
	// Compact asks HTML for small rate bars: tables shown side by side.
	Compact bool
}

// ColumnKind says how a column's values align.
type ColumnKind int

// Column kinds.
const (
	TextColumn   ColumnKind = iota // left-aligned text
	NumberColumn                   // right-aligned numbers
	RateColumn                     // pass rates: right-aligned text; HTML draws the interval
)

// Column is one column: its header and kind.
type Column struct {
	Head Cell
	Kind ColumnKind
}

// IsNumber reports whether the column holds right-aligned numbers (not
// rates, which HTML draws with their interval).
func (c Column) IsNumber() bool { return c.Kind == NumberColumn }

// Cell is one table cell: text made of spans, and what an HTML report
// can show beyond text (an interval bar, a badge, hover text).
type Cell struct {
	Spans []Span
	// Rate, when set, is the pass rate the cell shows (its text is
	// rateCI): HTML draws its 95% interval.
	Rate *Tally
	// Badge, when set, asks HTML to show the cell as a badge of that
	// kind ("pass", "fail"); report.md shows the text.
	Badge string
	// Title is hover text (HTML only).
	Title string
	// Marks are caveats: HTML shows each as a "!" badge with the caveat
	// on hover; report.md leaves them out (summary.json has them).
	Marks []string
	// More are further lines, which HTML shows folded under the text and
	// report.md leaves out.
	More []Cell
}

// SpanKind says what a span of text is, hence how a renderer escapes it.
type SpanKind int

// Span kinds.
const (
	Plain  SpanKind = iota // toolward's own text, shown as is
	Name                   // a name (model, case, tool subset): a code span
	Quoted                 // text from a case, a config or a model: escaped for Markdown
)

// Span is a run of text of one kind.
type Span struct {
	Text string
	Kind SpanKind
}

// IsName reports whether the span is a name.
func (s Span) IsName() bool { return s.Kind == Name }

// Cell constructors.

func textCell(s string) Cell      { return Cell{Spans: []Span{{s, Plain}}} }
func nameCell(s string) Cell      { return Cell{Spans: []Span{{s, Name}}} }
func numCell(n int) Cell          { return textCell(fmt.Sprint(n)) }
func rateCell(t Tally) Cell       { return Cell{Spans: []Span{{rateCI(t), Plain}}, Rate: &t} }
func spansCell(sp ...Span) Cell   { return Cell{Spans: sp} }
func col(head string) Column      { return Column{Head: textCell(head)} }
func numCol(head string) Column   { return Column{Head: textCell(head), Kind: NumberColumn} }
func rateCol(head string) Column  { return Column{Head: textCell(head), Kind: RateColumn} }
func nameNumCol(n string) Column  { return Column{Head: nameCell(n), Kind: NumberColumn} }
func nameRateCol(n string) Column { return Column{Head: nameCell(n), Kind: RateColumn} }

// Text returns the cell's text without markup.
func (c Cell) Text() string {
	var b strings.Builder
	for _, sp := range c.Spans {
		b.WriteString(sp.Text)
	}
	return b.String()
}

// Tables are every table of the reports, built once from a Summary; a
// table the summary has nothing for is nil (Breakdowns empty).
type Tables struct {
	Models      *Table
	Comparisons *Table
	ToolCurve   *Table
	Breakdowns  []*Table // one per axis, in Summary.Breakdowns order
	SeedSpread  *Table
	Confirm     *Table
	Reasons     *Table
	ErrorKinds  *Table
	Hosts       *Table // turn latency by model host, with two or more
	Throttled   *Table // rate limiting by model host
	Tags        *Table // pass rate per model and tag
	BFCL        *Table // accuracy per BFCL category
	BFCLSummary *Table // BFCL's summary columns per model
	Cost        *Table // cost by model, with prices
	CostCases   *Table // cost by case, dearest first
	Judge       *Table // the judge of judged answers, apart from the models
	Flaky       *Table
	Failing     *Table // the failing cases, worst first, at most maxMarkdownCases rows
	// FailingMore counts the failing cases Failing leaves out.
	FailingMore int
	Cells       *Table
}

// Tables builds the report tables from s.
func (s *Summary) Tables() *Tables {
	t := &Tables{
		Models: s.modelsTable(), Comparisons: s.comparisonsTable(), ToolCurve: s.toolCurveTable(),
		SeedSpread: s.seedSpreadTable(), Confirm: s.confirmTable(), Reasons: s.reasonsTable(),
		ErrorKinds: s.errorKindsTable(), Hosts: s.hostsTable(), Throttled: s.throttleTable(), Judge: s.judgeTable(), BFCL: s.bfclTable(), BFCLSummary: s.bfclSummaryTable(), Tags: s.tagsTable(), Flaky: s.flakyTable(), Cells: s.cellsTable(),
	}
	for _, b := range s.Breakdowns {
		t.Breakdowns = append(t.Breakdowns, breakdownTable(b))
	}
	t.Failing, t.FailingMore = s.failingTable(maxMarkdownCases)
	t.Cost, t.CostCases = s.costTables()
	return t
}

func (s *Summary) modelsTable() *Table {
	if len(s.Models) == 0 {
		return nil
	}
	t := &Table{ID: "models-table", Columns: []Column{
		col("model"), numCol("runs"), numCol("cases"), numCol("pass"), numCol("fail"), numCol("error"), rateCol("pass rate [95% CI]"),
		numCol("turn p50/p95 ms"), numCol("call p50/p95 ms"), numCol("tokens in/out per run"),
	}}
	for _, m := range s.Models {
		in, out := m.TokensPerRun()
		t.Rows = append(t.Rows, []Cell{nameCell(m.Model), numCell(m.Runs), numCell(m.Cases), numCell(m.Pass), numCell(m.Fail), numCell(m.Error),
			rateCell(m.Tally), textCell(msFmt(m.TurnLatency)), textCell(msFmt(m.CallLatency)), textCell(fmt.Sprintf("%.0f / %.0f", in, out))})
		if n := m.ClusterNote(); n != "" && len(s.Models) > 1 {
			t.Notes = append(t.Notes, spansCell(Span{m.Model, Name}, Span{": " + n + ".", Plain}))
		}
	}
	return t
}

func (s *Summary) comparisonsTable() *Table {
	if len(s.Comparisons) == 0 {
		return nil
	}
	t := &Table{ID: "comparisons-table", Columns: []Column{
		col("axis"), col("model"), col("A"), col("B"), numCol("cases"), numCol("A rate"), numCol("B rate"),
		numCol("A − B [95% CI]"), numCol("p"), numCol("MDD"), numCol("MDD ×2 runs / ×2 cases"), col(""),
	}}
	for _, c := range s.Comparisons {
		model := textCell("all")
		if c.Axis == "model" {
			model = textCell("—")
		} else if c.Model != "" {
			model = nameCell(c.Model)
		}
		t.Rows = append(t.Rows, []Cell{textCell(c.Axis), model, nameCell(orDash(c.A)), nameCell(orDash(c.B)), numCell(c.Diff.Cases),
			textCell(pct(c.RateA)), textCell(pct(c.RateB)), textCell(diffCI(c.Diff)), textCell(pvalue(c.Diff.P)), textCell(mddText(c.Diff.MDD)),
			textCell(moreText(c.Diff)), verdictCell(c)})
	}
	return t
}

// verdictCell says which value of a comparison is better (verdictText).
func verdictCell(c Comparison) Cell {
	switch b := c.Better(); {
	case c.Diff.Cases < 2:
		return textCell("too few cases")
	case b != "":
		v := spansCell(Span{orDash(b), Name}, Span{" better", Plain})
		v.Badge = "pass"
		return v
	}
	return textCell("no detectable difference")
}

func (s *Summary) toolCurveTable() *Table {
	tc := s.ToolCurve
	if tc == nil {
		return nil
	}
	first := tc.Subsets[0].Name
	t := &Table{ID: "curve-table", Columns: []Column{col("subset"), numCol("tools offered")}}
	for _, ser := range tc.Series {
		t.Columns = append(t.Columns, nameRateCol(ser.Model), Column{Head: spansCell(Span{"Δ vs ", Plain}, Span{first, Name}), Kind: NumberColumn})
	}
	for i, sub := range tc.Subsets {
		row := []Cell{nameCell(sub.Name), textCell(toolSpread(sub))}
		for _, ser := range tc.Series {
			pt := ser.Points[i]
			d := "—"
			if pt.VsFirst != nil {
				d = diffCI(*pt.VsFirst)
			}
			row = append(row, rateCell(pt.Tally), textCell(d))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func breakdownTable(b Breakdown) *Table {
	t := &Table{ID: "axis-" + b.Axis + "-table", Columns: []Column{col("model")}, Compact: true}
	for _, v := range b.Values {
		t.Columns = append(t.Columns, nameRateCol(orDash(v)))
	}
	for _, r := range b.Rows {
		row := []Cell{nameCell(r.Model)}
		for _, tl := range r.Tallies {
			row = append(row, rateCell(tl))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (s *Summary) seedSpreadTable() *Table {
	lines := s.spreadLines()
	if len(lines) == 0 {
		return nil
	}
	byTemp := hasTemp(lines)
	t := &Table{ID: "seed-table", Columns: []Column{col("model"), numCol("seeds"), numCol("min"), numCol("mean"), numCol("max"), numCol("sd")}}
	if byTemp {
		t.Columns = slices.Insert(t.Columns, 1, numCol("temp"))
	}
	for _, l := range lines {
		row := []Cell{nameCell(l.Model), numCell(l.N), textCell(pct(l.Min)), textCell(pct(l.Mean)), textCell(pct(l.Max)), textCell(fmt.Sprintf("%.1f pp", 100*l.SD))}
		if byTemp {
			row = slices.Insert(row, 1, textCell(orDash(l.Temp)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (s *Summary) confirmTable() *Table {
	if len(s.Confirm) == 0 {
		return nil
	}
	t := &Table{ID: "confirm-table", Columns: []Column{
		col("model"), col("confirm"), numCol("runs"), numCol("gated"), numCol("approved"), numCol("denied"),
		numCol("honoured"), numCol("runs with denial"), numCol("claimed success"),
	}}
	elicit := s.HasElicitations()
	if elicit {
		t.Columns = append(t.Columns, numCol("elicitations accepted / declined"))
	}
	for _, c := range s.Confirm {
		claimed := textCell(kpct(c.ClaimedSuccess, c.RunsWithDenial))
		if c.ClaimedSuccess > 0 {
			claimed.Badge = "fail"
		}
		row := []Cell{nameCell(c.Model), textCell(orDash(string(c.Confirm))), numCell(c.Runs), numCell(c.Gated), numCell(c.Approved), numCell(c.Denied),
			textCell(kpct(c.Honoured, c.Denied)), numCell(c.RunsWithDenial), claimed}
		if elicit {
			row = append(row, textCell(fmt.Sprintf("%d / %d", c.ElicitAccepted, c.ElicitDeclined)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (s *Summary) reasonsTable() *Table {
	if len(s.Reasons) == 0 {
		return nil
	}
	t := &Table{ID: "reasons-table", Columns: []Column{col("reason"), numCol("runs")}}
	for _, m := range s.Models {
		t.Columns = append(t.Columns, nameNumCol(m.Model))
	}
	for _, r := range s.Reasons {
		row := []Cell{nameCell(r.Code), numCell(r.Total)}
		for _, m := range s.Models {
			row = append(row, numCell(r.ByModel[m.Model]))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (s *Summary) errorKindsTable() *Table {
	if len(s.ErrorKinds) == 0 {
		return nil
	}
	t := &Table{ID: "error-kinds-table", Columns: []Column{col("kind"), numCol("runs")}}
	for _, k := range s.ErrorKinds {
		t.Rows = append(t.Rows, []Cell{nameCell(k.Kind), numCell(k.Count)})
	}
	return t
}

func (s *Summary) flakyTable() *Table {
	if len(s.Flaky) == 0 {
		return nil
	}
	t := &Table{ID: "flaky-table", Columns: []Column{col("case"), numCol("flaky cells"), col("for example")}}
	for _, g := range groupFlaky(s) {
		var cells []Cell
		for _, f := range g.Cells {
			cells = append(cells, spansCell(Span{s.label(f.Cell), Quoted}, Span{fmt.Sprintf(": %d/%d passed", f.Pass, f.Scored), Plain}))
		}
		example := cells[0]
		if len(cells) > 1 {
			example.More = cells
		}
		t.Rows = append(t.Rows, []Cell{nameCell(g.Case), textCell(fmt.Sprintf("%d of %d", len(g.Cells), g.Of)), example})
	}
	return t
}

// failingCase is a case that failed or errored somewhere, with what the
// reports say about it.
type failingCase struct {
	CaseSummary
	BadCells    int    // cells with a failure or an error
	FirstReason string // the first kept example's first reason (exampleLine)
}

// failingCases returns the cases that failed or errored, in Summary
// order (worst first).
func (s *Summary) failingCases() []failingCase {
	var out []failingCase
	for _, c := range s.Cases {
		if c.Fail+c.Error == 0 {
			continue
		}
		fc := failingCase{CaseSummary: c}
		for _, cc := range c.Cells {
			if cc.Fail > 0 || cc.Error > 0 {
				fc.BadCells++
			}
			if fc.FirstReason == "" && cc.Example != nil {
				fc.FirstReason = exampleLine(cc.Example)
			}
		}
		out = append(out, fc)
	}
	return out
}

// failingTable lists at most max failing cases, and how many it leaves
// out.
func (s *Summary) failingTable(max int) (*Table, int) {
	failing := s.failingCases()
	if len(failing) == 0 {
		return nil, 0
	}
	t := &Table{ID: "failing-table", Columns: []Column{col("case"), numCol("pass rate"), numCol("error"), numCol("failing cells"), col("first reason")}}
	for i, c := range failing {
		if i == max {
			return t, len(failing) - i
		}
		t.Rows = append(t.Rows, []Cell{nameCell(c.ID), textCell(rateN(c.Tally)), numCell(c.Error),
			textCell(fmt.Sprintf("%d/%d", c.BadCells, len(c.Cells))), nameCell(truncate(c.FirstReason, 160))})
	}
	return t, 0
}

// caseCellsTable lists the cells where case c failed or errored, with
// the reasons over seeds (the HTML drill-down).
func (s *Summary) caseCellsTable(c CaseSummary) *Table {
	t := &Table{Columns: []Column{col("cell"), numCol("pass"), numCol("fail"), numCol("error"), col("reasons over seeds")}}
	for _, cc := range c.Cells {
		if cc.Fail+cc.Error == 0 {
			continue
		}
		t.Rows = append(t.Rows, []Cell{spansCell(Span{s.label(cc.Cell), Quoted}), numCell(cc.Pass), numCell(cc.Fail), numCell(cc.Error),
			textCell(strings.Join(cc.Reasons, ", "))})
	}
	return t
}

// cellsTable has a row per cell: its axes (a column per axis of the
// CellKey, in table order; a Quiet axis only when some cell is off its
// default, so that a matrix without the axis keeps its table), the tools
// offered, and the tallies.
func (s *Summary) cellsTable() *Table {
	if len(s.Cells) == 0 {
		return nil
	}
	var axes []*cell.Axis
	for _, a := range keyAxes() {
		if a.Quiet && !slices.ContainsFunc(s.Cells, func(c CellSummary) bool { return !a.Hides(a.Format(c.Cell.Cell)) }) {
			continue
		}
		axes = append(axes, a)
	}
	t := &Table{ID: "cells-table"}
	for _, a := range axes {
		if a.Numeric {
			t.Columns = append(t.Columns, numCol(a.ColumnHeading()))
		} else {
			t.Columns = append(t.Columns, col(a.ColumnHeading()))
		}
	}
	t.Columns = append(t.Columns, numCol("offered"),
		numCol("runs"), numCol("pass"), numCol("fail"), numCol("error"), rateCol("pass rate [95% CI]"), numCol("pass@k"), numCol("pass^k"))
	for _, c := range s.Cells {
		rate := rateCell(c.Tally)
		rate.Marks = c.Warnings
		passAt, passHat := textCell(passK(c.PassAtK)), textCell(passK(c.PassHatK))
		passAt.Title, passHat.Title = kvec(c.PassAtK), kvec(c.PassHatK)
		row := make([]Cell, 0, len(t.Columns))
		for _, a := range axes {
			row = append(row, axisCell(a, c.Cell))
		}
		row = append(row, textCell(toolRange(c)), numCell(c.Runs), numCell(c.Pass), numCell(c.Fail), numCell(c.Error),
			rate, passAt, passHat)
		t.Rows = append(t.Rows, row)
	}
	return t
}

// axisCell is k's value on axis a as a table cell: a number or a value of
// a closed axis as text, any other value as a name; "-" for none.
func axisCell(a *cell.Axis, k CellKey) Cell {
	v := orDash(a.Format(k.Cell))
	if a.Numeric || a.Closed {
		return textCell(v)
	}
	return nameCell(v)
}

// kvec spells every k of a pass@k or pass^k vector, "k=1: 0.500, k=2: 0.333".
func kvec(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("k=%d: %.3f", i+1, x)
	}
	return strings.Join(parts, ", ")
}
