package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// Up to SketchExact values a Sketch's quantiles are Quantile's exactly;
// past it they are within SketchError of the exact ones (relative to the
// larger magnitude of the two order statistics interpolated), on random
// data of several shapes and sizes, whatever the order of the values.
func TestSketchQuantiles(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := map[string]func() float64{
		"lognormal": func() float64 { return math.Exp(rng.NormFloat64()*1.5 + 5) },
		"uniform":   func() float64 { return rng.Float64() * 1000 },
		"mixed":     func() float64 { return rng.NormFloat64() * 100 },
		"ties":      func() float64 { return float64(rng.IntN(5)) * 0.5 },
		"tiny":      func() float64 { return rng.Float64() * 1e-6 },
	}
	qs := []float64{0, 0.001, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1}
	for name, draw := range shapes {
		for _, n := range []int{1, 2, 17, SketchExact, SketchExact + 1, 20000, 100000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = draw()
			}
			var s, rev Sketch
			for i, x := range xs {
				s.Add(x)
				rev.Add(xs[n-1-i])
			}
			sorted := slices.Clone(xs)
			sort.Float64s(sorted)
			if s.N() != n || s.Exact() != (n <= SketchExact) {
				t.Fatalf("%s n=%d: N %d, Exact %v", name, n, s.N(), s.Exact())
			}
			for _, q := range qs {
				got, want := s.Quantile(q), Quantile(sorted, q)
				if r := rev.Quantile(q); r != got {
					t.Errorf("%s n=%d q=%g: %v in one order, %v in the other", name, n, q, got, r)
				}
				if n <= SketchExact {
					if got != want {
						t.Errorf("%s n=%d q=%g: %v, want exactly %v", name, n, q, got, want)
					}
					continue
				}
				h := q * float64(n-1)
				i := int(math.Floor(h))
				scale := math.Abs(sorted[i])
				if i+1 < n {
					scale = math.Max(scale, math.Abs(sorted[i+1]))
				}
				if err := math.Abs(got - want); err > SketchError*scale*(1+1e-9) {
					t.Errorf("%s n=%d q=%g: %v, exact %v: error %.3g > %.3g", name, n, q, got, want, err, SketchError*scale)
				}
			}
		}
	}
}

// Memory past SketchExact grows with the range of the values, not their
// number.
func TestSketchBounded(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var s Sketch
	for range 1_000_000 {
		s.Add(1 + rng.Float64()*9999) // four decades
	}
	// log(10^4)/log(γ) buckets, and up to half again of room to grow.
	if n, limit := len(s.pos.counts), int(1.5*math.Log(1e4)/sketchLnGam)+2; n > limit || s.exact != nil {
		t.Fatalf("%d buckets for 4 decades, want at most %d (exact kept: %v)", n, limit, s.exact != nil)
	}
}

// Non-finite values sort as sort.Float64s sorts them.
func TestSketchNonFinite(t *testing.T) {
	t.Parallel()
	var s Sketch
	var xs []float64
	for i := range SketchExact {
		xs = append(xs, float64(i), math.Inf(1))
	}
	xs = append(xs, math.NaN(), math.Inf(-1), -5)
	for _, x := range xs {
		s.Add(x)
	}
	sort.Float64s(xs)
	for _, q := range []float64{0, 1e-5, 0.0002, 0.25, 0.5, 0.75, 0.95, 1} {
		got, want := s.Quantile(q), Quantile(xs, q)
		same := got == want || math.IsNaN(got) && math.IsNaN(want) || math.Abs(got-want) <= SketchError*math.Abs(want)
		if !same {
			t.Errorf("q=%g: %v, exact %v", q, got, want)
		}
	}
	var empty Sketch
	if !math.IsNaN(empty.Quantile(0.5)) {
		t.Error("empty sketch: want NaN")
	}
}
