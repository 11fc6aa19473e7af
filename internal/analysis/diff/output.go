package diff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/toolward/toolward/internal/analysis/stats"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// maxListed bounds the regressions and fixes listed one per line.
const maxListed = 30

// cellString names a run's cell on one line, in the report's words plus
// the seed.
func cellString(c record.Cell) string {
	return cell.Label(c)
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func delta(m ModelDiff) string {
	if m.Pairs == 0 {
		return "—"
	}
	return fmt.Sprintf("%+.1f pp", 100*(m.NewRate()-m.BaseRate()))
}

func pval(p float64) string {
	if p < 0.0001 {
		return "<0.0001"
	}
	return fmt.Sprintf("%.4f", p)
}

// byCase formats the case-clustered difference, "-66.7 pp [-99.2, -34.1]".
func byCase(d stats.Diff) string {
	if d.Cases < 2 {
		return "—"
	}
	return fmt.Sprintf("%+.1f pp [%+.1f, %+.1f]", 100*d.Est, 100*d.Lo, 100*d.Hi)
}

// pvalNaN is pval, or "—" when the p-value is unknown.
func pvalNaN(p float64) string {
	if math.IsNaN(p) {
		return "—"
	}
	return pval(p)
}

func mdd(d stats.Diff) string {
	switch {
	case math.IsNaN(d.MDD):
		return "—"
	case d.MDD > 1:
		return "> 100 pp"
	}
	return fmt.Sprintf("%.1f pp", 100*d.MDD)
}

func verdict(m ModelDiff, alpha float64) string {
	switch {
	case m.Regressed:
		return "REGRESSED"
	case m.C > m.B && m.P < alpha:
		return "improved"
	}
	return ""
}

// WriteText writes the comparison as aligned plain text.
func (r *Result) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("base %s (%d runs)\nnew  %s (%d runs)\n", r.Base.Dir, r.Base.Runs, r.New.Dir, r.New.Runs)
	p("paired %d runs by (case id, cell incl. seed); %d scored on both sides\n", r.Paired, r.Scored)
	for _, w := range r.Warnings {
		p("warning: %s\n", w)
	}
	if len(r.Models) > 0 {
		p("\n")
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		// tabwriter right-aligns every column; padding the model names to
		// one width keeps that column reading left-aligned.
		width := len("model")
		for _, m := range r.Models {
			width = max(width, len(m.Model))
		}
		fmt.Fprintf(tw, "%-*s\tpairs\tbase\tnew\tΔ\tpass→fail\tfail→pass\tp (McNemar)\tcases\tΔ by case [95%% CI]\tp (by case)\tMDD\t\n", width, "model")
		for _, m := range r.Models {
			fmt.Fprintf(tw, "%-*s\t%d\t%s\t%s\t%s\t%d\t%d\t%s\t%d\t%s\t%s\t%s\t%s\n", width, m.Model, m.Pairs, pct(m.BaseRate()), pct(m.NewRate()), delta(m), m.B, m.C, pval(m.P),
				m.ByCase.Cases, byCase(m.ByCase), pvalNaN(m.ByCase.P), mdd(m.ByCase), strings.TrimRight("  "+verdict(m, r.Alpha), " "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		p("(exact two-sided McNemar test on discordant pairs; regressed when pass→fail > fail→pass and p < %g.\n", r.Alpha)
		p(" Δ by case: the same difference with its 95%% interval and p-value clustered by case, since runs of a case are not independent;\n")
		p(" MDD: the smallest difference these cases and runs detect with 80%% power)\n")
	}
	if r.CasesTested > 0 {
		p("\nper-case tests: %d (case, model) pairs, exact McNemar each, Holm-corrected for %d tests: %d regressed\n", r.CasesTested, r.CasesTested, len(r.CaseRegressions))
		for _, c := range r.CaseRegressions {
			p("  %s  %s  pass→fail %d, fail→pass %d of %d pairs, p %s (Holm %s)\n", c.Case, c.Model, c.B, c.C, c.Pairs, pval(c.P), pval(c.PAdj))
		}
	}
	if len(r.Broken) > 0 {
		p("\nalways passing → always failing (listed; gated only through the per-case tests):\n")
		for _, b := range r.Broken {
			p("  %s  %s  (%d paired run(s))\n", b.Case, b.Model, b.Runs)
		}
	}
	list := func(title string, cs []Change) {
		if len(cs) == 0 {
			return
		}
		p("\n%s: %d\n", title, len(cs))
		for i, c := range cs {
			if i == maxListed {
				p("  … and %d more\n", len(cs)-i)
				break
			}
			p("  %s  %s", c.Case, cellString(c.Cell))
			if len(c.Reasons) > 0 {
				p("  [%s]", strings.Join(c.Reasons, ", "))
			}
			p("\n")
		}
	}
	list("regressions (pass → fail)", r.Regressions)
	list("fixes (fail → pass)", r.Fixes)
	writeVerdictsText(p, r.Verdicts) // verdicts.go
	names := func(title string, xs []string) {
		if len(xs) > 0 {
			p("\n%s (%d): %s\n", title, len(xs), strings.Join(xs, ", "))
		}
	}
	names("new cases", r.NewCases)
	names("dropped cases", r.DroppedCases)
	names("cases whose content changed (run ids differ)", r.Changed)
	if r.BaseOnly+r.NewOnly > 0 {
		p("\nunpaired runs of shared cases: %d only in base, %d only in new (matrix changed)\n", r.BaseOnly, r.NewOnly)
	}
	return bw.Flush()
}

// WriteMarkdown writes the comparison as Markdown, for pull requests.
func (r *Result) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("## toolward diff\n\nbase `%s` (%d runs) → new `%s` (%d runs); %d runs paired by (case id, cell incl. seed), %d scored on both sides.\n\n",
		code(r.Base.Dir), r.Base.Runs, code(r.New.Dir), r.New.Runs, r.Paired, r.Scored)
	if r.Regressed() {
		p("**Regressed.**\n\n")
	}
	for _, w := range r.Warnings {
		p("> %s\n", esc(w))
	}
	if len(r.Warnings) > 0 {
		p("\n")
	}
	if len(r.Models) > 0 {
		p("| model | pairs | base | new | Δ | pass→fail | fail→pass | p (McNemar) | cases | Δ by case [95%% CI] | p (by case) | MDD | |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
		for _, m := range r.Models {
			p("| `%s` | %d | %s | %s | %s | %d | %d | %s | %d | %s | %s | %s | %s |\n", code(m.Model), m.Pairs, pct(m.BaseRate()), pct(m.NewRate()), delta(m), m.B, m.C, pval(m.P),
				m.ByCase.Cases, byCase(m.ByCase), pvalNaN(m.ByCase.P), mdd(m.ByCase), verdict(m, r.Alpha))
		}
		p("\nExact two-sided McNemar test on the discordant pairs; a model regressed when pass→fail > fail→pass and p < %g. "+
			"Δ by case is the same difference with its 95%% interval and p-value clustered by case (runs of a case are not independent); "+
			"MDD is the smallest difference these cases and runs detect with 80%% power.\n\n", r.Alpha)
	}
	if r.CasesTested > 0 {
		p("Per-case tests: %d (case, model) pairs, exact McNemar each, Holm-corrected for %d tests: %d regressed.\n\n", r.CasesTested, r.CasesTested, len(r.CaseRegressions))
		if len(r.CaseRegressions) > 0 {
			p("| case | model | pass→fail | fail→pass | pairs | p | p (Holm) |\n|---|---|--:|--:|--:|--:|--:|\n")
			for _, c := range r.CaseRegressions {
				p("| `%s` | `%s` | %d | %d | %d | %s | %s |\n", code(c.Case), code(c.Model), c.B, c.C, c.Pairs, pval(c.P), pval(c.PAdj))
			}
			p("\n")
		}
	}
	if len(r.Broken) > 0 {
		p("### Always passing → always failing\n\nListed for reading; they count as a regression only through the per-case tests above.\n\n| case | model | paired runs |\n|---|---|--:|\n")
		for _, b := range r.Broken {
			p("| `%s` | `%s` | %d |\n", code(b.Case), code(b.Model), b.Runs)
		}
		p("\n")
	}
	list := func(title string, cs []Change) {
		if len(cs) == 0 {
			return
		}
		p("### %s (%d)\n\n| case | cell | reasons on the failing side |\n|---|---|---|\n", title, len(cs))
		for i, c := range cs {
			if i == maxListed {
				p("\n…and %d more.\n", len(cs)-i)
				break
			}
			p("| `%s` | %s | %s |\n", code(c.Case), esc(cellString(c.Cell)), esc(strings.Join(c.Reasons, ", ")))
		}
		p("\n")
	}
	list("Regressions: pass → fail", r.Regressions)
	list("Fixes: fail → pass", r.Fixes)
	writeVerdictsMarkdown(p, r.Verdicts) // verdicts.go
	names := func(title string, xs []string) {
		if len(xs) == 0 {
			return
		}
		q := make([]string, len(xs))
		for i, x := range xs {
			q[i] = "`" + code(x) + "`"
		}
		p("**%s** (%d): %s\n\n", title, len(xs), strings.Join(q, ", "))
	}
	names("New cases", r.NewCases)
	names("Dropped cases", r.DroppedCases)
	names("Changed cases (content differs, still paired)", r.Changed)
	if r.BaseOnly+r.NewOnly > 0 {
		p("Unpaired runs of shared cases: %d only in base, %d only in new (the matrix changed).\n", r.BaseOnly, r.NewOnly)
	}
	return bw.Flush()
}

// code makes s safe inside a Markdown code span in a table.
func code(s string) string { return strings.NewReplacer("`", "'", "|", "\\|", "\n", " ").Replace(s) }

// esc makes s safe as Markdown table text.
func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "\\|", "\n", " ").Replace(s)
}

// WriteJSON writes the comparison as one JSON object for scripts: the
// counts, each model's paired test (pass rates, McNemar, the difference
// clustered by case), the regressions, fixes, broken cases, the cases'
// own tests, and whether it regressed. A number that is not defined (a
// p-value over no pairs) is null.
func (r *Result) WriteJSON(w io.Writer) error {
	type num = *float64
	f := func(x float64) num {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	type diffJSON struct {
		Est, Lo, Hi, SE, P, MDD num
		Cases                   int `json:"cases"`
	}
	type modelJSON struct {
		Model     string   `json:"model"`
		Pairs     int      `json:"pairs"`
		BaseRate  num      `json:"base_pass_rate"`
		NewRate   num      `json:"new_pass_rate"`
		PassFail  int      `json:"pass_to_fail"`
		FailPass  int      `json:"fail_to_pass"`
		P         num      `json:"mcnemar_p"`
		Regressed bool     `json:"regressed"`
		ByCase    diffJSON `json:"by_case"`
	}
	type changeJSON struct {
		Case    string      `json:"case"`
		Cell    record.Cell `json:"cell"`
		Reasons []string    `json:"reasons,omitempty"`
	}
	type brokenJSON struct {
		Case  string `json:"case"`
		Model string `json:"model"`
		Runs  int    `json:"runs"`
	}
	type caseJSON struct {
		Case     string `json:"case"`
		Model    string `json:"model"`
		Pairs    int    `json:"pairs"`
		PassFail int    `json:"pass_to_fail"`
		FailPass int    `json:"fail_to_pass"`
		P        num    `json:"p"`
		PAdj     num    `json:"p_holm"`
	}
	out := struct {
		Base         string       `json:"base"`
		New          string       `json:"new"`
		Alpha        float64      `json:"alpha"`
		Regressed    bool         `json:"regressed"`
		Paired       int          `json:"paired"`
		Scored       int          `json:"scored"`
		ErrorPairs   int          `json:"error_pairs"`
		BaseOnly     int          `json:"base_only"`
		NewOnly      int          `json:"new_only"`
		DroppedRuns  int          `json:"dropped_runs"`
		Models       []modelJSON  `json:"models"`
		Regressions  []changeJSON `json:"regressions"`
		Fixes        []changeJSON `json:"fixes"`
		Broken       []brokenJSON `json:"broken"`
		CasesTested  int          `json:"cases_tested"`
		CaseRegress  []caseJSON   `json:"case_regressions"`
		NewCases     []string     `json:"new_cases"`
		DroppedCases []string     `json:"dropped_cases"`
		Changed      []string     `json:"changed_cases"`
		Warnings     []string     `json:"warnings"`
	}{
		Base: r.Base.Dir, New: r.New.Dir, Alpha: r.Alpha, Regressed: r.Regressed(),
		Paired: r.Paired, Scored: r.Scored, ErrorPairs: r.ErrorPairs, BaseOnly: r.BaseOnly, NewOnly: r.NewOnly,
		DroppedRuns: r.DroppedRuns, CasesTested: r.CasesTested,
		Models: []modelJSON{}, Regressions: []changeJSON{}, Fixes: []changeJSON{}, Broken: []brokenJSON{}, CaseRegress: []caseJSON{},
		NewCases: nonNil(r.NewCases), DroppedCases: nonNil(r.DroppedCases), Changed: nonNil(r.Changed), Warnings: nonNil(r.Warnings),
	}
	for _, m := range r.Models {
		d := m.ByCase
		out.Models = append(out.Models, modelJSON{Model: m.Model, Pairs: m.Pairs, BaseRate: f(m.BaseRate()), NewRate: f(m.NewRate()),
			PassFail: m.B, FailPass: m.C, P: f(m.P), Regressed: m.Regressed,
			ByCase: diffJSON{Est: f(d.Est), Lo: f(d.Lo), Hi: f(d.Hi), SE: f(d.SE), P: f(d.P), MDD: f(d.MDD), Cases: d.Cases}})
	}
	for _, c := range r.Regressions {
		out.Regressions = append(out.Regressions, changeJSON{c.Case, c.Cell, c.Reasons})
	}
	for _, c := range r.Fixes {
		out.Fixes = append(out.Fixes, changeJSON{c.Case, c.Cell, c.Reasons})
	}
	for _, b := range r.Broken {
		out.Broken = append(out.Broken, brokenJSON{b.Case, b.Model, b.Runs})
	}
	for _, c := range r.CaseRegressions {
		out.CaseRegress = append(out.CaseRegress, caseJSON{c.Case, c.Model, c.Pairs, c.B, c.C, f(c.P), f(c.PAdj)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
