package stats

import "math"

// The Student t distribution, for intervals and tests whose standard error
// is estimated from few clusters (cases): with G cases the cluster-robust
// standard error has about G−1 degrees of freedom, and the normal quantile
// would make the interval too narrow.

// TCDF returns P(T ≤ t) for T with df degrees of freedom (df > 0). It is
// exact up to floating point: 1 − ½·I_{df/(df+t²)}(df/2, ½) for t ≥ 0,
// with I the regularized incomplete beta function. It returns NaN for
// df <= 0.
func TCDF(t float64, df float64) float64 {
	if !(df > 0) || math.IsNaN(t) {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		if t > 0 {
			return 1
		}
		return 0
	}
	tail := 0.5 * RegIncBeta(df/(df+t*t), df/2, 0.5)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// TQuantile returns the p-quantile (0 < p < 1) of the t distribution with
// df degrees of freedom, by bisection on TCDF to full float64 precision.
// It returns NaN for p outside (0, 1) or df <= 0.
func TQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for TCDF(hi, df) < p {
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if TCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// RegIncBeta returns the regularized incomplete beta function I_x(a, b)
// for 0 <= x <= 1 and a, b > 0, by the continued fraction (modified
// Lentz), using the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) where the
// fraction converges slowly.
func RegIncBeta(x, a, b float64) float64 {
	switch {
	case !(a > 0 && b > 0) || !(x >= 0 && x <= 1):
		return math.NaN()
	case x == 0:
		return 0
	case x == 1:
		return 1
	}
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	lgab, _ := math.Lgamma(a + b)
	front := math.Exp(lgab - lga - lgb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(x, a, b) / a
	}
	return 1 - front*betaFraction(1-x, b, a)/b
}

// betaFraction evaluates the continued fraction of the incomplete beta
// function (the terms d_{2m} and d_{2m+1} of its standard expansion).
func betaFraction(x, a, b float64) float64 {
	const tiny, eps = 1e-300, 1e-16
	guard := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/guard(1-(a+b)*x/(a+1))
	f := d
	for m := 1; m <= 500; m++ {
		mf := float64(m)
		even := mf * (b - mf) * x / ((a + 2*mf - 1) * (a + 2*mf))
		d = 1 / guard(1+even*d)
		c = guard(1 + even/c)
		f *= c * d
		odd := -(a + mf) * (a + b + mf) * x / ((a + 2*mf) * (a + 2*mf + 1))
		d = 1 / guard(1+odd*d)
		c = guard(1 + odd/c)
		delta := c * d
		f *= delta
		if math.Abs(delta-1) < eps {
			break
		}
	}
	return f
}
