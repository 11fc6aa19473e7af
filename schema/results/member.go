package results

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
)

// Members tells which records are runs of the plan a config.json
// records, from config.json alone (no case files, no CUE): the config's
// matrix and the run digest of each case (Meta.Cases) rebuild the plan's
// run ids, and a record is a member when its case and cell name a run of
// that plan with the record's id. A line appended by hand, a record of
// another job, or one whose case, cell or id was edited is not.
//
// Filters and the shard are not applied: a record of the whole plan is a
// member of every shard's directory (merge joins them).
type Members struct {
	loc   *plan.Locator
	cases map[string]string
}

// Members returns the membership test of m's plan. For a format 1
// directory (Legacy), whose ids cannot be rebuilt, a record is a member
// when its case is one of Meta.Cases. An error says the plan cannot be
// rebuilt (an empty matrix axis). A config.json that records no cases
// gives nil, which holds every record: there is nothing to check against.
func (m *Meta) Members() (*Members, error) {
	if len(m.Cases) == 0 {
		return nil, nil // nothing recorded to check against (not written by toolward run)
	}
	ms := &Members{cases: m.Cases}
	if m.Legacy() {
		return ms, nil
	}
	cases := make([]*schema.Case, 0, len(m.Cases))
	for _, id := range slices.Sorted(maps.Keys(m.Cases)) {
		cases = append(cases, &schema.Case{ID: id, RunDigest: m.Cases[id]})
	}
	p, err := plan.New(m.Config, cases)
	if err != nil {
		return nil, fmt.Errorf("rebuilding the plan from %s: %w", ConfigFile, err)
	}
	ms.loc = plan.NewLocator(p)
	return ms, nil
}

// Holds reports whether rec is a run of the plan. A nil *Members holds
// every record.
func (ms *Members) Holds(rec *record.Record) bool {
	switch {
	case ms == nil:
		return true
	case ms.loc == nil:
		_, ok := ms.cases[rec.Case]
		return ok
	}
	_, ok := ms.loc.Index(rec)
	return ok
}

// Foreign counts and names the records a reader left out because they
// are not runs of the directory's plan (see Members).
type Foreign struct {
	N int
	// Examples holds the ids (with their case) of the first MaxBadKept.
	Examples []string
}

// Add counts rec as foreign.
func (f *Foreign) Add(rec *record.Record) {
	f.N++
	if len(f.Examples) < MaxBadKept {
		f.Examples = append(f.Examples, fmt.Sprintf("%q (case %q)", rec.ID, rec.Case))
	}
}

// String says what was left out, for a warning; "" when nothing was.
func (f *Foreign) String() string {
	if f.N == 0 {
		return ""
	}
	more := ""
	if f.N > len(f.Examples) {
		more = fmt.Sprintf(" and %d more", f.N-len(f.Examples))
	}
	return fmt.Sprintf("ignored %d record(s) of %s that are not runs of the plan %s records (case, cell and run id must match): %s%s",
		f.N, RunsFile, ConfigFile, strings.Join(f.Examples, ", "), more)
}
