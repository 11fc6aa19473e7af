package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTDistribution(t *testing.T) {
	// df = 2 has a closed form: F(t) = ½ + t / (2·sqrt(2 + t²)), so
	//   F(t) = .975 ⇔ t/sqrt(2+t²) = .95 ⇔ t² = 2·.9025/.0975 = 18.51282 → 4.302653
	//   F(t) = .8   ⇔ t/sqrt(2+t²) = .6  ⇔ t² = .72/.64 = 1.125        → 1.060660
	// df = 1 is Cauchy: F(t) = ½ + atan(t)/π → t_.975 = tan(.475π) = 12.706205.
	// Tables: t_.975 on 9 df = 2.262157, on 39 df = 2.022691.
	quantiles := []struct{ p, df, want float64 }{
		{0.975, 2, math.Sqrt(2 * 0.9025 / 0.0975)},
		{0.8, 2, math.Sqrt(0.72 / 0.64)},
		{0.975, 1, math.Tan(0.475 * math.Pi)},
		{0.975, 9, 2.262157},
		{0.975, 39, 2.022691},
		{0.025, 39, -2.022691},
		{0.975, 1e7, 1.959964},
		{0.5, 5, 0},
	}
	for _, q := range quantiles {
		if got := TQuantile(q.p, q.df); !near(got, q.want, 2e-6) {
			t.Errorf("TQuantile(%v, %v) = %.7f, want %.7f", q.p, q.df, got, q.want)
		}
	}
	for _, x := range []float64{-3, -0.5, 0, 0.7, 2.309401, 10} {
		want := 0.5 + x/(2*math.Sqrt(2+x*x))
		if got := TCDF(x, 2); !near(got, want, 1e-12) {
			t.Errorf("TCDF(%v, 2) = %v, want %v", x, got, want)
		}
		if got, want := TCDF(x, 1), 0.5+math.Atan(x)/math.Pi; !near(got, want, 1e-12) {
			t.Errorf("TCDF(%v, 1) = %v, want %v", x, got, want)
		}
	}
	if !math.IsNaN(TQuantile(1, 3)) || !math.IsNaN(TQuantile(0.5, 0)) || !math.IsNaN(TCDF(1, -1)) {
		t.Error("bad arguments should give NaN")
	}
	// I_x(a, 1) = x^a; I_x(1, b) = 1 − (1−x)^b.
	if got := RegIncBeta(0.3, 2.5, 1); !near(got, math.Pow(0.3, 2.5), 1e-12) {
		t.Errorf("RegIncBeta(.3, 2.5, 1) = %v", got)
	}
	if got := RegIncBeta(0.8, 1, 3); !near(got, 1-math.Pow(0.2, 3), 1e-12) {
		t.Errorf("RegIncBeta(.8, 1, 3) = %v", got)
	}
}

func TestClusterMean(t *testing.T) {
	// Three cases of two runs: 2/2, 0/2, 1/2. mean = 3/6 = .5;
	// residuals Sum − mean·N = 1, −1, 0 → Σ² = 2;
	// Var = G/(G−1) · 2 / 6² = 1.5 · 2/36 = 1/12 → SE = .2886751.
	mean, se, g := ClusterMean([]Cluster{{2, 2}, {0, 2}, {1, 2}, {0, 0}})
	if g != 3 || !near(mean, 0.5, 1e-12) || !near(se, math.Sqrt(1.0/12), 1e-12) {
		t.Errorf("ClusterMean = %v, %v, %d; want .5, %v, 3", mean, se, g, math.Sqrt(1.0/12))
	}
	if _, se, g := ClusterMean([]Cluster{{3, 4}}); g != 1 || !math.IsNaN(se) {
		t.Errorf("one cluster: se %v g %d, want NaN 1", se, g)
	}
}

