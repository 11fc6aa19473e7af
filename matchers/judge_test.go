package matchers

import (
	"slices"
	"strings"
	"testing"
)

// TestJudgedAnswers: {$judge: RUBRIC} stands wherever an answer matcher
// does (the final answer, a user turn's answer, a when override); the
// scorer reads the caller's verdicts by where, fails with the judge's
// reason, and lists an answer without a verdict as unjudged, which
// alone does not fail the trace.
func TestJudgedAnswers(t *testing.T) {
	t.Parallel()
	e := expect(t, `
answer: {$judge: "explains the 30-day refund window", with: [calls]}
turns:
  - answer: {$contains: order}
  - answer: {$judge: "apologises"}
when:
  - model: big*
    answer: {$judge: "explains the refund window and cites the policy"}
`)
	got := e.Judged(Cell{Model: "small"})
	if len(got) != 2 || got[0].Where != "expect.answer" || got[0].Turn != -1 || !got[0].Sees(JudgeWithCalls) ||
		got[1].Where != "expect.turns[1].answer" || got[1].Turn != 1 || got[1].Rubric != "apologises" || got[1].Sees(JudgeWithCalls) {
		t.Fatalf("judged in a plain cell: %+v", got)
	}
	if big := e.Judged(Cell{Model: "big-1"}); big[0].Rubric != "explains the refund window and cites the policy" || big[0].With != nil {
		t.Errorf("when override: %+v", big[0])
	}
	if !e.HasJudge() || expect(t, `{answer: {$contains: x}}`).HasJudge() {
		t.Error("HasJudge")
	}

	tr := Trace{Answers: []string{"your order", "sorry, refunds take 30 days"}, Answer: "sorry, refunds take 30 days"}
	v := e.Score(tr, Cell{})
	if !v.Pass || !slices.Equal(v.Unjudged, []string{"expect.answer", "expect.turns[1].answer"}) {
		t.Fatalf("no verdicts: pass %v unjudged %v", v.Pass, v.Unjudged)
	}
	tr.Verdicts = map[string]JudgeVerdict{"expect.answer": {Pass: true}, "expect.turns[1].answer": {Pass: false, Reason: "no apology"}}
	v = e.Score(tr, Cell{})
	if v.Pass || len(v.Unjudged) != 0 || codes(v) != ReasonJudgeRejected || !strings.Contains(v.Reasons[0].Detail, "expect.turns[1].answer: the judge failed the answer: no apology") {
		t.Errorf("verdicts: %v %v unjudged %v", v.Pass, v.Reasons, v.Unjudged)
	}
	tr.Verdicts["expect.turns[1].answer"] = JudgeVerdict{Pass: true}
	if v := e.Score(tr, Cell{}); !v.Pass {
		t.Errorf("all pass: %v", v.Reasons)
	}
}

// TestJudgeCompileErrors: a judged answer's mistakes are named at their
// path, and $judge inside another matcher is refused with a word on
// where it goes.
func TestJudgeCompileErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, want string }{
		{`{answer: {$judge: ""}}`, `expect.answer: $judge takes the rubric`},
		{`{answer: {$judge: 3}}`, `expect.answer: $judge takes the rubric`},
		{`{answer: {$judge: ok, with: [expectations]}}`, `expect.answer.with[0]: want what the judge sees`},
		{`{answer: {$judge: ok, wiht: [calls]}}`, `expect.answer.wiht: unknown field "wiht" (did you mean "with"?)`},
		{`{answer: {$all: [{$judge: ok}]}}`, `$judge is an answer expectation of its own`},
		{`{calls: [{tool: t, args: {a: {$judge: ok}}}]}`, `$judge is an answer expectation of its own`},
	} {
		_, err := CompileExpect(y(t, c.src).(map[string]any))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.src, err, c.want)
		}
	}
}
