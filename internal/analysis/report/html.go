package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"

	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

//go:embed report.html.tmpl
var htmlSource string

// maxShown bounds each model-generated string shown in the drill-down;
// runs.jsonl has the rest.
const maxShown = 4000

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct":                  pct,
	"bar":                  bar,
	"rateClass":            rateClass,
	"rateCI":               rateCI,
	"clip":                 func(s string) string { return truncate(s, maxShown) },
	"args":                 argsJSON,
	"join":                 strings.Join,
	"mul100":               func(f float64) float64 { return 100 * f },
	"sub":                  func(a, b float64) float64 { return a - b },
	"itof":                 func(i int) float64 { return float64(i) },
	"addf":                 func(f, d float64) float64 { return f + d },
	"mid":                  func(a, b float64) float64 { return (a + b) / 2 },
	"headlineCmp":          func(c Comparison) string { return headlineComparisonText(c, plain) },
	"rescored":             func(r *Rescored) string { return r.Text(plain) },
	"interval":             intervalPhrase,
	"curveNote":            func(tc *ToolCurve) string { return curveExplainer(tc, plain) },
	"clusterExplainer":     func() string { return clusterExplainer },
	"comparisonsExplainer": func() string { return comparisonsExplainer },
	"hostsNote":            func() string { return hostsExplainer },
	"throttleNote":         func() string { return throttleExplainer },
	"judgeNote":            func() string { return judgeExplainer },
	"bfclNote":             func() string { return bfclExplainer },
	"bfclSummaryNote":      func() string { return bfclSummaryExplainer },
	"tagsNote":             func() string { return tagsExplainer },
	"claim":                func() string { return ClaimPattern.String() },
	"negation":             func() string { return NegationPattern.String() },
	"tally":                func(t *Tally) Tally { return *t },
	"structured": func(v any) string {
		if v == nil {
			return ""
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Sprint(v)
		}
		return truncate(string(b), maxShown)
	},
}).Parse(htmlSource))

// htmlView is what the template renders: the summary with its tables,
// chart geometry and the drill-down arranged by turn.
type htmlView struct {
	S       *Summary
	T       *Tables
	Curve   *curveChart
	Spread  *spreadChart
	Reasons *reasonChart
	Failing []caseView
	Passing int // cases that never failed nor errored
	// MaxOpenCells is the largest cells table shown unfolded.
	MaxOpenCells int
}

// caseView is one failing case in the drill-down.
type caseView struct {
	failingCase
	Anchor     string
	CellsTable *Table // the cells where it failed or errored
	Examples   []exampleView
	// ShowAll is the toolward show command that prints every run of the
	// case, passing ones too: the report keeps one trace per failing
	// cell, so its size stays bounded however many runs there are.
	ShowAll string
	// ShowRun is the toolward show command for one run (RUN_ID).
	ShowRun string
}

type exampleView struct {
	Label string
	// ShowCell prints every run (each seed) of the example's cell.
	ShowCell string
	*Example
	Turns []turnView
	// Orphans are calls whose turn index is out of range.
	Orphans []record.Call
	// LastUsers are the user messages of a conversation after its last
	// model turn (a stop message, one past max_turns).
	LastUsers []record.UserTurn
}

type turnView struct {
	N int
	// Final is set on the last turn when its content is the final
	// answer, shown once below the turns.
	Final bool
	// Users are the user messages of a conversation just before this
	// model turn, shown above it.
	Users []record.UserTurn
	record.Turn
	Calls []record.Call
}

// WriteHTML writes report.html: self-contained (inline CSS and SVG, no
// scripts, nothing loaded from the network). Every string that came from a
// model, a case or a tool is escaped by html/template and shown
// display-safe (displayWriter).
func (s *Summary) WriteHTML(w io.Writer) error {
	return writeDisplaySafe(w, s.writeHTML)
}

func (s *Summary) writeHTML(w io.Writer) error {
	v := htmlView{
		S: s, T: s.Tables(), Curve: buildCurve(s.ToolCurve), Spread: buildSpread(s.spreadLines()),
		Reasons: buildReasons(s.Reasons), MaxOpenCells: maxOpenCells,
	}
	v.Passing = len(s.Cases)
	for i, c := range s.failingCases() {
		v.Passing--
		v.Failing = append(v.Failing, s.newCaseView(c, fmt.Sprintf("case-%d", i)))
	}
	return htmlTemplate.Execute(w, v)
}

