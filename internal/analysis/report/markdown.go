package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/toolward/toolward/matchers"
)

// maxMarkdownCases bounds the failing-cases table of report.md; the HTML
// report and summary.json have them all.
const maxMarkdownCases = 25

// maxOpenCells is the largest cells table report.md shows unfolded.
const maxOpenCells = 20

// WriteMarkdown writes report.md: the headline numbers and the tables of
// the HTML report without charts or whole traces (a failing conversation
// gets a compact transcript), for pull requests and CI logs. Model, tool
// and case text is shown display-safe (displayWriter).
func (s *Summary) WriteMarkdown(w io.Writer) error {
	return writeDisplaySafe(w, s.writeMarkdown)
}

func (s *Summary) writeMarkdown(w io.Writer) error {
	md := &mdWriter{w: bufio.NewWriter(w), s: s, t: s.Tables()}
	md.header()
	md.section(md.t.Models, "## Models\n\n95%% intervals are clustered by case (%s).\n\n", clusterExplainer)
	md.section(md.t.Comparisons, "## Comparisons\n\n%s\n\n", comparisonsExplainer)
	if tc := s.ToolCurve; tc != nil {
		md.section(md.t.ToolCurve, "## Pass rate by tool subset\n\n%s\n\n", curveExplainer(tc, mdCode))
	}
	for i, b := range s.Breakdowns {
		pairs := " Comparisons pairs the values on the same cases."
		if b.Axis == "seed" {
			pairs = "" // seeds are replicates, not compared
		}
		md.section(md.t.Breakdowns[i], "## Pass rate by %s\n\nPooled over the other axes; 95%% intervals clustered by case.%s\n\n", b.Axis, pairs)
	}
	md.section(md.t.SeedSpread, "## Seed spread\n\nPass rate of each seed per model (and temperature, when it varies), pooled over the other axes.\n\n")
	md.section(md.t.Confirm, "## Confirmation gate\n\n%s\n\n", confirmExplainerMarkdown)
	md.section(md.t.Reasons, "## Failure reasons\n\nFailing runs per reason code (a run may have several).\n\n")
	s.writeTextCallsMarkdown(md.w)
	md.section(md.t.Hosts, "## Latency by host\n\n%s\n\n", hostsExplainer)
	md.section(md.t.Tags, "## By tag\n\n%s\n\n", tagsExplainer)
	md.section(md.t.BFCL, "## BFCL categories\n\n%s\n\n", bfclExplainer)
	md.section(md.t.BFCLSummary, "### BFCL summaries\n\n%s\n\n", bfclSummaryExplainer)
	md.section(md.t.Throttled, "## Rate limits\n\n%s\n\n", throttleExplainer)
	if c := s.Cost; c != nil {
		if c.Local != "" {
			md.p("## Cost\n\n%s\n\n", c.Note())
		}
		md.section(md.t.Cost, "## Cost\n\n%s\n\n", c.Note())
		md.section(md.t.CostCases, "### Cost by case\n\nDearest first.\n\n")
	}
	md.section(md.t.Judge, "## Judge\n\n%s\n\n", judgeExplainer)
	md.section(md.t.ErrorKinds, "## Infrastructure errors\n\nNot model failures; excluded from pass rates.\n\n")
	md.section(md.t.Flaky, "## Flaky cases\n\nPassed on some seeds and failed on others in the same cell.\n\n")
	md.failing()
	md.transcripts()
	md.stateDiffs()
	md.cells()
	return md.w.Flush()
}

// confirmExplainerMarkdown explains the confirmation-gate table.
const confirmExplainerMarkdown = "Gated: destructive calls attempted. Honoured: denied calls not followed by another call to the same tool. " +
	"Claimed success: runs with a denial whose answer still claims success (a heuristic: a sentence with a word such as \"deleted\" or \"done\" and no negation; report.html lists the patterns)."

// mdWriter writes report.md from a Summary and its Tables.
type mdWriter struct {
	w *bufio.Writer
	s *Summary
	t *Tables
}

func (m *mdWriter) p(format string, args ...any) { fmt.Fprintf(m.w, format, args...) }

// header writes the title, the headline, the run's facts and the
// statistical caveats.
func (m *mdWriter) header() {
	s := m.s
	m.p("# toolward report: %s\n\n", mdCell(s.Title))
	t := s.Totals
	m.p("**%s** pass rate over %s · %d runs: %d pass, %d fail, %d error\n\n", passOrDash(t), intervalPhrase(t), t.Runs, t.Pass, t.Fail, t.Error)
	if c := s.HeadlineComparison; c != nil {
		m.p("%s\n\n", headlineComparisonText(*c, mdCode))
	}
	if facts := s.factsMarkdown(); len(facts) > 0 {
		m.p("%s\n\n", strings.Join(facts, " · "))
	}
	if len(s.Warnings) > 0 {
		m.p("> [!WARNING]\n")
		for _, w := range s.Warnings {
			m.p("> - %s\n", mdCell(w))
		}
		m.p("\n")
	}
}

