package stats

import "math"

// Part is one term of a weighted sum of independent estimates: its weight
// W (at least 0), its estimate Est and its 95% interval [Lo, Hi].
type Part struct {
	W, Est, Lo, Hi float64
}

// WeightedSum returns Σ Wᵢ·Estᵢ over parts with a 95% interval built
// from the parts' own intervals, for parts estimated from disjoint,
// independent samples (pass rates of categories with no case in common).
//
// Method: MOVER, the method of variance estimates recovery (Zou & Donner
// 2008; for linear functions of proportions, Zou, Huang & Zhang 2009).
// Each part's interval is read back as a variance on each side (the
// distance from its estimate to its lower and to its upper bound), and
// independent variances add:
//
//	Lo = S − sqrt(Σ Wᵢ²·(Estᵢ − Loᵢ)²)
//	Hi = S + sqrt(Σ Wᵢ²·(Hiᵢ − Estᵢ)²)
//
// With symmetric Wald intervals Est ± z·SE this is exactly S ± z·SE of
// the sum (SE² = Σ Wᵢ²·SEᵢ²); with asymmetric intervals (Wilson, or the
// clustered Wilson of ClusteredRate) it keeps their asymmetry, so a sum
// of rates near 100% gets a short upper side and a longer lower one, and
// a single part of weight 1 gets its own interval back. For weights
// summing to 1 and part intervals inside [0, 1] the result stays inside
// [0, 1] (the root of a sum of squares is at most the sum). Parts of
// weight 0 do not count.
func WeightedSum(parts []Part) (est, lo, hi float64) {
	var down, up float64
	for _, p := range parts {
		if p.W <= 0 {
			continue
		}
		est += p.W * p.Est
		d, u := p.W*(p.Est-p.Lo), p.W*(p.Hi-p.Est)
		down += d * d
		up += u * u
	}
	return est, est - math.Sqrt(down), est + math.Sqrt(up)
}
