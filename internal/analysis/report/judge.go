package report

// This file holds the report's judge section: what the judge of judged
// answers ({$judge: RUBRIC}) decided and what it cost, counted apart
// from the models under test (record.Record.Judged). A verdict of the
// judge is a model's opinion, not a matcher's: the section says how many
// of the job's verdicts rest on it and how often its votes agreed.

import (
	"fmt"
	"time"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

// JudgeSummary is the judge's share of a job.
type JudgeSummary struct {
	Model string `json:"model"`
	// Runs counts the runs with judged answers that got verdicts;
	// Answers their judged answers, Passed those the judge passed.
	Runs    int `json:"runs"`
	Answers int `json:"answers"`
	Passed  int `json:"passed"`
	// Sampled counts the answers judged with more than one vote, and
	// Unanimous those of them whose votes all agreed (the judge's
	// self-consistency).
	Sampled   int `json:"sampled,omitempty"`
	Unanimous int `json:"unanimous,omitempty"`
	// Decided counts the run outcomes a judge verdict decided: failing
	// runs whose only reasons are the judge's (judge_rejected), and
	// passing runs with a judged answer.
	Decided int `json:"decided"`
	// Errors counts the runs that ended in an error of kind judge.
	Errors    int     `json:"errors,omitempty"`
	Requests  int     `json:"requests"`
	TokensIn  int64   `json:"tokens_in"`
	TokensOut int64   `json:"tokens_out"`
	LatencyMs float64 `json:"latency_ms"` // summed over the requests
	// Cost is the judge's requests at the judge model's price (config
	// prices); Priced is false without one.
	Cost   float64 `json:"cost,omitempty"`
	Priced bool    `json:"priced,omitempty"`
}

// judgeAgg folds records into a JudgeSummary.
type judgeAgg struct {
	s     *JudgeSummary
	price *schema.Price
}

// configure sets the judge model and its price from the config.
func (a *judgeAgg) configure(cfg *schema.Config) {
	if cfg == nil || cfg.Judge == nil {
		return
	}
	a.s = &JudgeSummary{Model: cfg.Judge.Model}
	if p, ok := cfg.Prices[cfg.Judge.Model]; ok && schema.LocalBackend(judgeBackend(cfg)) == "" {
		a.price = &p
		a.s.Priced = true
	}
}

func judgeBackend(cfg *schema.Config) schema.Backend {
	if cfg.Judge.Backend != nil {
		return *cfg.Judge.Backend
	}
	return cfg.Backend
}

func (a *judgeAgg) add(rec *record.Record, outcome record.Outcome) {
	if len(rec.Judged) == 0 && !(rec.Error != nil && rec.Error.Kind == score.KindJudge) {
		return
	}
	if a.s == nil {
		a.s = &JudgeSummary{}
	}
	s := a.s
	if rec.Error != nil && rec.Error.Kind == score.KindJudge {
		s.Errors++
	}
	if len(rec.Judged) > 0 && outcome != record.Error {
		s.Runs++
		if judgeDecided(rec, outcome) {
			s.Decided++
		}
	}
	for _, j := range rec.Judged {
		if s.Model == "" {
			s.Model = j.Model
		}
		s.Answers++
		if j.Pass {
			s.Passed++
		}
		if len(j.Votes) > 1 {
			s.Sampled++
			if j.Unanimous() {
				s.Unanimous++
			}
		}
		for _, v := range j.Votes {
			s.Requests++
			s.TokensIn += int64(v.Tokens.In)
			s.TokensOut += int64(v.Tokens.Out)
			s.LatencyMs += float64(v.Latency)
			if a.price != nil {
				s.Cost += a.price.Cost(v.Tokens.In, v.Tokens.Cached, v.Tokens.Out)
			}
		}
	}
}

// judgeDecided reports whether the judge decided rec's outcome: a pass
// with a judged answer, or a fail whose every reason is the judge's.
func judgeDecided(rec *record.Record, outcome record.Outcome) bool {
	if outcome == record.Pass {
		return true
	}
	for _, r := range rec.Reasons {
		if r.Code != matchers.ReasonJudgeRejected {
			return false
		}
	}
	return len(rec.Reasons) > 0
}

// summary is the JudgeSummary, nil when no run was judged.
func (a *judgeAgg) summary() *JudgeSummary {
	if a.s == nil || a.s.Answers == 0 && a.s.Errors == 0 {
		return nil
	}
	return a.s
}

// judgeExplainer says what the judge table shows.
const judgeExplainer = "Answers a model judged by a rubric ({$judge: …}) instead of a matcher: a judged verdict is that model's opinion. Its requests, tokens, time and cost are counted here, apart from the models under test. Unanimous is how often the votes of an answer judged more than once (judge.samples) agreed; measure the judge against labelled answers with toolward judge-check."

// judgeTable is the judge table of report.md and report.html; nil when
// no run was judged.
func (s *Summary) judgeTable() *Table {
	j := s.Judge
	if j == nil {
		return nil
	}
	t := &Table{ID: "judge-table", Columns: []Column{col("judge"), numCol("judged answers"), numCol("passed"), col("unanimous"), numCol("outcomes decided"), numCol("judge errors"), numCol("requests"), numCol("tokens in"), numCol("tokens out"), numCol("judge time"), col("judge cost")}}
	unanimous := "-"
	if j.Sampled > 0 {
		unanimous = fmt.Sprintf("%d of %d", j.Unanimous, j.Sampled)
	}
	cost := "-"
	if j.Priced {
		cost = fmt.Sprintf("$%.4f", j.Cost)
	}
	took := time.Duration(j.LatencyMs * float64(time.Millisecond)).Round(time.Millisecond)
	t.Rows = append(t.Rows, []Cell{nameCell(j.Model), numCell(j.Answers), numCell(j.Passed), textCell(unanimous), numCell(j.Decided), numCell(j.Errors), numCell(j.Requests), numCell(int(j.TokensIn)), numCell(int(j.TokensOut)), textCell(fmt.Sprint(took)), textCell(cost)})
	return t
}

// judgedFailure reports whether a judge's verdict failed e.
func judgedFailure(e *Example) bool {
	for _, r := range e.Reasons {
		if r.Code == matchers.ReasonJudgeRejected {
			return true
		}
	}
	return false
}

// votesText says how a judgement's votes fell: "1 vote", "3 of 3 votes".
// judgedLine is one judged answer's verdict on a line of text (junit.xml,
// toolward show): the judge model, where, the verdict, how the votes
// fell and the reason, cut to clip bytes when clip > 0.
func judgedLine(j record.Judgement, clip int) string {
	reason := j.Reason
	if clip > 0 {
		reason = truncate(reason, clip)
	}
	return fmt.Sprintf("judged by %s: %s %s (%s): %s", j.Model, j.Where, verdictWord(j.Pass), votesText(j), reason)
}

func votesText(j record.Judgement) string {
	if len(j.Votes) == 1 {
		return "1 vote"
	}
	n := 0
	for _, v := range j.Votes {
		if v.Pass == j.Pass {
			n++
		}
	}
	return fmt.Sprintf("%d of %d votes", n, len(j.Votes))
}

func verdictWord(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}
