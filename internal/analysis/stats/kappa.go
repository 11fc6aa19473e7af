package stats

import "errors"

// Agreement is how often two raters (a judge and a person) gave the same
// binary verdict, and how much of it chance would give.
type Agreement struct {
	N        int     // items both rated
	Observed float64 // the share rated alike
	// Chance is the share alike expected from the raters' own rates of
	// pass alone: pa·pb + (1−pa)(1−pb).
	Chance float64
	// Kappa is Cohen's kappa, (Observed − Chance) / (1 − Chance): 1 for
	// perfect agreement, 0 for what chance gives, below 0 for worse.
	// Undefined (KappaOK false) when Chance is 1: both raters gave one
	// verdict only.
	Kappa   float64
	KappaOK bool
	// BaseRate is the share of items the reference rater (b, the
	// person) passed: a judge that passes everything agrees that often.
	BaseRate float64
	Warnings []error
}

// Warnings of Kappa.
var (
	ErrOneVerdict = errors.New("every item got one verdict from both raters: kappa is undefined")
	ErrFewItems   = errors.New("fewer than 20 items: kappa varies widely from sample to sample")
)

// Kappa compares verdicts a (the judge's) with b (the reference, a
// person's), item by item; a and b must have the same length.
func Kappa(a, b []bool) Agreement {
	if len(a) != len(b) {
		panic("stats: Kappa of lists of different lengths")
	}
	out := Agreement{N: len(a)}
	if out.N == 0 {
		out.Warnings = append(out.Warnings, ErrFewItems)
		return out
	}
	var same, pa, pb float64
	for i := range a {
		if a[i] == b[i] {
			same++
		}
		if a[i] {
			pa++
		}
		if b[i] {
			pb++
		}
	}
	n := float64(out.N)
	out.Observed, pa, pb = same/n, pa/n, pb/n
	out.BaseRate = pb
	out.Chance = pa*pb + (1-pa)*(1-pb)
	if out.Chance < 1 {
		out.Kappa, out.KappaOK = (out.Observed-out.Chance)/(1-out.Chance), true
	} else {
		out.Warnings = append(out.Warnings, ErrOneVerdict)
	}
	if out.N < 20 {
		out.Warnings = append(out.Warnings, ErrFewItems)
	}
	return out
}
