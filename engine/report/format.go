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

// mdCode wraps s in a code span, escaping what a code span cannot hold.
func mdCode(s string) string {
	s = strings.NewReplacer("|", "\\|", "\n", " ", "`", "'").Replace(s)
	return "`" + s + "`"
}

func truncate(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n-1]) + "…"
}