func TestClusteredRate(t *testing.T) {
	// The example above: naive variance p(1−p)/N = .25/6 = 1/24, clustered
	// 1/12 → design effect 2, N_eff = 3. Wilson at n = 3 with
	// z = t_.975 on 2 df = 4.302653: z² = 18.51282, den = 1 + z²/3 = 7.17094,
	// center = (.5 + z²/6)/den = .5, half = z/den · sqrt(.25/3 + z²/36)
	// = .600011 · .773031 = .463828 → [.036172, .963828].
	ri := ClusteredRate([]Cluster{{2, 2}, {0, 2}, {1, 2}})
	if !ri.Clustered || ri.Cases != 3 || ri.Runs != 6 || !near(ri.DesignEffect, 2, 1e-12) || !near(ri.EffectiveN, 3, 1e-12) ||
		!near(ri.Lo, 0.036172, 2e-6) || !near(ri.Hi, 0.963828, 2e-6) {
		t.Errorf("ClusteredRate = %+v", ri)
	}
	// One case: its Wilson interval over runs (3/4 → [.300636, .954413]).
	ri = ClusteredRate([]Cluster{{3, 4}})
	wlo, whi := Wilson(3, 4, Z95)
	if ri.Clustered || ri.Lo != wlo || ri.Hi != whi {
		t.Errorf("one case = %+v, want Wilson [%v, %v]", ri, wlo, whi)
	}
	// Every run passes in 5 cases of 10 runs: N_eff = G − 1 = 4 (runs of a
	// case are assumed to agree), Wilson(4/4) at t_.975 on 4 df = 2.776445:
	// lo = 4/(4 + z²) = 4/11.708647 = .341627.
	ri = ClusteredRate([]Cluster{{10, 10}, {10, 10}, {10, 10}, {10, 10}, {10, 10}})
	if ri.Rate != 1 || ri.Hi != 1 || !near(ri.EffectiveN, 4, 1e-12) || !near(ri.Lo, 0.341627, 2e-6) {
		t.Errorf("all pass = %+v", ri)
	}
	if ri := ClusteredRate(nil); ri.Lo != 0 || ri.Hi != 1 || ri.Cases != 0 {
		t.Errorf("no cases = %+v", ri)
	}
	// Runs of a case disagree more than coin flips (every case exactly
	// half): the design effect is below 1 and N_eff is capped at the runs.
	ri = ClusteredRate([]Cluster{{1, 2}, {1, 2}, {1, 2}, {1, 2}})
	if ri.EffectiveN != 8 {
		t.Errorf("anti-clustered N_eff = %v, want 8", ri.EffectiveN)
	}
}

func TestPairedDiff(t *testing.T) {
	// Three cases with unit sums (differences of pass rates) 1 over 2 units,
	// 0 over 1, 1 over 1: est = 2/4 = .5; residuals 0, −.5, .5 → Σ² = .5;
	// Var = 1.5 · .5/16 = .046875 → SE = .2165064.
	// t on 2 df: .975 → 4.302653, so Est ± 0.931552 → [−.431552, 1 (clamped)].
	// p = 2·(1 − F₂(.5/.2165064 = 2.309401)); F₂(t) = ½ + t/(2·sqrt(2+t²))
	//   = .5 + 2.309401/(2·2.708013) = .926401 → p = .147197.
	// MDD = (4.302653 + 1.060660) · .2165064 = 1.161191.
	d := PairedDiff([]Cluster{{1, 2}, {0, 1}, {1, 1}})
	if d.Cases != 3 || d.Units != 4 || !near(d.Est, 0.5, 1e-12) || !near(d.SE, math.Sqrt(0.046875), 1e-12) ||
		!near(d.Lo, -0.431552, 2e-6) || d.Hi != 1 || !near(d.P, 0.147197, 2e-6) || !near(d.MDD, 1.161191, 2e-6) {
		t.Errorf("PairedDiff = %+v", d)
	}
	if significant(d) {
		t.Error("an interval containing 0 is not significant")
	}
	// Identical sides: no difference, p = 1, MDD unknown.
	d = PairedDiff([]Cluster{{0, 3}, {0, 3}})
	if d.Est != 0 || d.P != 1 || !math.IsNaN(d.MDD) || significant(d) {
		t.Errorf("identical = %+v", d)
	}
	if d := PairedDiff([]Cluster{{1, 1}}); !math.IsNaN(d.P) || d.Lo != -1 || d.Hi != 1 || significant(d) {
		t.Errorf("one case = %+v", d)
	}
	// Every case moved by exactly +1: no spread, so the sign test: two
	// cases give p = 2·¼ = .5 (not significant), six 2/64 = .03125.
	if d := PairedDiff([]Cluster{{2, 2}, {1, 1}}); d.SE != 0 || d.P != 0.5 || significant(d) {
		t.Errorf("two equal cases = %+v", d)
	}
	six := []Cluster{{1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}}
	if d := PairedDiff(six); d.P != 0.03125 || !significant(d) || d.Lo != 1 {
		t.Errorf("six equal cases = %+v", d)
	}
	// MDD on 39 df: (t_.975 + t_.80) · SE = (2.022691 + 0.850935) · .05
	// = .143681 (t tables: 2.0227 and 0.8509).
	if got := MDD(0.05, 40, 0.05, 0.8); !near(got, (2.022691+0.850935)*0.05, 2e-6) {
		t.Errorf("MDD = %v", got)
	}
}

