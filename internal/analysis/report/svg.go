package report

import (
	"fmt"
	"math"
	"strings"
)

// Chart geometry is computed here as numbers and plain strings; the HTML
// template escapes every label it places.

// palette is the Okabe–Ito colour-blind-safe set (yellow dropped: too pale
// on white).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

func color(i int) string { return palette[i%len(palette)] }

// curveChart is the tool-count chart: pass rate with its clustered band
// per tool subset, one line per model, every point over the same cases.
// Points sit at the subset's median tool count; a grey bar under each tick
// spans the subset's fewest to most tools offered.
type curveChart struct {
	W, H                 int
	Left, Right, Top, Bo float64 // plot area
	XTicks               []tick
	YTicks               []tick
	Spreads              []spreadBar
	Lines                []curveLine
	Legend               []legendItem
	XLabel               string
}

type tick struct {
	Pos   float64
	Label string
	Sub   string // a second line under the label
}

// spreadBar spans the tool counts a subset offered, from X1 to X2.
type spreadBar struct {
	X1, X2, Y float64
	Title     string
}

type curveLine struct {
	Color  string
	Band   string // polygon points
	Line   string // polyline points
	Points []curvePoint
}

type curvePoint struct {
	X, Y  float64
	Title string
}

type legendItem struct {
	X, Y  float64
	Color string
	Label string
	Short string // Label cut to fit the legend
}

// curveScale maps a tool count to the chart's x scale: log2(n), or
// log2(1 + n) when some subset offered no tool at all (log 0 does not
// exist), and the axis label that says which.
func curveScale(subsets []Subset) (f func(float64) float64, label string) {
	zero := false
	for _, s := range subsets {
		zero = zero || (s.Cases > 0 && s.Min <= 0)
	}
	if zero {
		return func(n float64) float64 { return math.Log2(1 + math.Max(n, 0)) },
			"tools offered (median per subset; x spaced by log(1 + tools), since a subset offered none)"
	}
	return math.Log2, "tools offered (median per subset; log scale)"
}

func buildCurve(tc *ToolCurve) *curveChart {
	if tc == nil || len(tc.Subsets) < 2 {
		return nil
	}
	scale, label := curveScale(tc.Subsets)
	c := &curveChart{W: 880, H: 380, Left: 56, Right: 660, Top: 20, Bo: 310, XLabel: label}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range tc.Subsets {
		if s.Cases == 0 {
			continue
		}
		lo = math.Min(lo, scale(float64(s.Min)))
		hi = math.Max(hi, scale(float64(s.Max)))
	}
	xpos := func(n float64) float64 {
		if hi == lo {
			return (c.Left + c.Right) / 2
		}
		return c.Left + 12 + (scale(n)-lo)/(hi-lo)*(c.Right-c.Left-24)
	}
	ypos := func(r float64) float64 { return c.Bo - r*(c.Bo-c.Top) }
	lastX := math.Inf(-1)
	if math.IsInf(lo, 0) {
		return nil // no subset has a case
	}
	for _, s := range tc.Subsets {
		if s.Cases == 0 {
			continue
		}
		x := xpos(s.Typical)
		c.Spreads = append(c.Spreads, spreadBar{X1: xpos(float64(s.Min)), X2: xpos(float64(s.Max)), Y: c.Bo - 3,
			Title: fmt.Sprintf("%s: %s tools offered (median), %d–%d over the curve's cases", s.Name, fmtFloat(s.Typical), s.Min, s.Max)})
		if x-lastX < 34 { // keep labels from overlapping
			continue
		}
		lastX = x
		c.XTicks = append(c.XTicks, tick{Pos: x, Label: truncate(s.Name, 8), Sub: fmtFloat(s.Typical)})
	}
	for r := 0; r <= 100; r += 25 {
		c.YTicks = append(c.YTicks, tick{Pos: ypos(float64(r) / 100), Label: fmt.Sprintf("%d%%", r)})
	}
	for i, ser := range tc.Series {
		l := curveLine{Color: color(i)}
		var line, upper, lower []string
		var kept []Point
		for j, pt := range ser.Points {
			if pt.Scored() == 0 {
				continue
			}
			kept = append(kept, pt)
			x := xpos(tc.Subsets[j].Typical)
			line = append(line, fmt.Sprintf("%.1f,%.1f", x, ypos(pt.Rate)))
			upper = append(upper, fmt.Sprintf("%.1f,%.1f", x, ypos(pt.Hi)))
			lower = append([]string{fmt.Sprintf("%.1f,%.1f", x, ypos(pt.Lo))}, lower...)
			title := fmt.Sprintf("%s, %s (%s tools): %s (%d/%d)", ser.Model, pt.Subset, toolSpread(tc.Subsets[j]), rateCI(pt.Tally), pt.Pass, pt.Scored())
			if pt.VsFirst != nil {
				title += fmt.Sprintf("; vs %s %s", tc.Subsets[0].Name, diffCI(*pt.VsFirst))
			}
			l.Points = append(l.Points, curvePoint{X: x, Y: ypos(pt.Rate), Title: title})
		}
		if len(line) == 0 {
			continue
		}
		if len(line) == 1 { // a lone point: a thin band around it
			p, pt := l.Points[0], kept[0]
			upper = []string{fmt.Sprintf("%.1f,%.1f", p.X-4, ypos(pt.Hi)), fmt.Sprintf("%.1f,%.1f", p.X+4, ypos(pt.Hi))}
			lower = []string{fmt.Sprintf("%.1f,%.1f", p.X+4, ypos(pt.Lo)), fmt.Sprintf("%.1f,%.1f", p.X-4, ypos(pt.Lo))}
		}
		l.Line = strings.Join(line, " ")
		l.Band = strings.Join(append(upper, lower...), " ")
		c.Lines = append(c.Lines, l)
		c.Legend = append(c.Legend, legendItem{X: c.Right + 24, Y: c.Top + 8 + float64(i)*22, Color: color(i), Label: ser.Model, Short: truncate(ser.Model, 24)})
	}
	return c
}