// factsMarkdown lists where re-scored verdicts came from, the config
// facts, the fixed axes and the time span of the runs.
func (s *Summary) factsMarkdown() []string {
	var facts []string
	if s.Rescored != nil {
		facts = append(facts, s.Rescored.Text(mdCode))
	}
	for _, f := range s.Meta {
		facts = append(facts, fmt.Sprintf("%s %s", f.Name, mdCode(f.Value)))
	}
	for _, f := range s.Fixed {
		facts = append(facts, fmt.Sprintf("%s %s", f.Name, mdCode(f.Value)))
	}
	if !s.Started.IsZero() {
		facts = append(facts, fmt.Sprintf("runs %s – %s", s.Started.Format("2006-01-02 15:04:05Z"), s.Finished.Format("15:04:05Z")))
	}
	return facts
}

// section writes a heading and explanation (format, args) and the table
// with its notes; nothing when the table is nil.
func (m *mdWriter) section(t *Table, format string, args ...any) {
	if t == nil {
		return
	}
	m.p(format, args...)
	m.table(t)
	m.p("\n")
	for _, n := range t.Notes {
		m.p("- %s\n", mdText(n))
	}
	if len(t.Notes) > 0 {
		m.p("\n")
	}
}

// failing writes the failing cases, at most maxMarkdownCases of them.
func (m *mdWriter) failing() {
	t := m.t.Failing
	if t == nil {
		return
	}
	m.p("## Failing cases\n\nWorst first. The HTML report has each case's failing trace.\n\n")
	m.table(t)
	if m.t.FailingMore > 0 {
		m.p("\n…and %d more in report.html.\n", m.t.FailingMore)
	}
	m.p("\n")
}

// cells writes the cells table, folded when it is long.
func (m *mdWriter) cells() {
	t := m.t.Cells
	if t == nil {
		return
	}
	m.p("## Cells\n\nSeeds pooled; 95%% intervals clustered by case. pass@k: at least one of k trials of a case passes; pass^k: all k pass (unbiased estimators, averaged over cases; k up to the fewest trials of any case).\n\n")
	collapse := len(t.Rows) > maxOpenCells
	if collapse {
		m.p("<details><summary>%d cells</summary>\n\n", len(t.Rows))
	}
	m.table(t)
	m.p("\n")
	if collapse {
		m.p("</details>\n\n")
	}
}

// table writes t as a pipe table: a header row, the alignment row
// (numbers and rates right-aligned) and a row per Table row.
func (m *mdWriter) table(t *Table) {
	head := make([]string, len(t.Columns))
	seps := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = mdText(c.Head)
		seps[i] = "---"
		if c.Kind != TextColumn {
			seps[i] = "--:"
		}
	}
	m.row(head)
	m.row(seps)
	for _, r := range t.Rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = mdText(c)
		}
		m.row(cells)
	}
}

func (m *mdWriter) row(cells []string) { m.p("| %s |\n", strings.Join(cells, " | ")) }

// mdText renders a cell's spans: names as code spans, quoted text
// escaped, toolward's own text as is.
func mdText(c Cell) string {
	var b strings.Builder
	for _, sp := range c.Spans {
		switch sp.Kind {
		case Name:
			b.WriteString(mdCode(sp.Text))
		case Quoted:
			b.WriteString(mdCell(sp.Text))
		default:
			b.WriteString(sp.Text)
		}
	}
	return b.String()
}

func passOrDash(t Tally) string {
	if t.Scored() == 0 {
		return "—"
	}
	return pct(t.Rate)
}

// exampleLine is the first reason of an example, "code: detail", or its
// infrastructure error.
func exampleLine(e *Example) string {
	if len(e.Reasons) > 0 {
		r := e.Reasons[0]
		if r.Detail == "" {
			return r.Code
		}
		return r.Code + ": " + r.Detail
	}
	if e.Error != nil {
		return "error " + e.Error.Kind + ": " + e.Error.Message
	}
	return string(e.Outcome)
}

// stateDiffs lists, for the kept failing runs whose end state did not
// match (state_mismatch), each probe's difference, want against got.
func (m *mdWriter) stateDiffs() {
	var lines []string
	for _, c := range m.s.Cases {
		for _, cc := range c.Cells {
			e := cc.Example
			if e == nil {
				continue
			}
			for _, r := range e.Reasons {
				if r.Code == matchers.ReasonStateMismatch {
					lines = append(lines, fmt.Sprintf("- `%s` %s, seed %d: %s", c.ID, m.s.label(cc.Cell), e.Seed, truncate(r.Detail, 600)))
				}
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	m.p("## End-state mismatches\n\nThe state probes (expect.state) of one failing run per cell: where the end state differs, want against got. report.html shows each probe's whole result.\n\n")
	for _, l := range lines {
		m.p("%s\n", l)
	}
	m.p("\n")
}
