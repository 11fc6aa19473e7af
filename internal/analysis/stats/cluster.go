package stats

import (
	"math"
	"slices"
)

// Cluster is one case's share of a pooled estimate: Sum of its units'
// values over N units. For a pass rate a unit is a scored run and Sum its
// passes; for a paired difference a unit is one pairing (a cell or a run
// pair) and Sum the differences of its pass rates.
type Cluster struct {
	Sum, N float64
}

// ClusterMean returns the pooled mean ΣSum/ΣN over the clusters with
// N > 0, its cluster-robust standard error, and how many clusters there
// were.
//
// The variance is the sandwich (CR1) estimator for a ratio mean:
//
//	Var = G/(G−1) · Σᵢ (Sumᵢ − mean·Nᵢ)² / (ΣN)²
//
// It treats the clusters, not the units, as the independent draws: runs
// of one case may agree as much as they like. G/(G−1) is the usual
// small-sample correction; callers pair it with t quantiles on G−1
// degrees of freedom. With fewer than two clusters the standard error is
// NaN: one case says nothing about the spread between cases.
func ClusterMean(cs []Cluster) (mean, se float64, g int) {
	var sum, n float64
	for _, c := range cs {
		if c.N > 0 {
			sum += c.Sum
			n += c.N
			g++
		}
	}
	if g == 0 {
		return math.NaN(), math.NaN(), 0
	}
	mean = sum / n
	if g < 2 {
		return mean, math.NaN(), g
	}
	var ss float64
	for _, c := range cs {
		if c.N > 0 {
			r := c.Sum - mean*c.N
			ss += r * r
		}
	}
	gf := float64(g)
	return mean, math.Sqrt(gf/(gf-1)*ss) / n, g
}

// RateInterval is a pass rate pooled over cases with its 95% interval
// clustered by case; see ClusteredRate.
type RateInterval struct {
	Rate, Lo, Hi float64
	Cases        int     // clusters with at least one scored run
	Runs         float64 // scored runs
	// EffectiveN is the number of independent runs the data are worth
	// (Kish: runs divided by the design effect, at most Runs).
	EffectiveN float64
	// DesignEffect is the clustered variance over the naive binomial one
	// (1 when runs of a case are as independent as coin flips).
	DesignEffect float64
	// Clustered is false when there were fewer than two cases; Lo and Hi
	// are then the Wilson interval over the one case's runs.
	Clustered bool
}

// ClusteredRate returns the pooled pass rate of cs (Sum passes over N
// scored runs per case) with a 95% interval that treats the case as the
// unit of sampling.
//
// Method: the cluster-robust (CR1) variance of ClusterMean gives a design
// effect over the binomial variance p(1−p)/N, hence an effective sample
// size N_eff = N/deff (capped at N: never more certain than independent
// runs). The interval is the Wilson score interval at N_eff with the
// normal quantile replaced by the t quantile on G−1 degrees of freedom.
//
// Why this and not a plain Wald interval p ± t·SE: evals sit near 0 and
// 100% often, where Wald collapses (SE = 0 when every run passes) or
// crosses the bounds; the Wilson form stays inside [0, 1] and keeps a
// sensible width there. Why not a cluster bootstrap: it needs a seed and
// many resamples per number shown, and with few cases it under-covers
// like Wald. At p = 0 or 1 the design effect cannot be estimated; the
// interval then assumes runs of a case agree fully (N_eff = G−1, which is
// what the formula gives when every case passes all or fails all its
// runs). TestClusteredCoverage checks the coverage by simulation.
//
// With fewer than two cases the between-case spread is unknown and the
// result is the Wilson interval over that case's runs, Clustered false.
func ClusteredRate(cs []Cluster) RateInterval {
	p, se, g := ClusterMean(cs)
	var n float64
	for _, c := range cs {
		if c.N > 0 {
			n += c.N
		}
	}
	ri := RateInterval{Cases: g, Runs: n, EffectiveN: n, DesignEffect: 1}
	if g == 0 {
		ri.Lo, ri.Hi = 0, 1
		return ri
	}
	ri.Rate = p
	if g < 2 {
		ri.Lo, ri.Hi = WilsonF(p, n, Z95)
		return ri
	}
	ri.Clustered = true
	gf := float64(g)
	neff := gf - 1
	if naive := p * (1 - p) / n; naive > 0 {
		ri.DesignEffect = se * se / naive
		neff = n / ri.DesignEffect
	} else {
		ri.DesignEffect = n / neff
	}
	ri.EffectiveN = math.Max(math.Min(neff, n), 1)
	ri.Lo, ri.Hi = WilsonF(p, ri.EffectiveN, TQuantile(0.975, gf-1))
	return ri
}

