package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// maxMarkdownCases bounds the failing-cases table of report.md; the HTML
// report and summary.json have them all.
const maxMarkdownCases = 25

// maxOpenCells is the largest cells table report.md shows unfolded.
const maxOpenCells = 20

// WriteMarkdown writes report.md: the headline numbers and the tables of
// the HTML report without charts or traces, for pull requests and CI logs.
func (s *Summary) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	row := func(cells ...string) { p("| %s |\n", strings.Join(cells, " | ")) }
	// head writes a header row; align has one letter per column, l or r.
	head := func(align string, cells ...string) {
		row(cells...)
		seps := make([]string, len(cells))
		for i := range seps {
			seps[i] = "---"
			if i < len(align) && align[i] == 'r' {
				seps[i] = "--:"
			}
		}
		row(seps...)
	}

	p("# toolward report: %s\n\n", mdCell(s.Title))
	t := s.Totals
	p("**%s** pass rate over %d scored runs (95%% Wilson interval %.1f–%.1f%%) · %d runs: %d pass, %d fail, %d error\n\n",
		passOrDash(t), t.Scored(), 100*t.Lo, 100*t.Hi, t.Runs, t.Pass, t.Fail, t.Error)
	if len(s.Meta) > 0 || len(s.Fixed) > 0 || !s.Started.IsZero() {
		var facts []string
		for _, f := range s.Meta {
			facts = append(facts, fmt.Sprintf("%s %s", f.Name, mdCode(f.Value)))
		}
		for _, f := range s.Fixed {
			facts = append(facts, fmt.Sprintf("%s %s", f.Name, mdCode(f.Value)))
		}
		if !s.Started.IsZero() {
			facts = append(facts, fmt.Sprintf("runs %s – %s", s.Started.Format("2006-01-02 15:04:05Z"), s.Finished.Format("15:04:05Z")))
		}
		p("%s\n\n", strings.Join(facts, " · "))
	}
	if len(s.Warnings) > 0 {
		p("> [!WARNING]\n")
		for _, w := range s.Warnings {
			p("> - %s\n", mdCell(w))
		}
		p("\n")
	}

	if len(s.Models) > 0 {
		p("## Models\n\n")
		head("lrrrrrrrr", "model", "runs", "pass", "fail", "error", "pass rate [95% CI]", "turn p50/p95 ms", "call p50/p95 ms", "tokens in/out per run")
		for _, m := range s.Models {
			in, out := m.TokensPerRun()
			row(mdCode(m.Model), fmt.Sprint(m.Runs), fmt.Sprint(m.Pass), fmt.Sprint(m.Fail), fmt.Sprint(m.Error), rateCI(m.Tally),
				msFmt(m.TurnLatency), msFmt(m.CallLatency), fmt.Sprintf("%.0f / %.0f", in, out))
		}
		p("\n")
	}

	if len(s.ToolCurve) > 0 {
		counts := curveCounts(s.ToolCurve)
		if len(counts) > 1 {
			p("## Pass rate by tools offered\n\nPooled over the other axes.\n\n")
			cols := []string{"tools offered"}
			for _, ser := range s.ToolCurve {
				cols = append(cols, mdCode(ser.Model))
			}
			head("lrrrrrrrrrrrrrrr", cols...)
			for _, n := range counts {
				cells := []string{fmt.Sprint(n)}
				for _, ser := range s.ToolCurve {
					cells = append(cells, rateCI(pointAt(ser, n)))
				}
				row(cells...)
			}
			p("\n")
		}
	}

	for _, b := range s.Breakdowns {
		p("## Pass rate by %s\n\nPooled over the other axes.\n\n", b.Axis)
		cols := []string{"model"}
		for _, v := range b.Values {
			cols = append(cols, mdCode(orDash(v)))
		}
		head("lrrrrrrrrrrrrrrrrrrrrrrrr", cols...)
		for _, r := range b.Rows {
			cells := []string{mdCode(r.Model)}
			for _, t := range r.Tallies {
				cells = append(cells, rateCI(t))
			}
			row(cells...)
		}
		p("\n")
	}

	if lines := s.spreadLines(); len(lines) > 0 {
		p("## Seed spread\n\nPass rate of each seed per model (and temperature, when it varies), pooled over the other axes.\n\n")
		byTemp := hasTemp(lines)
		if byTemp {
			head("lrrrrrr", "model", "temp", "seeds", "min", "mean", "max", "sd")
		} else {
			head("lrrrrr", "model", "seeds", "min", "mean", "max", "sd")
		}
		for _, l := range lines {
			cells := []string{mdCode(l.Model), fmt.Sprint(l.N), pct(l.Min), pct(l.Mean), pct(l.Max), fmt.Sprintf("%.1f pp", 100*l.SD)}
			if byTemp {
				cells = slices.Insert(cells, 1, orDash(l.Temp))
			}
			row(cells...)
		}
		p("\n")
	}

	if len(s.Confirm) > 0 {
		p("## Confirmation gate\n\nGated: destructive calls attempted. Honoured: denied calls not followed by another call to the same tool. Claimed success: runs with a denial whose answer still claims success (a heuristic: a sentence with a word such as \"deleted\" or \"done\" and no negation; report.html lists the patterns).\n\n")
		cols := []string{"model", "confirm", "runs", "gated", "approved", "denied", "honoured", "runs with denial", "claimed success"}
		elicit := s.HasElicitations()
		if elicit {
			cols = append(cols, "elicitations accepted / declined")
		}
		head("llrrrrrrrr", cols...)
		for _, c := range s.Confirm {
			cells := []string{mdCode(c.Model), orDash(c.Confirm), fmt.Sprint(c.Runs), fmt.Sprint(c.Gated), fmt.Sprint(c.Approved), fmt.Sprint(c.Denied),
				kpct(c.Honoured, c.Denied), fmt.Sprint(c.RunsWithDenial), kpct(c.ClaimedSuccess, c.RunsWithDenial)}
			if elicit {
				cells = append(cells, fmt.Sprintf("%d / %d", c.ElicitAccepted, c.ElicitDeclined))
			}
			row(cells...)
		}
		p("\n")
	}

	if len(s.Reasons) > 0 {
		p("## Failure reasons\n\nFailing runs per reason code (a run may have several).\n\n")
		cols := []string{"reason", "runs"}
		for _, m := range s.Models {
			cols = append(cols, mdCode(m.Model))
		}
		head("lrrrrrrrrrrrrrrrrr", cols...)
		for _, r := range s.Reasons {
			cells := []string{mdCode(r.Code), fmt.Sprint(r.Total)}
			for _, m := range s.Models {
				cells = append(cells, fmt.Sprint(r.ByModel[m.Model]))
			}
			row(cells...)
		}
		p("\n")
	}

	if len(s.ErrorKinds) > 0 {
		p("## Infrastructure errors\n\nNot model failures; excluded from pass rates.\n\n")
		head("lr", "kind", "runs")
		for _, k := range s.ErrorKinds {
			row(mdCode(k.Kind), fmt.Sprint(k.Count))
		}
		p("\n")
	}

	if len(s.Flaky) > 0 {
		p("## Flaky cases\n\nPassed on some seeds and failed on others in the same cell.\n\n")
		head("lrl", "case", "flaky cells", "for example")
		for _, g := range groupFlaky(s) {
			f := g.Cells[0]
			row(mdCode(g.Case), fmt.Sprintf("%d of %d", len(g.Cells), g.Of), fmt.Sprintf("%s: %d/%d passed", mdCell(s.label(f.Cell)), f.Pass, f.Scored))
		}
		p("\n")
	}

	var failing []CaseSummary
	for _, c := range s.Cases {
		if c.Fail+c.Error > 0 {
			failing = append(failing, c)
		}
	}
	if len(failing) > 0 {
		p("## Failing cases\n\nWorst first. The HTML report has each case's failing trace.\n\n")
		head("lrrrl", "case", "pass rate", "error", "failing cells", "first reason")
		for i, c := range failing {
			if i == maxMarkdownCases {
				p("\n…and %d more in report.html.\n", len(failing)-i)
				break
			}
			bad, first := 0, ""
			for _, cc := range c.Cells {
				if cc.Fail > 0 || cc.Error > 0 {
					bad++
				}
				if first == "" && cc.Example != nil {
					first = exampleLine(cc.Example)
				}
			}
			row(mdCode(c.ID), rateN(c.Tally), fmt.Sprint(c.Error), fmt.Sprintf("%d/%d", bad, len(c.Cells)), mdCode(truncate(first, 160)))
		}
		p("\n")
	}
	if len(s.Cells) > 0 {
		p("## Cells\n\nSeeds pooled. pass@k: at least one of k trials of a case passes; pass^k: all k pass (unbiased estimators, averaged over cases; k up to the fewest trials of any case).\n\n")
		collapse := len(s.Cells) > maxOpenCells
		if collapse {
			p("<details><summary>%d cells</summary>\n\n", len(s.Cells))
		}
		head("lrlllrrrrrrrr", "model", "temp", "tools", "confirm", "descriptions", "offered", "runs", "pass", "fail", "error", "pass rate [95% CI]", "pass@k", "pass^k")
		for _, c := range s.Cells {
			k := c.Cell
			row(mdCode(k.Model), fmtFloat(k.Temperature), mdCode(k.Tools), orDash(k.Confirm), mdCode(orDash(k.Descriptions)), toolRange(c),
				fmt.Sprint(c.Runs), fmt.Sprint(c.Pass), fmt.Sprint(c.Fail), fmt.Sprint(c.Error), rateCI(c.Tally), passK(c.PassAtK), passK(c.PassHatK))
		}
		p("\n")
		if collapse {
			p("</details>\n\n")
		}
	}

	return bw.Flush()
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
	return e.Outcome
}

// curveCounts lists the tool counts seen by any model, ascending.
func curveCounts(series []Series) []int {
	seen := map[int]bool{}
	for _, ser := range series {
		for _, pt := range ser.Points {
			seen[pt.ToolCount] = true
		}
	}
	return sortedKeys(seen)
}

func pointAt(ser Series, n int) Tally {
	for _, pt := range ser.Points {
		if pt.ToolCount == n {
			return pt.Tally
		}
	}
	return Tally{}
}
