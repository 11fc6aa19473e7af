package stats

import (
	"math"
	"sort"
)

// Sketch gathers values for their quantiles in bounded memory. While it
// holds at most SketchExact values it keeps them all and its quantiles are
// Quantile's exactly. Past that it counts values in logarithmic buckets:
// memory then grows with the logarithm of the values' range, not their
// number (about 9 KiB per factor of 10 between the smallest and largest
// magnitude, and up to half again of room to grow), and a quantile is
// within SketchError of the exact one, relative to the larger magnitude
// of the two order statistics it interpolates (for values of one sign,
// such as latencies, relative to the quantile itself). The result depends only on the values added, not
// their order. The zero Sketch is empty and ready to use.
type Sketch struct {
	exact    []float64
	n        int
	pos, neg buckets // by magnitude; neg holds negative values
	zero     int     // zeros (either sign)
	nan      int
	negInf   int
	posInf   int
	min, max float64 // of the finite values, once bucketed
}

const (
	// SketchExact is the number of values a Sketch keeps exactly.
	SketchExact = 4096
	// SketchError is the relative error of a Sketch's quantiles past
	// SketchExact values.
	SketchError = 0.001
)

// sketchGamma is the ratio of consecutive bucket bounds: a bucket holds
// the magnitudes in (γ^(k-1), γ^k], whose representative 2γ^k/(γ+1) is
// within SketchError of each.
var (
	sketchGamma  = (1 + SketchError) / (1 - SketchError)
	sketchLnGam  = math.Log(sketchGamma)
	sketchCenter = 2 / (sketchGamma + 1)
)

// buckets counts magnitudes by bucket index k, counts[k-off].
type buckets struct {
	off    int
	counts []uint64
}

func (b *buckets) add(k int) {
	switch {
	case len(b.counts) == 0:
		b.off = k
		b.counts = append(b.counts, 0)
	case k < b.off:
		grow := max(b.off-k, len(b.counts)/2)
		c := make([]uint64, grow+len(b.counts), grow+cap(b.counts))
		copy(c[grow:], b.counts)
		b.counts, b.off = c, b.off-grow
	case k-b.off >= len(b.counts):
		b.counts = append(b.counts, make([]uint64, k-b.off-len(b.counts)+1)...)
	}
	b.counts[k-b.off]++
}

// N returns the number of values added.
func (s *Sketch) N() int { return s.n }

// Exact reports whether the Sketch's quantiles are exact: it holds at
// most SketchExact values.
func (s *Sketch) Exact() bool { return s.n <= SketchExact }

// Add adds x.
func (s *Sketch) Add(x float64) {
	s.n++
	if s.n <= SketchExact {
		s.exact = append(s.exact, x)
		return
	}
	if s.exact != nil {
		xs := s.exact
		s.exact = nil
		for _, v := range xs {
			s.bucket(v)
		}
	}
	s.bucket(x)
}

func (s *Sketch) bucket(x float64) {
	switch {
	case math.IsNaN(x):
		s.nan++
		return
	case math.IsInf(x, 1):
		s.posInf++
		return
	case math.IsInf(x, -1):
		s.negInf++
		return
	}
	if s.pos.counts == nil && s.neg.counts == nil && s.zero == 0 {
		s.min, s.max = x, x
	}
	s.min, s.max = math.Min(s.min, x), math.Max(s.max, x)
	switch {
	case x > 0:
		s.pos.add(bucketOf(x))
	case x < 0:
		s.neg.add(bucketOf(-x))
	default:
		s.zero++
	}
}

func bucketOf(m float64) int { return int(math.Ceil(math.Log(m) / sketchLnGam)) }

// Quantile returns the q-quantile (0 <= q <= 1) of the values added as
// Quantile does on them sorted (type 7), within SketchError past
// SketchExact values; NaN when there are none. Quantiles of the exact
// values sort them in place, as Quantiles does.
func (s *Sketch) Quantile(q float64) float64 {
	if s.n == 0 {
		return math.NaN()
	}
	if s.exact != nil {
		if !sort.Float64sAreSorted(s.exact) {
			sort.Float64s(s.exact)
		}
		return Quantile(s.exact, q)
	}
	q = math.Max(0, math.Min(1, q))
	h := q * float64(s.n-1)
	i := int(math.Floor(h))
	lo := s.rank(i)
	if i+1 >= s.n || h == float64(i) {
		return lo
	}
	return lo + (h-float64(i))*(s.rank(i+1)-lo)
}

// rank estimates the i-th smallest value (from 0), in the order
// sort.Float64s gives: NaN, -Inf, negatives, zeros, positives, +Inf.
func (s *Sketch) rank(i int) float64 {
	if i < s.nan {
		return math.NaN()
	}
	if i -= s.nan; i < s.negInf {
		return math.Inf(-1)
	}
	i -= s.negInf
	finite := s.n - s.nan - s.negInf - s.posInf
	switch {
	case i >= finite:
		return math.Inf(1)
	case i == 0:
		return s.min
	case i == finite-1:
		return s.max
	}
	var negN int
	for _, c := range s.neg.counts {
		negN += int(c)
	}
	if i < negN { // the negatives, largest magnitude first
		for j := len(s.neg.counts) - 1; j >= 0; j-- {
			if i < int(s.neg.counts[j]) {
				return s.clamp(-center(j + s.neg.off))
			}
			i -= int(s.neg.counts[j])
		}
	}
	if i -= negN; i < s.zero {
		return 0
	}
	i -= s.zero
	for j, c := range s.pos.counts {
		if i < int(c) {
			return s.clamp(center(j + s.pos.off))
		}
		i -= int(c)
	}
	return s.max
}

// center is the representative of bucket k: within SketchError of every
// magnitude the bucket holds.
func center(k int) float64 { return sketchCenter * math.Exp(float64(k)*sketchLnGam) }

// clamp keeps an estimate within the values seen, which only brings it
// nearer the value it stands for.
func (s *Sketch) clamp(x float64) float64 { return math.Max(s.min, math.Min(s.max, x)) }
