package stats

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestWilson(t *testing.T) {
	// Reference values for the 95% Wilson score interval (z = 1.96):
	//   5/10: p = .5, z²/n = .38415, den = 1.38415, center = .5,
	//         half = 1.95996/1.38415 · sqrt(.025 + .0096037) = .26341
	//         → [.23659, .76341]
	//   0/10: center = .19207/1.38415 = .13877 = half → [0, .27753]
	//   1/10: center = (.1 + .19207)/1.38415 = .21101,
	//         half = 1.41600 · sqrt(.009 + .0096037) = .19313 → [.01788, .40414]
	//   10/10: mirror of 0/10 → [.72247, 1]
	tests := []struct {
		pass, n int
		lo, hi  float64
	}{
		{5, 10, 0.23659, 0.76341},
		{0, 10, 0, 0.27753},
		{1, 10, 0.01788, 0.40414},
		{10, 10, 0.72247, 1},
		{0, 0, 0, 1},
	}
	for _, tt := range tests {
		lo, hi := Wilson(tt.pass, tt.n, Z95)
		if !near(lo, tt.lo, 5e-5) || !near(hi, tt.hi, 5e-5) {
			t.Errorf("Wilson(%d, %d) = [%.5f, %.5f], want [%.5f, %.5f]", tt.pass, tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestPassAtKHatK(t *testing.T) {
	// Hand computations (C(a,b) = binomial coefficient):
	//   n=5 c=2 k=1: pass@1 = 1 − C(3,1)/C(5,1) = 1 − 3/5 = .4; pass^1 = C(2,1)/C(5,1) = .4
	//   n=5 c=2 k=2: pass@2 = 1 − C(3,2)/C(5,2) = 1 − 3/10 = .7; pass^2 = C(2,2)/C(5,2) = .1
	//   n=5 c=2 k=4: pass@4 = 1 − C(3,4)/C(5,4) = 1 − 0 = 1; pass^4 = C(2,4)/.. = 0
	//   n=10 c=7 k=3: pass@3 = 1 − C(3,3)/C(10,3) = 1 − 1/120; pass^3 = C(7,3)/C(10,3) = 35/120
	//   n=1000 c=999 k=500: pass^500 = C(999,500)/C(1000,500) = (1000−500)/1000 = .5
	//     (C(1000,500) ≈ 2.7e299: a factorial implementation overflows)
	//   n=3 c=0: pass@k = pass^k = 0; n=3 c=3: both 1.
	tests := []struct {
		n, c, k int
		at, hat float64
	}{
		{5, 2, 1, 0.4, 0.4},
		{5, 2, 2, 0.7, 0.1},
		{5, 2, 4, 1, 0},
		{10, 7, 3, 1 - 1.0/120, 35.0 / 120},
		{1000, 999, 500, 1, 0.5},
		{3, 0, 2, 0, 0},
		{3, 3, 3, 1, 1},
	}
	for _, tt := range tests {
		if got := PassAtK(tt.n, tt.c, tt.k); !near(got, tt.at, 1e-12) {
			t.Errorf("PassAtK(%d, %d, %d) = %v, want %v", tt.n, tt.c, tt.k, got, tt.at)
		}
		if got := PassHatK(tt.n, tt.c, tt.k); !near(got, tt.hat, 1e-12) {
			t.Errorf("PassHatK(%d, %d, %d) = %v, want %v", tt.n, tt.c, tt.k, got, tt.hat)
		}
	}
	for _, bad := range [][3]int{{3, 1, 0}, {3, 1, 4}, {3, 4, 1}} {
		if !math.IsNaN(PassAtK(bad[0], bad[1], bad[2])) || !math.IsNaN(PassHatK(bad[0], bad[1], bad[2])) {
			t.Errorf("n=%d c=%d k=%d: want NaN", bad[0], bad[1], bad[2])
		}
	}
}

func TestMcNemarExact(t *testing.T) {
	// p = min(1, 2·P(X ≤ min(b,c))), X ~ Bin(b+c, 1/2):
	//   b=5 c=0: 2·(1/32) = .0625
	//   b=6 c=0: 2·(1/64) = .03125
	//   b=8 c=2: P(X≤2) = (1+10+45)/1024 = 56/1024 → 112/1024 = .109375
	//   b=1 c=10: P(X≤1) = (1+11)/2048 → 24/2048 = .01171875
	//   b=1 c=0: 2·(1/2) = 1; b=3 c=3: capped at 1; b=c=0: 1 (no evidence)
	//   b=c=2000: capped at 1 (the log-space sum must not overflow)
	tests := []struct {
		b, c int
		p    float64
	}{
		{5, 0, 0.0625},
		{0, 5, 0.0625},
		{6, 0, 0.03125},
		{8, 2, 0.109375},
		{1, 10, 0.01171875},
		{1, 0, 1},
		{3, 3, 1},
		{0, 0, 1},
		{2000, 2000, 1},
	}
	for _, tt := range tests {
		if got := McNemarExact(tt.b, tt.c); !near(got, tt.p, 1e-12) {
			t.Errorf("McNemarExact(%d, %d) = %v, want %v", tt.b, tt.c, got, tt.p)
		}
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{1, 2, 3, 4}
	p50, p95 := Quantile(xs, 0.5), Quantile(xs, 0.95)
	// sorted 1 2 3 4: p50 at rank 1.5 → 2.5; p95 at rank 2.85 → 3 + .85 = 3.85
	if !near(p50, 2.5, 1e-12) || !near(p95, 3.85, 1e-12) {
		t.Errorf("Quantile = %v, %v; want 2.5, 3.85", p50, p95)
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("Quantile(nil) should be NaN")
	}
	if got := Quantile([]float64{7}, 0.95); got != 7 {
		t.Errorf("Quantile([7], .95) = %v", got)
	}
}

func TestMeanSD(t *testing.T) {
	// 2 4 4 4 5 5 7 9: mean 5, squared deviations sum 32, sample SD sqrt(32/7)
	m, sd := MeanSD([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if m != 5 || !near(sd, math.Sqrt(32.0/7), 1e-12) {
		t.Errorf("MeanSD = %v, %v", m, sd)
	}
}