func TestHolm(t *testing.T) {
	// Sorted: .005×4 = .02; .01×3 = .03; .03×2 = .06; .04×1 = .04 → .06
	// (monotone). Aligned with the input order.
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
	if got := Holm([]float64{0.5, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Errorf("Holm caps at 1: %v", got)
	}
	if len(Holm(nil)) != 0 {
		t.Error("Holm(nil)")
	}
}

// beta draws from Beta(a, b) by Jöhnk's method (fine for the small shape
// parameters used here).
func beta(rng *rand.Rand, a, b float64) float64 {
	for {
		x := math.Pow(rng.Float64(), 1/a)
		y := math.Pow(rng.Float64(), 1/b)
		if s := x + y; s <= 1 && s > 0 {
			return x / s
		}
	}
}

// TestClusteredCoverage simulates what the clustered interval is for:
// case difficulty varies strongly (each case's pass probability drawn
// from a beta distribution), 40 cases × 10 runs, 1,000 datasets. The
// clustered 95% interval must cover the true rate (the beta mean: the
// pass rate over the population of cases) in at least 93% of datasets,
// and the naive Wilson interval over the 400 runs, which treats runs as
// independent, covers far less: that is the problem being fixed.
func TestClusteredCoverage(t *testing.T) {
	for _, shape := range []struct{ a, b float64 }{{0.5, 0.5}, {1.5, 0.5}} {
		rng := rand.New(rand.NewPCG(20261201, uint64(10*shape.a)))
		truth := shape.a / (shape.a + shape.b)
		const datasets, cases, runs = 1000, 40, 10
		clustered, naive := 0, 0
		cs := make([]Cluster, cases)
		for range datasets {
			pass := 0
			for i := range cs {
				p := beta(rng, shape.a, shape.b)
				k := 0
				for range runs {
					if rng.Float64() < p {
						k++
					}
				}
				cs[i] = Cluster{Sum: float64(k), N: runs}
				pass += k
			}
			if ri := ClusteredRate(cs); ri.Lo <= truth && truth <= ri.Hi {
				clustered++
			}
			if lo, hi := Wilson(pass, cases*runs, Z95); lo <= truth && truth <= hi {
				naive++
			}
		}
		cov, ncov := float64(clustered)/datasets, float64(naive)/datasets
		t.Logf("Beta(%v, %v): clustered covers %.1f%%, naive Wilson %.1f%%", shape.a, shape.b, 100*cov, 100*ncov)
		if cov < 0.93 {
			t.Errorf("Beta(%v, %v): clustered interval covers %.1f%% < 93%%", shape.a, shape.b, 100*cov)
		}
		if ncov > 0.8 {
			t.Errorf("Beta(%v, %v): naive Wilson covers %.1f%%; the simulation does not show the problem", shape.a, shape.b, 100*ncov)
		}
	}
}

func TestMDDMoreRunsOrCases(t *testing.T) {
	// SE .1 over 10 cases, of which variance .006 is within cases:
	// between .004. Twice the runs: .004 + .003 = .007 → SE .0836660,
	// (t_.975 + t_.80 on 9 df) = 2.262157 + 0.883404 → .263171.
	// Twice the cases: SE .1/√2 = .0707107 on 19 df:
	// 2.093024 + 0.860951 = 2.953975 → .208879.
	d := Diff{SE: 0.1, Cases: 10, MDD: MDD(0.1, 10, 0.05, 0.8)}
	runs, cases := MDDMoreRunsOrCases(d, 0.006)
	if !near(runs, 0.263171, 2e-5) || !near(cases, 0.208879, 2e-5) {
		t.Errorf("MDDMoreRunsOrCases = %v, %v; want .263171, .208879", runs, cases)
	}
	// All the variance between cases: more runs change nothing.
	if runs, _ := MDDMoreRunsOrCases(d, 0); !near(runs, d.MDD, 1e-12) {
		t.Errorf("no within variance: twice runs %v, want the MDD %v", runs, d.MDD)
	}
	if runs, cases := MDDMoreRunsOrCases(Diff{MDD: math.NaN()}, 0); !math.IsNaN(runs) || !math.IsNaN(cases) {
		t.Error("unknown MDD should stay unknown")
	}
}

func TestWeightedSum(t *testing.T) {
	t.Parallel()
	// Two parts, hand-computed:
	//   S  = .4·.5 + .6·.9 = .2 + .54 = .74
	//   Lo = .74 − sqrt((.4·.2)² + (.6·.3)²) = .74 − sqrt(.0064 + .0324) = .74 − sqrt(.0388)
	//   Hi = .74 + sqrt((.4·.2)² + (.6·.05)²) = .74 + sqrt(.0064 + .0009) = .74 + sqrt(.0073)
	est, lo, hi := WeightedSum([]Part{{W: 0.4, Est: 0.5, Lo: 0.3, Hi: 0.7}, {W: 0.6, Est: 0.9, Lo: 0.6, Hi: 0.95}, {W: 0, Est: 0, Lo: 0, Hi: 1}})
	if !near(est, 0.74, 1e-12) || !near(lo, 0.74-math.Sqrt(0.0388), 1e-12) || !near(hi, 0.74+math.Sqrt(0.0073), 1e-12) {
		t.Errorf("WeightedSum = %v [%v, %v]", est, lo, hi)
	}
	// Symmetric Wald parts: the Wald interval of the sum, z·sqrt(Σ w²·se²).
	se1, se2 := 0.05, 0.08
	est, lo, hi = WeightedSum([]Part{{0.5, 0.6, 0.6 - Z95*se1, 0.6 + Z95*se1}, {0.5, 0.4, 0.4 - Z95*se2, 0.4 + Z95*se2}})
	half := Z95 * math.Sqrt(0.25*se1*se1+0.25*se2*se2)
	if !near(est, 0.5, 1e-12) || !near(lo, 0.5-half, 1e-12) || !near(hi, 0.5+half, 1e-12) {
		t.Errorf("Wald parts: %v [%v, %v], want ±%v", est, lo, hi, half)
	}
	// One part of weight 1 keeps its own interval.
	if est, lo, hi := WeightedSum([]Part{{1, 0.8, 0.55, 0.93}}); est != 0.8 || !near(lo, 0.55, 1e-12) || !near(hi, 0.93, 1e-12) {
		t.Errorf("one part: %v [%v, %v]", est, lo, hi)
	}
}
