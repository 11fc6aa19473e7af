package report

import (
	"fmt"
	"math"
	"strings"
)

// pct formats a rate as a percentage with one decimal.
func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// rateCI formats a tally as "72.0% [58.3, 82.5]", or "—" with no scored runs.
func rateCI(t Tally) string {
	if t.Scored() == 0 {
		return "—"
	}
	return fmt.Sprintf("%s [%.1f, %.1f]", pct(t.Rate), 100*t.Lo, 100*t.Hi)
}

// rateN formats a tally as "72.0% (18/25)", or "—".
func rateN(t Tally) string {
	if t.Scored() == 0 {
		return "—"
	}
	return fmt.Sprintf("%s (%d/%d)", pct(t.Rate), t.Pass, t.Scored())
}

func msFmt(l Latency) string {
	if l.N == 0 {
		return "—"
	}
	if l.Approx {
		return fmt.Sprintf("≈%s / ≈%s", ms(l.P50), ms(l.P95))
	}
	return fmt.Sprintf("%s / %s", ms(l.P50), ms(l.P95))
}

func ms(f float64) string {
	switch {
	case math.IsNaN(f):
		return "—"
	case f >= 10000:
		return fmt.Sprintf("%.1fs", f/1000)
	case f >= 100:
		return fmt.Sprintf("%.0f", f)
	default:
		return fmt.Sprintf("%.1f", f)
	}
}

func prob(f float64) string { return fmt.Sprintf("%.2f", f) }

// passK formats the last element of a pass@k or pass^k vector with its k.
func passK(v []float64) string {
	if len(v) == 0 {
		return "—"
	}
	return fmt.Sprintf("%s (k=%d)", prob(v[len(v)-1]), len(v))
}

func toolRange(c CellSummary) string {
	if c.MinTools == c.MaxTools {
		return fmt.Sprint(c.MinTools)
	}
	return fmt.Sprintf("%d–%d", c.MinTools, c.MaxTools)
}

func kpct(n, d int) string {
	if d == 0 {
		return "—"
	}
	return fmt.Sprintf("%d/%d", n, d)
}

// mdCell escapes text for a Markdown table cell: HTML-significant
// characters (model output may contain markup), pipes and newlines.
func mdCell(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "\\|", "\n", " ", "\r", "", "`", "\\`", "*", "\\*", "_", "\\_", "[", "\\[", "]", "\\]")
	return r.Replace(s)
}

// mdCodeEscaper makes a string safe inside a Markdown table cell's code
// span; built once, since a replacer is costly to build per call.
var mdCodeEscaper = strings.NewReplacer("|", "\\|", "\n", " ", "`", "'")

// mdCode wraps s in a code span, escaping what a code span cannot hold.
func mdCode(s string) string {
	return "`" + mdCodeEscaper.Replace(s) + "`"
}

func truncate(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n-1]) + "…"
}

// intervalPhrase describes the scored runs behind a rate and its
// interval, e.g. "288 scored runs of 46 cases (95% interval clustered by
// case 55.0–80.1%; Wilson over runs, as if runs were independent:
// 63.9–74.5%)".
func intervalPhrase(t Tally) string {
	switch {
	case t.Scored() == 0:
		return "0 scored runs"
	case t.Interval == IntervalCluster && t.Naive != nil:
		return fmt.Sprintf("%d scored runs of %d cases (95%% interval clustered by case %.1f–%.1f%%; Wilson over runs, as if runs were independent: %.1f–%.1f%%)",
			t.Scored(), t.Cases, 100*t.Lo, 100*t.Hi, 100*t.Naive.Lo, 100*t.Naive.Hi)
	case t.Cases == 1:
		return fmt.Sprintf("%d scored runs of 1 case (95%% Wilson interval %.1f–%.1f%%)", t.Scored(), 100*t.Lo, 100*t.Hi)
	}
	return fmt.Sprintf("%d scored runs (95%% Wilson interval %.1f–%.1f%%)", t.Scored(), 100*t.Lo, 100*t.Hi)
}

