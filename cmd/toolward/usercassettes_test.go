package main

import (
	"strings"
	"testing"
)

// TestValidateUserTurnsAgreeWithReplay runs the config of
// fixtures/invalid/cassette-simulated-user, whose validation flags the
// cassette runs of seeds 1 and 2 for a simulated user who runs out of
// turns: replayed, exactly those seeds end in cassette_miss, and the
// run validation accepts (seed 3) does not.
func TestValidateUserTurnsAgreeWithReplay(t *testing.T) {
	if stdout := validateFixture(t, "cassette-simulated-user"); strings.Count(stdout, "cassette_miss") != 2 {
		t.Fatalf("validate: want two cassette_miss mistakes\n%s", stdout)
	}
	recs := replayRecords(t)
	for _, rec := range recs {
		miss := rec.Error != nil && rec.Error.Kind == "cassette_miss"
		if want := rec.Cell.Seed != 3; miss != want {
			t.Errorf("seed %d: cassette_miss %v, want %v (outcome %s, error %+v)", rec.Cell.Seed, miss, want, rec.Outcome, rec.Error)
		}
	}
	if len(recs) != 3 {
		t.Fatalf("%d runs, want 3", len(recs))
	}
}