// WilsonF is the Wilson score interval for a proportion p observed over n
// (possibly fractional, as an effective sample size) trials, at quantile
// z. With n <= 0 it returns (0, 1).
func WilsonF(p, n, z float64) (lo, hi float64) {
	if !(n > 0) {
		return 0, 1
	}
	z2 := z * z
	den := 1 + z2/n
	center := (p + z2/(2*n)) / den
	half := z / den * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	lo, hi = center-half, center+half
	if p <= 0 || lo < 0 {
		lo = 0
	}
	if p >= 1 || hi > 1 {
		hi = 1
	}
	return lo, hi
}

// Diff is a paired difference of pass rates (A − B) over cases, with its
// case-clustered 95% interval, two-sided p-value and the minimum
// detectable difference of the design. See PairedDiff.
type Diff struct {
	Est, Lo, Hi, SE float64
	// P is the two-sided p-value of Est ≠ 0 (t test on Cases−1 degrees of
	// freedom with the clustered SE).
	P float64
	// MDD is the smallest true difference this design (these cases, this
	// many runs each) detects with 80% power at the 5% level:
	// (t_{.975} + t_{.80}) · SE. NaN when SE is 0 or unknown.
	MDD   float64
	Cases int
	Units float64
}

// PairedDiff returns the mean paired difference over cs, where each
// cluster is one case, Sum the sum over its paired units (a cell both
// sides ran, or a pair of runs) of the difference of pass rates and N the
// number of units. The standard error is ClusterMean's, the interval
// Est ± t_{.975, G−1}·SE clamped to [−1, 1].
//
// When SE is 0 (every case shows exactly the same difference) there is no
// spread to build a t interval from: Lo = Hi = Est, MDD is NaN, and P is
// the exact sign test's: 1 for a zero difference, 2·(½)^G otherwise (all
// G cases moved the same way). With fewer than two cases the interval is
// [−1, 1] and P is NaN.
func PairedDiff(cs []Cluster) Diff {
	est, se, g := ClusterMean(cs)
	d := Diff{Est: est, SE: se, Cases: g, Lo: -1, Hi: 1, P: math.NaN(), MDD: math.NaN()}
	for _, c := range cs {
		if c.N > 0 {
			d.Units += c.N
		}
	}
	if g < 2 {
		return d
	}
	df := float64(g - 1)
	t := TQuantile(0.975, df)
	d.Lo, d.Hi = math.Max(-1, est-t*se), math.Min(1, est+t*se)
	switch {
	case se > 0:
		d.P = 2 * (1 - TCDF(math.Abs(est)/se, df))
		d.MDD = MDD(se, g, 0.05, 0.8)
	case est == 0:
		d.P = 1
	default:
		d.P = math.Min(1, 2*math.Pow(0.5, float64(g)))
	}
	return d
}

// MDD returns the minimum detectable difference of a two-sided test at
// level alpha with the given power, for an estimate with standard error se
// from g clusters: (t_{1−α/2} + t_{power}) · se on g−1 degrees of freedom
// (the usual normal approximation, with t for few cases).
func MDD(se float64, g int, alpha, power float64) float64 {
	if g < 2 || !(se > 0) {
		return math.NaN()
	}
	df := float64(g - 1)
	return (TQuantile(1-alpha/2, df) + TQuantile(power, df)) * se
}

// Holm returns Holm–Bonferroni adjusted p-values, aligned with ps: the
// i-th smallest p is multiplied by (m − i + 1), made monotone and capped
// at 1. Rejecting where the adjusted p < α controls the family-wise error
// rate at α over all m tests.
func Holm(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	adj := make([]float64, m)
	running := 0.0
	for rank, i := range idx {
		v := math.Min(1, float64(m-rank)*ps[i])
		running = math.Max(running, v)
		adj[i] = running
	}
	return adj
}

// MDDMoreRunsOrCases returns the minimum detectable difference the design
// of d would have with twice the runs per case, and with twice the cases
// (80% power, 5% level), given within: the part of d's variance that is
// the sampling noise of the runs inside each case (the rest is the spread
// between cases). Doubling the runs halves only the within part; doubling
// the cases halves all of it. When within is a small share, more seeds
// barely help: add cases. Both are NaN when d's MDD is.
func MDDMoreRunsOrCases(d Diff, within float64) (twiceRuns, twiceCases float64) {
	if math.IsNaN(d.MDD) {
		return math.NaN(), math.NaN()
	}
	total := d.SE * d.SE
	within = math.Min(math.Max(within, 0), total)
	twiceRuns = MDD(math.Sqrt(total-within/2), d.Cases, 0.05, 0.8)
	twiceCases = MDD(math.Sqrt(total/2), 2*d.Cases, 0.05, 0.8)
	return twiceRuns, twiceCases
}
