package engine

import (
	"slices"
	"testing"

	"github.com/toolward/toolward/engine/agent"
	"github.com/toolward/toolward/engine/record"
	"github.com/toolward/toolward/matchers"
)

// TestScore: a trace the expectation accepts passes unless the loop ran
// out of turns, which fails it with max_iterations ahead of the scorer's
// own reasons.
func TestScore(t *testing.T) {
	exp, err := matchers.CompileExpect(map[string]any{
		"calls":  []any{map[string]any{"tool": "add"}},
		"answer": map[string]any{"$contains": "5"},
	})
	if err != nil {
		t.Fatal(err)
	}
	j := &job{l: &Loaded{Expect: map[string]*matchers.Expectation{"c": exp}}}
	good := record.Trace{Calls: []record.Call{{Tool: "add"}}, Answer: "5", Turns: make([]record.Turn, 2)}
	looped := record.Trace{Calls: []record.Call{{Tool: "add"}, {Tool: "add"}}, Turns: make([]record.Turn, 2)}
	for _, tc := range []struct {
		name    string
		trace   record.Trace
		out     bool // out of turns
		outcome string
		codes   []string
	}{
		{"pass", good, false, record.Pass, nil},
		{"right calls but out of turns", good, true, record.Fail, []string{matchers.ReasonMaxIterations}},
		{"out of turns, no answer", looped, true, record.Fail, []string{matchers.ReasonMaxIterations, matchers.ReasonAnswerMismatch}},
	} {
		rec := &record.Record{Case: "c", Trace: tc.trace}
		j.score(rec, &agent.Output{Trace: tc.trace, OutOfTurns: tc.out})
		var codes []string
		for _, r := range rec.Reasons {
			codes = append(codes, r.Code)
		}
		if rec.Outcome != tc.outcome || !slices.Equal(codes, tc.codes) {
			t.Errorf("%s: outcome %s, reasons %v; want %s, %v", tc.name, rec.Outcome, rec.Reasons, tc.outcome, tc.codes)
		}
	}
}
