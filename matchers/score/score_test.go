package score

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

func rules(t *testing.T, expect map[string]any) *Rules {
	t.Helper()
	r, err := CaseRules(&schema.Case{ID: "c", Expect: expect})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func codes(rs []matchers.Reason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

// TestJudge: a trace the expectation accepts passes unless the loop ran
// out of turns, which fails it with max_iterations ahead of the scorer's
// own reasons. The turn limit is read from the stored trace alone.
func TestJudge(t *testing.T) {
	r := rules(t, map[string]any{
		"calls":  []any{map[string]any{"tool": "add"}},
		"answer": map[string]any{"$contains": "5"},
	})
	good := record.Trace{Calls: []record.Call{{Tool: "add"}}, Answer: "5", Turns: make([]record.Turn, 2)}
	looped := record.Trace{Calls: []record.Call{{Tool: "add"}, {Tool: "add"}}, Turns: make([]record.Turn, 2)}
	outOf := func(t record.Trace) record.Trace { t.OutOfTurns = true; return t }
	for _, tc := range []struct {
		name    string
		trace   record.Trace
		outcome record.Outcome
		codes   []string
	}{
		{"pass", good, record.Pass, nil},
		{"right calls but out of turns", outOf(good), record.Fail, []string{matchers.ReasonMaxIterations}},
		{"out of turns, no answer", outOf(looped), record.Fail, []string{matchers.ReasonMaxIterations, matchers.ReasonAnswerMismatch}},
		{"no answer", looped, record.Fail, []string{matchers.ReasonAnswerMismatch}},
	} {
		v := r.Judge(record.Cell{}, tc.trace, nil, nil)
		if record.OutcomeOf(v.Pass) != tc.outcome || !slices.Equal(codes(v.Reasons), tc.codes) {
			t.Errorf("%s: outcome %s, reasons %v; want %s, %v", tc.name, record.OutcomeOf(v.Pass), v.Reasons, tc.outcome, tc.codes)
		}
	}
}

// TestJudgeOutOfTurnsNamesTextCalls: when the loop runs out of turns and
// the matchers had no objection, text calls are still named as a reason.
func TestJudgeOutOfTurnsNamesTextCalls(t *testing.T) {
	r := rules(t, map[string]any{"calls": []any{map[string]any{"tool": "add"}}})
	tr := record.Trace{
		Calls:      []record.Call{{Tool: "add", Turn: 0}},
		Turns:      []record.Turn{{Content: `[TOOL_CALLS] [{"name": "add", "arguments": {"a": 1}}]`, ToolCalls: 1}, {ToolCalls: 1}},
		OutOfTurns: true,
	}
	rec := &record.Record{Case: "c", Trace: tr}
	r.Score(rec)
	if want := []string{matchers.ReasonMaxIterations, matchers.ReasonUnparsedCall}; !reflect.DeepEqual(codes(rec.Reasons), want) || len(rec.Trace.TextCalls) != 1 {
		t.Errorf("reasons %v, text calls %v; want %v", rec.Reasons, rec.Trace.TextCalls, want)
	}
	if rec.Rules != r.Digest || rec.Outcome != record.Fail {
		t.Errorf("rules %q outcome %s, want %q fail", rec.Rules, rec.Outcome, r.Digest)
	}
}

// TestScoreKeepsErrors: an infrastructure error has no verdict; scoring
// leaves the record as it is.
func TestScoreKeepsErrors(t *testing.T) {
	r := rules(t, map[string]any{"no_calls": true})
	rec := &record.Record{Outcome: record.Error, Error: &record.InfraError{Kind: "backend", Message: "down"}}
	r.Score(rec)
	if rec.Outcome != record.Error || rec.Rules != "" || rec.Reasons != nil {
		t.Errorf("error record scored: %+v", rec)
	}
}

// TestRulesDigest: the digest follows the expect block's content (not
// its key order) and nothing else of the case.
func TestRulesDigest(t *testing.T) {
	d := func(c *schema.Case) string {
		r, err := CaseRules(c)
		if err != nil {
			t.Fatal(err)
		}
		return r.Digest
	}
	exp := func(answer string) map[string]any {
		return map[string]any{"max_calls": 3, "answer": map[string]any{"$contains": answer}}
	}
	base := d(&schema.Case{ID: "c", Prompt: "p", Expect: exp("5")})
	if len(base) != 16 {
		t.Fatalf("digest %q", base)
	}
	if got := d(&schema.Case{ID: "c", Prompt: "other prompt", Tags: []string{"x"}, Golden: &schema.Golden{Answer: "5"}, Expect: exp("5")}); got != base {
		t.Errorf("digest changed with prompt, tags or golden")
	}
	if got := d(&schema.Case{ID: "c", Prompt: "p", Expect: exp("6")}); got == base {
		t.Errorf("digest unchanged by a new answer matcher")
	}
}

// TestRescorable: a record is re-scorable unless a value scoring reads was
// stored in part.
func TestRescorable(t *testing.T) {
	for path, want := range map[string]bool{
		"trace.answer": false, "trace.turns[3].content": false, "trace.calls[0].args.sql": false,
		"trace.calls": false, "trace.turns": false, "truncated": false, "trace.calls[1].tool": false,
		"trace.turns[3].thinking": true, "trace.calls[0].result": true, "trace.calls[0].structured.rows": true,
		"error.message": true, "reasons[0].detail": true, "trace.offered": true,
	} {
		ok, at := Rescorable(&record.Record{Truncated: []record.Truncation{{Path: path, Bytes: 5}}})
		if ok != want || (!ok && at != path) {
			t.Errorf("%s: rescorable %v (%q), want %v", path, ok, at, want)
		}
	}
}

// TestJudgeMaxTurns: a simulated user still going after user.max_turns
// fails the run with max_turns first, whatever its calls.
func TestJudgeMaxTurns(t *testing.T) {
	r := rules(t, map[string]any{"answer": map[string]any{"$contains": "5"}})
	tr := record.Trace{Answer: "5", Turns: []record.Turn{{Content: "5"}}, OutOfUserTurns: true,
		Users: []record.UserTurn{{Content: "q", From: record.UserFromCase}, {Before: 1, Content: "more?", From: record.UserFromSimulator, Unsent: true}}}
	v := r.Judge(record.Cell{}, tr, nil, nil)
	if record.OutcomeOf(v.Pass) != record.Fail || !slices.Equal(codes(v.Reasons), []string{matchers.ReasonMaxTurns}) || !strings.Contains(v.Reasons[0].Detail, "after 1 user messages") {
		t.Errorf("outcome %s, reasons %v", record.OutcomeOf(v.Pass), v.Reasons)
	}
	tr.OutOfUserTurns = false
	if v := r.Judge(record.Cell{}, tr, nil, nil); record.OutcomeOf(v.Pass) != record.Pass {
		t.Errorf("without max_turns: %s %v", record.OutcomeOf(v.Pass), v.Reasons)
	}
}

// TestProbeDigestGolden: an equals: golden probe's digest covers the
// golden's calls, a conversation's every turn; a matcher probe's does
// not, and a cell without probes has none.
func TestProbeDigestGolden(t *testing.T) {
	t.Parallel()
	expect := map[string]any{"state": []any{map[string]any{"tool": "s", "equals": "golden"}}}
	turns := func(second string) *schema.Case {
		return &schema.Case{ID: "c", Expect: expect, Golden: &schema.Golden{Turns: []schema.GoldenTurn{
			{Calls: []schema.GoldenCall{{Tool: "create", Args: map[string]any{"p": "low"}}}},
			{Calls: []schema.GoldenCall{{Tool: "update", Args: map[string]any{"p": second}}}},
		}}}
	}
	digest := func(c *schema.Case) string {
		r, err := CaseRules(c)
		if err != nil {
			t.Fatal(err)
		}
		return r.ProbeDigest(record.Cell{})
	}
	a, b := digest(turns("high")), digest(turns("urgent"))
	if a == "" || a == b {
		t.Fatalf("digests %q %q: an edit of the second turn's golden call must change it", a, b)
	}
	m := map[string]any{"state": []any{map[string]any{"tool": "s", "result": 1}}}
	c1, c2 := turns("high"), turns("urgent")
	c1.Expect, c2.Expect = m, m
	if digest(c1) != digest(c2) {
		t.Fatal("a matcher probe's digest follows the golden")
	}
	if d := digest(&schema.Case{ID: "c", Expect: map[string]any{}}); d != "" {
		t.Fatalf("no probes, digest %q", d)
	}
}

// TestRulesGoldenOfConversation: equals: golden replays every turn's
// calls of a conversation's golden, in order.
func TestRulesGoldenOfConversation(t *testing.T) {
	c := &schema.Case{ID: "c", Expect: map[string]any{}, Golden: &schema.Golden{Turns: []schema.GoldenTurn{
		{Calls: []schema.GoldenCall{{Tool: "create_ticket"}}, Answer: "a"},
		{Answer: "b"},
		{Calls: []schema.GoldenCall{{Tool: "update_ticket"}}, Answer: "c"},
	}}}
	r, err := CaseRules(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Golden) != 2 || r.Golden[0].Tool != "create_ticket" || r.Golden[1].Tool != "update_ticket" {
		t.Errorf("golden calls %+v", r.Golden)
	}
}