// ciBar is a small horizontal interval bar for a table cell.
type ciBar struct {
	Lo, Hi, Dot float64 // x positions in a 0..100 wide box
	Class       string
	Valid       bool
}

func bar(t Tally) ciBar {
	if t.Scored() == 0 {
		return ciBar{}
	}
	return ciBar{Lo: 100 * t.Lo, Hi: 100 * t.Hi, Dot: 100 * t.Rate, Class: rateClass(t), Valid: true}
}

// rateClass buckets a pass rate into ten colour classes r0…r10.
func rateClass(t Tally) string {
	if t.Scored() == 0 {
		return "rna"
	}
	return fmt.Sprintf("r%d", int(math.Round(t.Rate*10)))
}

// spreadChart shows each seed's pass rate per model (and temperature, when
// it varies) as dots on 0–100%.
type spreadChart struct {
	W, H   int
	Left   float64
	Right  float64
	Rows   []spreadRow
	XTicks []tick
}

type spreadRow struct {
	Y     float64
	Label string // cut to fit left of the plot
	Full  string
	Color string
	Mean  float64
	Dots  []curvePoint
}

func buildSpread(lines []spreadLine) *spreadChart {
	if len(lines) == 0 {
		return nil
	}
	c := &spreadChart{W: 880, Left: 220, Right: 840}
	xpos := func(r float64) float64 { return c.Left + r*(c.Right-c.Left) }
	for r := 0; r <= 100; r += 25 {
		c.XTicks = append(c.XTicks, tick{Pos: xpos(float64(r) / 100), Label: fmt.Sprintf("%d%%", r)})
	}
	for i, l := range lines {
		y := 24 + float64(i)*34
		sr := spreadRow{Y: y, Label: truncate(l.Label(), 30), Full: l.Label(), Color: color(l.Index), Mean: xpos(l.Mean)}
		for _, sd := range l.Seeds {
			if sd.Scored() == 0 {
				continue
			}
			sr.Dots = append(sr.Dots, curvePoint{X: xpos(sd.Rate), Y: y, Title: fmt.Sprintf("%s seed %d: %s", l.Label(), sd.Seed, rateN(sd.Tally))})
		}
		c.Rows = append(c.Rows, sr)
	}
	c.H = 24 + len(c.Rows)*34 + 24
	return c
}

// reasonChart is a horizontal bar chart of failure reason counts.
type reasonChart struct {
	W, H int
	Bars []reasonBar
}

type reasonBar struct {
	Y, W  float64
	Label string
	Count int
}

func buildReasons(rs []ReasonCount) *reasonChart {
	if len(rs) == 0 {
		return nil
	}
	c := &reasonChart{W: 880}
	top := rs[0].Total
	for i, r := range rs {
		c.Bars = append(c.Bars, reasonBar{Y: 8 + float64(i)*26, W: 560 * float64(r.Total) / float64(max(top, 1)), Label: r.Code, Count: r.Total})
	}
	c.H = 16 + len(rs)*26
	return c
}
