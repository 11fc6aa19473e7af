package stats

import (
	"errors"
	"math"
	"testing"
)

// TestKappa against hand-computed values: 20 items, the person passes
// 15; the judge passes 16 and agrees on 17 (14 both pass, 3 both fail).
// Observed 0.85, chance 0.8·0.75 + 0.2·0.25 = 0.65, kappa 0.2/0.35.
// A judge that passes everything agrees at the base rate with kappa 0.
func TestKappa(t *testing.T) {
	t.Parallel()
	person := make([]bool, 20)
	judge := make([]bool, 20)
	for i := range 15 {
		person[i] = true
	}
	for i := range 14 {
		judge[i] = true
	}
	judge[15], judge[16] = true, true // two fails the judge passes; person[14] a pass it fails
	a := Kappa(judge, person)
	if a.N != 20 || a.Observed != 0.85 || math.Abs(a.Chance-0.65) > 1e-12 || !a.KappaOK || math.Abs(a.Kappa-0.2/0.35) > 1e-12 || a.BaseRate != 0.75 || len(a.Warnings) != 0 {
		t.Errorf("kappa %+v", a)
	}
	all := make([]bool, 20)
	for i := range all {
		all[i] = true
	}
	if a := Kappa(all, person); a.Observed != 0.75 || !a.KappaOK || a.Kappa != 0 {
		t.Errorf("always pass: %+v", a)
	}
	if a := Kappa(all[:3], all[:3]); a.KappaOK || !errors.Is(a.Warnings[0], ErrOneVerdict) || !errors.Is(a.Warnings[1], ErrFewItems) {
		t.Errorf("one verdict: %+v", a)
	}
}
