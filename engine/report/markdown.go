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
	p("**%s** pass rate over %s · %d runs: %d pass, %d fail, %d error\n\n", passOrDash(t), intervalPhrase(t), t.Runs, t.Pass, t.Fail, t.Error)
	if c := s.HeadlineComparison; c != nil {
		p("%s\n\n", headlineComparisonText(*c, mdCode))
	}
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
		p("95%% intervals are clustered by case (%s).\n\n", clusterExplainer)
		head("lrrrrrrrrr", "model", "runs", "cases", "pass", "fail", "error", "pass rate [95% CI]", "turn p50/p95 ms", "call p50/p95 ms", "tokens in/out per run")
		var notes []string
		for _, m := range s.Models {
			in, out := m.TokensPerRun()
			row(mdCode(m.Model), fmt.Sprint(m.Runs), fmt.Sprint(m.Cases), fmt.Sprint(m.Pass), fmt.Sprint(m.Fail), fmt.Sprint(m.Error), rateCI(m.Tally),
				msFmt(m.TurnLatency), msFmt(m.CallLatency), fmt.Sprintf("%.0f / %.0f", in, out))
			if n := m.ClusterNote(); n != "" && len(s.Models) > 1 {
				notes = append(notes, fmt.Sprintf("%s: %s.", mdCode(m.Model), n))
			}
		}
		p("\n")
		for _, n := range notes {
			p("- %s\n", n)
		}
		if len(notes) > 0 {
			p("\n")
		}
	}

	if len(s.Comparisons) > 0 {
		p("## Comparisons\n\n%s\n\n", comparisonsExplainer)
		head("llllrrrrrrrl", "axis", "model", "A", "B", "cases", "A rate", "B rate", "A − B [95% CI]", "p", "MDD", "MDD ×2 runs / ×2 cases", "")
		for _, c := range s.Comparisons {
			model := "all"
			if c.Axis == "model" {
				model = "—"
			} else if c.Model != "" {
				model = mdCode(c.Model)
			}
			row(c.Axis, model, mdCode(orDash(c.A)), mdCode(orDash(c.B)), fmt.Sprint(c.Diff.Cases), pct(c.RateA), pct(c.RateB),
				diffCI(c.Diff), pvalue(c.Diff.P), mddText(c.Diff.MDD), moreText(c.Diff), verdictText(c, mdCode))
		}
		p("\n")
	}

	if tc := s.ToolCurve; tc != nil {
		p("## Pass rate by tool subset\n\n%s\n\n", curveExplainer(tc, mdCode))
		{
			cols := []string{"subset", "tools offered"}
			first := mdCode(tc.Subsets[0].Name)
			for _, ser := range tc.Series {
				cols = append(cols, mdCode(ser.Model), "Δ vs "+first)
			}
			head("lrrrrrrrrrrrrrrrrrrrrr", cols...)
			for i, sub := range tc.Subsets {
				cells := []string{mdCode(sub.Name), toolSpread(sub)}
				for _, ser := range tc.Series {
					pt := ser.Points[i]
					d := "—"
					if pt.VsFirst != nil {
						d = diffCI(*pt.VsFirst)
					}
					cells = append(cells, rateCI(pt.Tally), d)
				}
				row(cells...)
			}
			p("\n")
		}
	}

	for _, b := range s.Breakdowns {
		pairs := " Comparisons pairs the values on the same cases."
		if b.Axis == "seed" {
			pairs = "" // seeds are replicates, not compared
		}
		p("## Pass rate by %s\n\nPooled over the other axes; 95%% intervals clustered by case.%s\n\n", b.Axis, pairs)
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

	s.writeTextCallsMarkdown(bw)
	s.writeHostsMarkdown(bw)
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
		p("## Cells\n\nSeeds pooled; 95%% intervals clustered by case. pass@k: at least one of k trials of a case passes; pass^k: all k pass (unbiased estimators, averaged over cases; k up to the fewest trials of any case).\n\n")
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
