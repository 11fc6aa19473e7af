package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/internal/analysis/stats"
	"github.com/toolward/toolward/schema/record"
)

// TestPassAtKRepeats: a cell's pass@k is a float sum over its cases; it
// must come out the same, to the bit, every time the same records are
// summarized (it once summed in map order).
func TestPassAtKRepeats(t *testing.T) {
	t.Parallel()
	var first []float64
	for try := range 10 {
		a := newAggregator()
		for c := range 200 {
			for seed := range 7 {
				outcome := record.Fail
				if (c*31+seed*7)%(c%5+2) == 0 {
					outcome = record.Pass
				}
				a.add(&record.Record{ID: fmt.Sprintf("r%d-%d", c, seed), Case: fmt.Sprintf("case%03d", c),
					Cell: record.Cell{Model: "m", Seed: seed}, Outcome: outcome})
			}
		}
		s := a.summary()
		got := s.Cells[0].PassAtK
		if try == 0 {
			first = got
			continue
		}
		for k := range got {
			if math.Float64bits(got[k]) != math.Float64bits(first[k]) {
				t.Fatalf("try %d: pass@%d = %v, first %v", try, k+1, got[k], first[k])
			}
		}
	}
}

// TestLatencyApproximate: past stats.SketchExact turns a model's latency
// quantiles are estimated, within stats.SketchError, and marked so in the
// tables and the warnings; up to it they are exact and unmarked.
func TestLatencyApproximate(t *testing.T) {
	t.Parallel()
	for _, runs := range []int{stats.SketchExact, stats.SketchExact + 1} {
		a := newAggregator()
		for i := range runs {
			lat := record.Millis(1 + (i*7919)%1000) // 1..1000 ms, each about equally often
			a.add(&record.Record{ID: fmt.Sprintf("r%d", i), Case: "c", Cell: record.Cell{Model: "m", Seed: i},
				Outcome: record.Pass, Trace: record.Trace{Turns: []record.Turn{{Latency: lat}}}})
		}
		s := a.summary()
		l := s.Models[0].TurnLatency
		approx := runs > stats.SketchExact
		if l.Approx != approx || l.N != runs {
			t.Fatalf("%d turns: %+v, want approx %v", runs, l, approx)
		}
		var md bytes.Buffer
		if err := s.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		marked := strings.Contains(md.String(), "≈") && slices.Contains(s.Warnings, latencyNote)
		if marked != approx {
			t.Errorf("%d turns: marked %v, want %v (warnings %q)", runs, marked, approx, s.Warnings)
		}
		// The exact median of 1..1000 about equally often is about 500.
		if math.Abs(l.P50-500) > 2 || math.Abs(l.P95-950) > 2 {
			t.Errorf("%d turns: p50 %v, p95 %v; want about 500 and 950", runs, l.P50, l.P95)
		}
	}
}