// Explanations shared by report.md and report.html.
const (
	clusterExplainer = "runs of one case are not independent coin flips, so the case is the unit of sampling; the runs of a single case use the Wilson interval"

	comparisonsExplainer = "Two values of one axis on the same cases. Each unit is a case in a cell that ran with both values (other axes equal, seeds pooled); " +
		"A − B is the mean difference of their pass rates, with its 95% interval and p-value clustered by case (t test on cases − 1 degrees of freedom). " +
		"A comparison names the better value only when the interval excludes 0. " +
		"MDD is the smallest true difference this design (these cases, this many runs each) detects with 80% power at the 5% level; " +
		"a difference smaller than it can go unseen. The next column gives the MDD with twice the runs per case (seeds, temperatures) and with twice the cases: " +
		"more runs only average out the noise within a case, so when the two differ, add cases."
)

// curveExplainer says what the tool-count points hold; code formats a
// model or subset name.
func curveExplainer(tc *ToolCurve, code func(string) string) string {
	var parts []string
	for _, ser := range tc.Series {
		n := fmt.Sprintf("%s %d", code(ser.Model), ser.Cases)
		if ser.Dropped > 0 {
			n += fmt.Sprintf(" (%d left out)", ser.Dropped)
		}
		parts = append(parts, n)
	}
	first := code(tc.Subsets[0].Name)
	return fmt.Sprintf("Every point of a model's line holds the same cases: those with scored runs in every subset the model ran (cases per model: %s). "+
		"Pooled over the other axes. Tools offered: the median over those cases (min–max). "+
		"Δ vs %s: the paired difference from %s on the same cases and cells, with its 95%% interval clustered by case.", strings.Join(parts, ", "), first, first)
}

// headlineComparisonText states the comparison of the two best models,
// naming the better one only when the interval excludes 0. code formats
// a model name.
func headlineComparisonText(c Comparison, code func(string) string) string {
	if c.Diff.Cases < 2 {
		return fmt.Sprintf("Best two models: %s and %s share fewer than two cases; they cannot be compared.", code(c.A), code(c.B))
	}
	msg := fmt.Sprintf("Best two models: %s − %s = %s over %d paired cases, p %s, MDD %s: ",
		code(c.A), code(c.B), diffCI(c.Diff), c.Diff.Cases, pvalueEq(c.Diff.P), mddText(c.Diff.MDD))
	if b := c.Better(); b != "" {
		return msg + code(b) + " is better."
	}
	return msg + "the interval includes 0, so these cases do not show which is better."
}

// diffCI formats a paired difference, "+5.0 pp [-1.2, +11.3]". When
// every case shows the same difference there is no spread to build an
// interval from, and it says so rather than print a zero-width interval.
func diffCI(d Difference) string {
	switch {
	case d.Cases < 2:
		return "—"
	case d.SE == 0 && d.Est == 0:
		return "+0.0 pp (no case differs)"
	case d.SE == 0:
		return fmt.Sprintf("%+.1f pp (the same on every case)", 100*d.Est)
	}
	return fmt.Sprintf("%+.1f pp [%+.1f, %+.1f]", 100*d.Est, 100*d.Lo, 100*d.Hi)
}

func pvalue(p *float64) string {
	switch {
	case p == nil:
		return "—"
	case *p < 0.001:
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", *p)
}

// pvalueEq is pvalue after "p": "= 0.042" or "< 0.001".
func pvalueEq(p *float64) string {
	switch {
	case p == nil:
		return "unknown"
	case *p < 0.001:
		return "< 0.001"
	}
	return "= " + pvalue(p)
}

// mddText formats a minimum detectable difference; one above 100 points
// means no difference at all could be detected.
func mddText(m *float64) string {
	switch {
	case m == nil:
		return "—"
	case *m > 1:
		return "> 100 pp"
	}
	return fmt.Sprintf("%.1f pp", 100**m)
}

// moreText formats what doubling runs or cases would bring,
// "9.8 / 7.1 pp".
func moreText(d Difference) string {
	if d.MDDTwiceRuns == nil || d.MDDTwiceCases == nil {
		return "—"
	}
	short := func(m float64) string {
		if m > 1 {
			return "> 100"
		}
		return fmt.Sprintf("%.1f", 100*m)
	}
	return short(*d.MDDTwiceRuns) + " / " + short(*d.MDDTwiceCases) + " pp"
}

// toolSpread formats a subset's tool counts, "9 (8–10)".
func toolSpread(s Subset) string {
	if s.Min == s.Max {
		return fmtFloat(s.Typical)
	}
	return fmt.Sprintf("%s (%d–%d)", fmtFloat(s.Typical), s.Min, s.Max)
}
