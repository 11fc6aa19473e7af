package matchers

import (
	"strings"
	"testing"
)

// TestScoreTurns: expect.turns judges each user turn on its own calls
// (by UserTurn) and answer, naming calls by their index in the whole run;
// a turn the conversation never answered is missing_turn.
func TestScoreTurns(t *testing.T) {
	t.Parallel()
	e := expect(t, `
calls: [{tool: create_ticket}]
answer: {$contains: high}
turns:
  - calls: [{tool: create_ticket, args: {priority: medium}}]
    forbid: [update_ticket]
  - calls: [{tool: update_ticket, args: {priority: high}}]
    forbid: [create_ticket]
    answer: {$contains: high}
`)
	create := call("create_ticket", `{"priority":"medium"}`)
	update := call("update_ticket", `{"priority":"high"}`)
	update.UserTurn = 1
	good := Trace{Calls: []Call{create, update}, Answers: []string{"opened TCK-1001", "now high"}, Answer: "now high"}
	if v := e.Score(good, Cell{}); !v.Pass {
		t.Fatalf("good conversation: %v", v.Reasons)
	}

	// The correction opens a second ticket instead: turn 1 forbids it
	// and misses the update; the run's own rules still pass.
	second := call("create_ticket", `{"priority":"high"}`)
	second.UserTurn = 1
	twice := Trace{Calls: []Call{create, second}, Answers: []string{"opened", "opened another, high"}, Answer: "opened another, high"}
	v := e.Score(twice, Cell{})
	if got := codes(v); got != "forbidden_call,missing_call" {
		t.Fatalf("two tickets: %s %v", got, v.Reasons)
	}
	if d := v.Reasons[0].Detail; !strings.Contains(d, "calls[1]") || !strings.Contains(d, "expect.turns[1].forbid") {
		t.Errorf("forbidden call named %q, want calls[1] (its index in the run) and the turn's rule", d)
	}
	if d := v.Reasons[1].Detail; !strings.HasPrefix(d, "expect.turns[1].calls[0] (update_ticket)") {
		t.Errorf("missing call named %q", d)
	}

	// The conversation ended after one answered turn.
	short := Trace{Calls: []Call{create}, Answers: []string{"opened, high?"}, Answer: "opened, high?"}
	if got := codes(e.Score(short, Cell{})); got != "missing_turn" {
		t.Errorf("one turn answered: %s", got)
	}

	// A turn's answer and its no_calls are its own.
	e2 := expect(t, `{turns: [{answer: {$contains: draft}, no_calls: true}, {answer: {$contains: sent}}]}`)
	send := call("send_email", `{}`)
	v = e2.Score(Trace{Calls: []Call{send}, Answers: []string{"sent already", "sent"}, Answer: "sent"}, Cell{})
	if got := codes(v); got != "unexpected_call,answer_mismatch" || !strings.HasPrefix(v.Reasons[1].Detail, "expect.turns[0].answer") {
		t.Errorf("sent before the go-ahead: %s %v", got, v.Reasons)
	}
}

// TestTurnsCompile: a turn's mistakes are reported at their path, a turn
// cannot have turns or state, and when entries may override turns.
func TestTurnsCompile(t *testing.T) {
	t.Parallel()
	_, err := CompileExpect(y(t, `{turns: [{answr: x}, {turns: []}, {no_calls: true, calls: [{tool: f}]}]}`).(map[string]any))
	got := err.Error()
	for _, want := range []string{`expect.turns[0].answr: unknown field "answr" (did you mean "answer"?)`, `expect.turns[1].turns: unknown field "turns"`, "expect.turns[2].no_calls: no_calls: true contradicts"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q lack %q", got, want)
		}
	}
	e := expect(t, `{turns: [{answer: a}], when: [{confirm: deny, turns: [{answer: d}, {answer: e}]}]}`)
	if n, at := e.TurnRules(); n != 2 || PathString(at) != "expect.when[0].turns" {
		t.Errorf("TurnRules = %d at %v", n, at)
	}
	if v := e.Score(Trace{Answers: []string{"d", "e"}}, Cell{Confirm: "deny"}); !v.Pass {
		t.Errorf("when override of turns: %v", v.Reasons)
	}
}
