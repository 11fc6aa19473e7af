package stats

import (
	"math"
)

// Z95 is the standard normal quantile for a two-sided 95% interval.
const Z95 = 1.959963984540054

// Wilson returns the Wilson score interval for pass successes out of n
// trials at normal quantile z (use Z95 for 95%). With n == 0 it returns
// (0, 1): nothing is known.
func Wilson(pass, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	return WilsonF(float64(pass)/float64(n), float64(n), z)
}

// PassAtK is the unbiased estimate of the probability that at least one of
// k trials passes, given c passes in n trials: 1 − C(n−c, k)/C(n, k).
// It returns NaN when k < 1 or k > n.
func PassAtK(n, c, k int) float64 {
	if k < 1 || k > n || c < 0 || c > n {
		return math.NaN()
	}
	return 1 - chooseRatio(n-c, n, k)
}

// PassHatK (pass^k) is the unbiased estimate of the probability that all
// of k trials pass, given c passes in n trials: C(c, k)/C(n, k).
// It returns NaN when k < 1 or k > n.
func PassHatK(n, c, k int) float64 {
	if k < 1 || k > n || c < 0 || c > n {
		return math.NaN()
	}
	return chooseRatio(c, n, k)
}

// chooseRatio returns C(a, k)/C(n, k) for 0 <= a <= n, k <= n, as the
// product over i < k of (a−i)/(n−i); 0 when a < k.
func chooseRatio(a, n, k int) float64 {
	if a < k {
		return 0
	}
	r := 1.0
	for i := 0; i < k; i++ {
		r *= float64(a-i) / float64(n-i)
	}
	return r
}

// Quantile returns the q-quantile (0 <= q <= 1) of sorted xs by linear
// interpolation between closest ranks (type 7, as R and NumPy default).
// It returns NaN for an empty slice. xs must be sorted ascending.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	if q <= 0 {
		return xs[0]
	}
	if q >= 1 {
		return xs[len(xs)-1]
	}
	h := q * float64(len(xs)-1)
	i := int(math.Floor(h))
	if i+1 >= len(xs) {
		return xs[i]
	}
	return xs[i] + (h-float64(i))*(xs[i+1]-xs[i])
}

// McNemarExact returns the two-sided exact McNemar p-value for b and c
// discordant pairs (b: pass→fail, c: fail→pass): the binomial test of
// X ~ Bin(b+c, 1/2), p = min(1, 2·P(X ≤ min(b, c))). With no discordant
// pairs it returns 1.
func McNemarExact(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	m := min(b, c)
	return math.Min(1, 2*binomCDFHalf(m, n))
}

// binomCDFHalf returns P(X ≤ m) for X ~ Bin(n, 1/2), summing terms in log
// space so that n in the thousands neither overflows nor underflows early.
func binomCDFHalf(m, n int) float64 {
	if m >= n {
		return 1
	}
	lgN1, _ := math.Lgamma(float64(n + 1))
	logHalfN := float64(n) * math.Log(0.5)
	sum := 0.0
	for i := 0; i <= m; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		b, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lgN1 - a - b + logHalfN)
	}
	return math.Min(1, sum)
}

// MeanSD returns the mean and sample standard deviation of xs (SD is 0
// for fewer than two values).
func MeanSD(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return math.NaN(), 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}
