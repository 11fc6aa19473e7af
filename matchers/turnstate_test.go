package matchers

import (
	"strings"
	"testing"
)

// TestTurnStateJudged: a turn's probes judge the results taken after that
// turn, with the path of the turn in the reason; an unobserved turn (nil)
// is not judged.
func TestTurnStateJudged(t *testing.T) {
	t.Parallel()
	e := compileYAML(t, `
turns:
  - state: [{tool: st, equals: golden}]
  - {}
  - state: [{tool: st, equals: golden}, {tool: st, result: {n: 2}}]
`)
	probes := e.TurnProbes(Cell{})
	if len(probes) != 3 || len(probes[0]) != 1 || probes[1] != nil || len(probes[2]) != 2 {
		t.Fatalf("TurnProbes = %v", probes)
	}
	if !e.HasProbes() {
		t.Fatal("HasProbes false with turn probes")
	}
	same := func(v any) []ProbeResult { return []ProbeResult{{Value: v, Want: &ProbeResult{Value: v}}} }
	tr := Trace{Answers: []string{"a", "b", "c"}, TurnState: [][]ProbeResult{
		same(map[string]any{"n": 1}),
		nil,
		{{Value: map[string]any{"n": 2}, Want: &ProbeResult{Value: map[string]any{"n": 3}}}, {Value: map[string]any{"n": 2}}},
	}}
	v := e.Score(tr, Cell{})
	if v.Pass || len(v.Reasons) != 1 || v.Reasons[0].Code != ReasonStateMismatch || !strings.HasPrefix(v.Reasons[0].Detail, "expect.turns[2].state[0] (st): ") {
		t.Fatalf("verdict %+v", v)
	}
	tr.TurnState[2][0].Want.Value = map[string]any{"n": 2}
	if v := e.Score(tr, Cell{}); !v.Pass {
		t.Fatalf("equal states fail: %+v", v)
	}
	tr.TurnState = [][]ProbeResult{nil, nil, nil} // not observed
	if v := e.Score(tr, Cell{}); !v.Pass {
		t.Fatalf("unobserved turns judged: %+v", v)
	}
}

// TestContainsGoldenResults: each turn's golden results must be among the
// run's results of that turn and the earlier ones, as a multiset.
func TestContainsGoldenResults(t *testing.T) {
	t.Parallel()
	e := compileYAML(t, `
turns:
  - contains_golden_results: true
  - contains_golden_results: true
`)
	if !e.GoldenResults(Cell{}) {
		t.Fatal("GoldenResults false")
	}
	tr := Trace{
		Answers: []string{"a", "b"},
		Calls: []Call{
			{Tool: "f", Result: "x", UserTurn: 0},
			{Tool: "g", Result: "y", UserTurn: 1},
		},
		GoldenResults: [][]string{{"x"}, {"x", "x"}},
	}
	// Turn 1 wants x twice: only one x so far.
	v := e.Score(tr, Cell{})
	if v.Pass || len(v.Reasons) != 1 || v.Reasons[0].Code != ReasonMissingResult || !strings.Contains(v.Reasons[0].Detail, `expect.turns[1].contains_golden_results: 1 of the golden's 2 results`) {
		t.Fatalf("verdict %+v", v)
	}
	tr.GoldenResults[1] = []string{"y", "x"} // the x of turn 0 counts in turn 1
	if v := e.Score(tr, Cell{}); !v.Pass {
		t.Fatalf("contained results fail: %+v", v)
	}
	tr.GoldenResults[0] = []string{"y"} // y comes only in turn 1: too late for turn 0
	if v := e.Score(tr, Cell{}); v.Pass {
		t.Fatal("a result of a later turn counted for an earlier one")
	}
	tr.GoldenResults = nil
	if v := e.Score(tr, Cell{}); !v.Pass {
		t.Fatalf("unobserved golden results judged: %+v", v)
	}
}
