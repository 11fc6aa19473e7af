package judge

import (
	"context"
	"slices"

	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

// Rubric is one judged answer of a case (its rubric) checked against
// the case's labelled answers (calibration) and its golden answer.
type Rubric struct {
	Case, Where, Rubric string
	Examples            []Example
	// Golden is the case's golden answer for it, judged; nil when the
	// golden has none (or the case no golden).
	Golden *Example
}

// Example is one answer put to the judge.
type Example struct {
	Answer string
	Label  bool // the person's verdict (pass); the golden's is pass
	Note   string
	// Judgement is the judge's: every vote and their majority. Err is
	// set instead when the judge failed on it.
	Judgement record.Judgement
	Err       error
}

// Unanimous reports whether the judge's votes on e all agreed.
func (e *Example) Unanimous() bool { return e.Err == nil && e.Judgement.Unanimous() }

// Check puts each labelled answer of cases (schema.Case.Calibration), and
// each golden answer of a judged answer, to judge a with the case's
// rules, samples times each (seeds 1 to samples; 0 means the config's
// judge.samples). Rubrics come in case order, then the expectation's
// order, and only those with a labelled answer or a golden answer. A
// judge failure on one answer is kept on it (Example.Err); ctx ending
// stops the check.
func Check(ctx context.Context, cases []*schema.Case, rules map[string]*score.Rules, a score.Asker, samples int) ([]Rubric, error) {
	var out []Rubric
	for _, c := range cases {
		r := rules[c.ID]
		if r == nil || !r.HasJudge() || r.JudgeConfig == nil {
			continue
		}
		ru := *r
		jc := *r.JudgeConfig
		if samples > 0 {
			jc.Samples = samples
		}
		ru.JudgeConfig = &jc
		for _, j := range ru.Expect.Judged(schema.GoldenCell) {
			rb := Rubric{Case: c.ID, Where: j.Where, Rubric: j.Rubric}
			for _, l := range c.Calibration {
				if l.At() == j.Where {
					rb.Examples = append(rb.Examples, Example{Answer: l.Answer, Label: l.Verdict == "pass", Note: l.Note})
				}
			}
			if g := goldenAnswer(c, j.Turn); g != nil {
				rb.Golden = &Example{Answer: *g, Label: true, Note: "the case's golden answer"}
			}
			if len(rb.Examples) == 0 && rb.Golden == nil {
				continue
			}
			for i := range rb.Examples {
				if err := ask(ctx, c, &ru, j.Where, j.Turn, &rb.Examples[i], a); err != nil {
					return out, err
				}
			}
			if rb.Golden != nil {
				if err := ask(ctx, c, &ru, j.Where, j.Turn, rb.Golden, a); err != nil {
					return out, err
				}
			}
			out = append(out, rb)
		}
	}
	return out, nil
}

// goldenAnswer is the golden's answer that judged answer turn (-1: the
// final answer) judges, or nil.
func goldenAnswer(c *schema.Case, turn int) *string {
	g := c.Golden
	switch {
	case g == nil:
		return nil
	case len(g.Turns) > 0 && turn < 0:
		return &g.Turns[len(g.Turns)-1].Answer
	case len(g.Turns) > 0 && turn < len(g.Turns):
		return &g.Turns[turn].Answer
	case len(g.Turns) == 0 && turn <= 0 && g.Answer != "":
		return &g.Answer
	}
	return nil
}

// ask puts e's answer to the judge as the answer at where (user turn
// turn, -1 the final) of a run of c in the default cell, e's earlier user
// turns being the case's scripted replies (a simulated user's are not
// known: the judge sees the opening only).
func ask(ctx context.Context, c *schema.Case, r *score.Rules, where string, turn int, e *Example, a score.Asker) error {
	rec := &record.Record{Case: c.ID, Cell: schema.GoldenCell, Trace: record.Trace{Answer: e.Answer}}
	if turn >= 0 && c.User != nil {
		opening := slices.Clone(r.Opening)
		for k := 0; k <= turn; k++ {
			content, from := "", record.UserFromScript
			switch {
			case k == 0:
				if len(opening) > 0 {
					content = opening[len(opening)-1]
				}
				from = record.UserFromCase
			case k-1 < len(c.User.Replies):
				content = c.User.Replies[k-1]
			}
			rec.Trace.Users = append(rec.Trace.Users, record.UserTurn{Before: k, Content: content, From: from})
			answer := ""
			if k == turn {
				answer = e.Answer
			} else if g := goldenAnswer(c, k); g != nil {
				answer = *g
			}
			rec.Trace.Turns = append(rec.Trace.Turns, record.Turn{Content: answer})
		}
	}
	for _, in := range r.JudgeInputs(rec) {
		if in.Where != where {
			continue
		}
		e.Judgement, e.Err = a.Ask(ctx, rec, &in)
		if e.Err == nil {
			e.Judgement.Where, e.Judgement.Input = in.Where, in.Digest
		}
		return ctx.Err()
	}
	return nil
}