// newCaseView arranges a failing case for the drill-down: its failing
// cells and the kept trace of each.
func (s *Summary) newCaseView(c failingCase, anchor string) caseView {
	cv := caseView{failingCase: c, Anchor: anchor, CellsTable: s.caseCellsTable(c.CaseSummary),
		ShowAll: ShowCommand(s.Dir, c.ID, nil), ShowRun: ShowRun(s.Dir, "RUN_ID")}
	for _, cc := range c.Cells {
		if cc.Example != nil {
			ev := newExampleView(s.label(cc.Cell), cc.Example)
			ev.ShowCell = ShowCommand(s.Dir, c.ID, cc.Cell.Cell.Pool(cell.Seed).Values())
			cv.Examples = append(cv.Examples, ev)
		}
	}
	return cv
}

// flakyGroup is one case's flaky cells.
type flakyGroup struct {
	Case  string
	Cells []Flaky
	Of    int // cells the case ran in
}

// groupFlaky groups Summary.Flaky by case, most flaky cells first.
func groupFlaky(s *Summary) []flakyGroup {
	idx := map[string]int{}
	var gs []flakyGroup
	for _, f := range s.Flaky {
		i, ok := idx[f.Case]
		if !ok {
			i = len(gs)
			idx[f.Case] = i
			gs = append(gs, flakyGroup{Case: f.Case})
		}
		gs[i].Cells = append(gs[i].Cells, f)
	}
	for i := range gs {
		for _, c := range s.Cases {
			if c.ID == gs[i].Case {
				gs[i].Of = len(c.Cells)
			}
		}
	}
	sort.SliceStable(gs, func(i, j int) bool { return len(gs[i].Cells) > len(gs[j].Cells) })
	return gs
}

func newExampleView(label string, e *Example) exampleView {
	ev := exampleView{Label: label, Example: e}
	for i, t := range e.Trace.Turns {
		final := i == len(e.Trace.Turns)-1 && t.Content == e.Trace.Answer
		// Numbered from 0, as runs.jsonl's calls[].turn, report.md and
		// toolward show number them.
		ev.Turns = append(ev.Turns, turnView{N: i, Turn: t, Final: final})
	}
	for _, c := range e.Trace.Calls {
		if c.Turn >= 0 && c.Turn < len(ev.Turns) {
			ev.Turns[c.Turn].Calls = append(ev.Turns[c.Turn].Calls, c)
		} else {
			ev.Orphans = append(ev.Orphans, c)
		}
	}
	for _, u := range e.Trace.Users {
		if u.Before >= 0 && u.Before < len(ev.Turns) {
			ev.Turns[u.Before].Users = append(ev.Turns[u.Before].Users, u)
		} else {
			ev.LastUsers = append(ev.LastUsers, u)
		}
	}
	return ev
}

// plain formats a name for text that html/template escapes as a whole.
func plain(s string) string { return s }

// argsJSON renders a call's arguments as indented JSON, or the raw text
// the model sent when they were not an object.
func argsJSON(c record.Call) string {
	if c.Args == nil {
		if c.RawArgs != "" {
			return truncate(c.RawArgs, maxShown)
		}
		return "{}"
	}
	b, err := json.MarshalIndent(c.Args, "", "  ")
	if err != nil {
		return fmt.Sprint(c.Args)
	}
	return truncate(string(b), maxShown)
}

// ShowCommand is the toolward show command that prints every run of
// case id in result directory dir ("": ".") in the cell given by axis
// values (nil: in every cell; an axis pooled away, "" or absent: any
// value). Values are quoted for a POSIX shell and escaped for the
// selector language (a literal *, ? or \).
func ShowCommand(dir, id string, axes map[string]string) string {
	var b strings.Builder
	b.WriteString(ShowRun(dir, "--case "+shellQuote(globLiteral(id))))
	for _, a := range cell.Names() {
		v, ok := axes[a]
		if !ok || v == "" || a == cell.Seed {
			continue
		}
		b.WriteString(" --filter " + shellQuote(a+"="+globLiteral(v)))
	}
	b.WriteString(" --limit 0")
	return b.String()
}

// ShowRun is the toolward show command for dir ("": ".") and then what
// (a run id, or --case and filters).
func ShowRun(dir, what string) string {
	if dir == "" {
		dir = "."
	}
	return "toolward show " + shellQuote(dir) + " " + what
}

// globLiteral escapes the selector language's metacharacters.
func globLiteral(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`)
	return r.Replace(s)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/=@+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
