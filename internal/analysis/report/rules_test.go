package report

import (
	"reflect"
	"testing"

	"github.com/toolward/toolward/schema/record"
)

// TestRulesWarnings: a case whose runs carry two rules digests gets a
// warning; one digest, errors and records without a digest do not.
func TestRulesWarnings(t *testing.T) {
	var a rulesAgg
	for _, r := range []record.Record{
		{Case: "calc", Outcome: record.Pass, Rules: "1111111111111111"},
		{Case: "calc", Outcome: record.Fail, Rules: "2222222222222222"},
		{Case: "calc", Outcome: record.Fail, Rules: "2222222222222222"},
		{Case: "calc", Outcome: record.Error},
		{Case: "irr", Outcome: record.Pass, Rules: "3333333333333333"},
		{Case: "irr", Outcome: record.Pass, Rules: "3333333333333333"},
		{Case: "old", Outcome: record.Pass}, // format version 1
		{Case: "old", Outcome: record.Pass, Rules: "4444444444444444"},
	} {
		a.add(&r)
	}
	want := []string{"case calc: its 3 runs were judged by 2 versions of its scoring rules (2 by rules 22222222, 1 by rules 11111111); re-score the directory with toolward score to judge every run by the cases as they are now"}
	if got := a.warnings(); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n%q\nwant\n%q", got, want)
	}
	var none rulesAgg
	if got := none.warnings(); got != nil {
		t.Errorf("no records: %q", got)
	}
}
