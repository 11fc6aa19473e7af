package diff

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGatePartialNew: new results that lack a case of the base, and a run
// of a case both ran, fail the gate, naming the case and the counts
// (before the fix a new directory holding a crashed run's first runs
// passed); GateOptions.AllowMissing accepts them.
func TestGatePartialNew(t *testing.T) {
	var pairs []pair
	for _, c := range []string{"c1", "c2", "c3"} {
		for seed := 1; seed <= 2; seed++ {
			pairs = append(pairs, pair{c, "a", seed, "P", "P"})
		}
	}
	pairs[3].new = "-" // c2 seed 2
	pairs[4].new, pairs[5].new = "-", "-"
	root := t.TempDir()
	base, nw := filepath.Join(root, "base"), filepath.Join(root, "new")
	writeSide(t, base, pairs, false)
	writeSide(t, nw, pairs, true)
	r, err := Compare(base, nw, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if r.Regressed() || r.DroppedRuns != 2 || r.BaseOnly != 1 {
		t.Fatalf("regressed %v, dropped runs %d, base only %d", r.Regressed(), r.DroppedRuns, r.BaseOnly)
	}
	err = r.GateWith(GateOptions{})
	for _, want := range []string{"incomplete", "1 case(s) of the base (2 runs): c3", "1 run(s) of cases both sides ran", "--allow-missing"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Gate() = %v, want it to say %q", err, want)
		}
	}
	if err := r.GateWith(GateOptions{AllowMissing: true}); err != nil {
		t.Errorf("GateWith(AllowMissing) = %v", err)
	}
}

// TestGateNamesAtMostTen: a gate error lists at most maxNamed case ids.
func TestGateNamesAtMostTen(t *testing.T) {
	r := &Result{Scored: 1, DroppedRuns: 12}
	for i := range 12 {
		r.DroppedCases = append(r.DroppedCases, string(rune('a'+i)))
	}
	err := r.GateWith(GateOptions{})
	if err == nil || !strings.Contains(err.Error(), "12 case(s)") || !strings.Contains(err.Error(), "j, … (2 more)") || strings.Contains(err.Error(), ", k") {
		t.Errorf("Gate() = %v", err)
	}
}

// TestGateFailOnBroken: one case that went from always passing to always
// failing on one seed is no significant regression, so the default gate
// passes; FailOnBroken fails it, naming the case.
func TestGateFailOnBroken(t *testing.T) {
	t.Parallel()
	var pairs []pair
	for _, c := range []string{"c1", "c2", "c3", "c4"} {
		pairs = append(pairs, pair{c, "a", 1, "P", "P"})
	}
	pairs[2].new = "F"
	root := t.TempDir()
	base, nw := filepath.Join(root, "base"), filepath.Join(root, "new")
	writeSide(t, base, pairs, false)
	writeSide(t, nw, pairs, true)
	r, err := Compare(base, nw, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.GateWith(GateOptions{}); err != nil {
		t.Fatalf("default gate: %v", err)
	}
	err = r.GateWith(GateOptions{FailOnBroken: true})
	if err == nil || !strings.Contains(err.Error(), "1 cases went from always passing to always failing: c3 (a, 1 runs)") {
		t.Errorf("GateWith(FailOnBroken) = %v", err)
	}
}

// TestUnderpowered: the 12-run suite with one planted pass →
// fail passes the McNemar gate; Underpowered says that reaching p < 0.05
// takes 6 pass → fail on 12 pairs, and on 4 pairs that nothing can.
func TestUnderpowered(t *testing.T) {
	t.Parallel()
	side := func(n int) *Result {
		var pairs []pair
		for i := range n {
			pairs = append(pairs, pair{string(rune('a' + i)), "m", 1, "P", "P"})
		}
		pairs[0].new = "F"
		root := t.TempDir()
		base, nw := filepath.Join(root, "base"), filepath.Join(root, "new")
		writeSide(t, base, pairs, false)
		writeSide(t, nw, pairs, true)
		r, err := Compare(base, nw, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.GateWith(GateOptions{}); err != nil {
			t.Fatalf("gate: %v", err)
		}
		return r
	}
	for _, tt := range []struct {
		n    int
		want string
	}{
		{12, "m: 1 pass → fail, 0 fail → pass, p 1.0000: not significant; reaching p < 0.05 on these 12 scored pairs takes at least 6 pass → fail beside the 0 fail → pass; the smallest difference these cases detect (MDD by case) is 25.6 pp"},
		{4, "m: 1 pass → fail, 0 fail → pass, p 1.0000: not significant; no outcome of 4 scored pairs can reach p < 0.05 (McNemar's smallest p is 0.1250, every pair pass → fail); the smallest difference these cases detect (MDD by case) is > 100 pp"},
	} {
		u := side(tt.n).Underpowered()
		if len(u) != 1 || u[0] != tt.want {
			t.Errorf("%d pairs: Underpowered() = %q\nwant %q", tt.n, u, tt.want)
		}
	}
	if u := (&Result{Alpha: 0.05, Models: []ModelDiff{{Model: "m", Pairs: 12, B: 1, C: 1, P: 1}}}).Underpowered(); len(u) != 0 {
		t.Errorf("no net loss: %q", u)
	}
}
