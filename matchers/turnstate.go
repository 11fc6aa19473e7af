package matchers

import (
	"fmt"
	"strings"
)

// This file holds what a conversation's expectations judge turn by turn
// beyond calls and answers (issue 25 §2): the state probes of
// expect.turns[i].state, taken after the answer to user turn i, and the
// containment of the golden's call results (contains_golden_results),
// BFCL's execution-response check.

// ReasonMissingResult: a result of the golden's calls is not among the
// results of the run's calls so far (contains_golden_results).
const ReasonMissingResult = "missing_result"

// TurnProbes returns the state probes of each user turn of cell c
// (expect.turns[i].state of the effective rules), indexed by user turn;
// nil when no turn has probes.
func (e *Expectation) TurnProbes(c Cell) [][]Probe {
	r := e.effective(c)
	var out [][]Probe
	for i, t := range r.turns {
		if len(t.state) == 0 {
			continue
		}
		if out == nil {
			out = make([][]Probe, len(r.turns))
		}
		for _, s := range t.state {
			out[i] = append(out[i], Probe{Tool: s.Tool, Args: s.Args, Equals: s.Equals})
		}
	}
	return out
}

// GoldenResults reports whether the rules of cell c compare the run's
// call results with the golden's (contains_golden_results in expect or
// in any of its turns): the engine then replays the golden to give them.
func (e *Expectation) GoldenResults(c Cell) bool {
	r := e.effective(c)
	if r.ContainsGoldenResults {
		return true
	}
	for _, t := range r.turns {
		if t.ContainsGoldenResults {
			return true
		}
	}
	return false
}

// turnProbesSet reports whether any rules (the base or a when override)
// have per-turn probes.
func turnProbesSet(r *rules) bool {
	for _, t := range r.turns {
		if len(t.state) > 0 {
			return true
		}
	}
	return false
}

// missingResults lists the golden results of want not found among got,
// each taken once (a multiset inclusion, in any order).
func missingResults(want, got []string) []string {
	left := make(map[string]int, len(got))
	for _, g := range got {
		left[g]++
	}
	var missing []string
	for _, w := range want {
		if left[w] > 0 {
			left[w]--
			continue
		}
		missing = append(missing, w)
	}
	return missing
}

// resultsReason judges contains_golden_results at path at: the golden's
// results want against the results of calls (the run's calls so far).
func resultsReason(at string, want []string, calls []Call) []Reason {
	got := make([]string, len(calls))
	for i, c := range calls {
		got[i] = c.Result
	}
	missing := missingResults(want, got)
	if len(missing) == 0 {
		return nil
	}
	shown := make([]string, 0, 3)
	for _, m := range missing[:min(3, len(missing))] {
		shown = append(shown, show(truncateText(m, 200)))
	}
	more := ""
	if len(missing) > 3 {
		more = fmt.Sprintf(" and %d more", len(missing)-3)
	}
	return []Reason{{Code: ReasonMissingResult, Detail: fmt.Sprintf(
		"%s.contains_golden_results: %d of the golden's %d results not among the run's results so far: %s%s",
		at, len(missing), len(want), strings.Join(shown, ", "), more)}}
}

// truncateText cuts s to at most n bytes (at a rune boundary) with "…".
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// GoldenResultRefs returns the path of every contains_golden_results set
// true (in expect, its turns and its when overrides), for loaders that
// check the case has a golden to replay.
func (e *Expectation) GoldenResultRefs() [][]any {
	var out [][]any
	add := func(r *rules, at ...any) {
		if r.ContainsGoldenResults {
			out = append(out, append(append([]any{}, at...), "contains_golden_results"))
		}
		for i := range r.turns {
			if r.turns[i].ContainsGoldenResults {
				out = append(out, append(append([]any{}, at...), "turns", i, "contains_golden_results"))
			}
		}
	}
	add(&e.base, "expect")
	for wi := range e.when {
		add(&e.when[wi].patch, "expect", "when", wi)
	}
	return out
}
