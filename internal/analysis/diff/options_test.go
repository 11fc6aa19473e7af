package diff

import (
	"testing"

	"github.com/toolward/toolward/schema/record"
)

// TestOptionsCellsPaired: runs that differ only in their options set are
// different pairs: the one whose outcome flipped is the deep cell's, and
// the default cell's steady pass is no change.
func TestOptionsCellsPaired(t *testing.T) {
	t.Parallel()
	rec := func(kase, opts string, o record.Outcome) *record.Record {
		return &record.Record{ID: kase + opts, Case: kase, Cell: record.Cell{Model: "m", Seed: 1, Options: opts}, Outcome: o}
	}
	// Written in an order that puts each case's two cells apart.
	base := writeRuns(t, rec("a", "deep", record.Pass), rec("b", "", record.Pass), rec("a", "", record.Pass), rec("b", "deep", record.Pass))
	nw := writeRuns(t, rec("b", "deep", record.Pass), rec("a", "", record.Pass), rec("b", "", record.Pass), rec("a", "deep", record.Fail))
	r, err := Compare(base, nw, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Regressions) != 1 || r.Regressions[0].Case != "a" || r.Regressions[0].Cell.Options != "deep" || len(r.Fixes) != 0 {
		t.Errorf("regressions %+v, fixes %+v", r.Regressions, r.Fixes)
	}
	if len(r.Models) != 1 || r.Models[0].Pairs != 4 {
		t.Errorf("models %+v", r.Models)
	}
}
