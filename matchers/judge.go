package matchers

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// This file holds judged answers: an answer expectation {$judge: RUBRIC}
// that a model (the run config's judge), not a matcher, decides. The
// matcher language stays pure: it names the answers to judge (Judged)
// and reads the verdicts the caller puts in Trace.Verdicts; asking the
// judge is the engine's (package engine/judge), building its input the
// scorer's (package matchers/score).

// JudgeOp is the key of a judged answer expectation.
const JudgeOp = "$judge"

// JudgeWith values: what else of the run the judge sees besides the
// user's messages and the answer.
const (
	JudgeWithCalls = "calls" // the run's tool calls and their results
)

// judgeFields are the keys of a judged answer expectation.
var judgeFields = []string{JudgeOp, "with"}

// JudgeSpec is a judged answer expectation as written.
type JudgeSpec struct {
	// Rubric is what the judge checks the answer against.
	Rubric string
	// With lists what else the judge sees (JudgeWithCalls); never the
	// expectations.
	With []string
}

// Sees reports whether the judge sees what (a JudgeWith value).
func (s *JudgeSpec) Sees(what string) bool { return slices.Contains(s.With, what) }

// Judged is one answer of a run that a judge decides.
type Judged struct {
	// Where names the expectation: "expect.answer" for the final
	// answer, "expect.turns[i].answer" for the answer to user turn i.
	// Trace.Verdicts holds the verdict under it.
	Where string
	// Turn is the user turn whose answer is judged; -1 for the final
	// answer (Trace.Answer).
	Turn int
	JudgeSpec
}

// JudgeVerdict is a judge's decision on one answer, as the scorer reads
// it.
type JudgeVerdict struct {
	Pass   bool
	Reason string // the judge's short reason
}

// isJudge reports whether an answer expectation is a judged one: an
// object with the key $judge.
func isJudge(v any) bool {
	m, ok := asMap(v)
	if !ok {
		return false
	}
	_, ok = m[JudgeOp]
	return ok
}

// compileJudge compiles {$judge: RUBRIC, with: [calls]} at p.
func compileJudge(p path, v any, errs *CompileErrors) *JudgeSpec {
	m, _ := asMap(v)
	checkFields(p, m, judgeFields, errs)
	spec := &JudgeSpec{}
	rubric, ok := m[JudgeOp].(string)
	if !ok || strings.TrimSpace(rubric) == "" {
		errs.add(compileErr(p, p.key(JudgeOp), "$judge takes the rubric the judge checks the answer against, a non-empty string, got %s", show(m[JudgeOp])))
	}
	spec.Rubric = rubric
	if w, ok := m["with"]; ok {
		list, err := stringList(p.key("with"), w, "what the judge sees besides the answer ("+JudgeWithCalls+")", judgeWithName)
		if !errs.add(err) {
			spec.With = list
		}
	}
	return spec
}

var judgeWithName = regexp.MustCompile(`^` + JudgeWithCalls + `$`)

// Judged lists the answers of cell c a judge decides, in the order of
// the expectation: the final answer, then each user turn's.
func (e *Expectation) Judged(c Cell) []Judged {
	r := e.effective(c)
	var out []Judged
	if r.judge != nil {
		out = append(out, Judged{Where: "expect.answer", Turn: -1, JudgeSpec: *r.judge})
	}
	for i, t := range r.turns {
		if t.judge != nil {
			out = append(out, Judged{Where: fmt.Sprintf("expect.turns[%d].answer", i), Turn: i, JudgeSpec: *t.judge})
		}
	}
	return out
}

// HasJudge reports whether any cell's expectation has a judged answer
// (the base or a when entry's).
func (e *Expectation) HasJudge() bool {
	has := func(r *rules) bool {
		if r.judge != nil {
			return true
		}
		for i := range r.turns {
			if r.turns[i].judge != nil {
				return true
			}
		}
		return false
	}
	if has(&e.base) {
		return true
	}
	for i := range e.when {
		if has(&e.when[i].patch) {
			return true
		}
	}
	return false
}

// judgeAnswer adds the judge's verdict on the answer of scope sc to
// reasons, or notes it unjudged when t holds none.
func judgeAnswer(sc scope, t Trace, add func(code, format string, args ...any), unjudged *[]string) {
	where := sc.expect + ".answer"
	v, ok := t.Verdicts[where]
	switch {
	case !ok:
		*unjudged = append(*unjudged, where)
	case !v.Pass:
		add(ReasonJudgeRejected, "%s: the judge failed the answer: %s", where, v.Reason)
	}
}
