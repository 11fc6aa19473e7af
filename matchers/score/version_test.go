package score

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

// TestVersionGuard judges a fixed corpus (testdata/corpus.yaml, a frozen
// copy of the suite: every case against its golden trajectory, its golden
// answer without calls, a silent trace, and the golden run out of turns,
// in two cells) and pins the verdicts' outcomes and reason codes. When a change to scoring (package
// matchers, the text-call families, this package) moves a verdict, this
// test fails: records judged before and after must then be told apart, so
// bump Version, then update the pinned values. A change that moves no
// verdict here may still need a bump; this guard only catches the common
// case.
func TestVersionGuard(t *testing.T) {
	const wantVersion, wantDigest = 2, "1d3f60adb9dcadb4"
	cases, err := schema.LoadCases([]string{"testdata/corpus.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	cells := []record.Cell{
		{Tools: "needed", Confirm: "auto", Descriptions: "default"},
		{Model: "m", Temperature: 0.7, Tools: "n8", Confirm: "deny", Descriptions: "terse"},
	}
	for _, c := range cases {
		r, err := CaseRules(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range corpus(t, c) {
			for _, cell := range cells {
				v := r.Judge(cell, tr, nil, nil)
				var codes []string
				for _, re := range v.Reasons {
					codes = append(codes, re.Code)
				}
				fmt.Fprintf(h, "%s %s %s %s\n", c.ID, cell.Confirm, record.OutcomeOf(v.Pass), strings.Join(codes, ","))
			}
		}
	}
	got := hex.EncodeToString(h.Sum(nil))[:16]
	if Version != wantVersion || got != wantDigest {
		t.Errorf("scorer Version %d, verdict digest %s; pinned %d, %s.\n"+
			"If verdicts moved, bump score.Version and pin the new values; if only Version moved, pin it.", Version, got, wantVersion, wantDigest)
	}
}

// corpus returns the traces TestVersionGuard judges for c.
func corpus(t *testing.T, c *schema.Case) []record.Trace {
	t.Helper()
	var golden record.Trace
	if g := c.Golden; g != nil {
		golden.Answer = g.Answer
		golden.Turns = []record.Turn{{Content: g.Answer}}
		for _, gc := range g.Calls {
			b, err := json.Marshal(gc.Args)
			if err != nil {
				t.Fatal(err)
			}
			var args map[string]any // numbers as a model's: float64
			if err := json.Unmarshal(b, &args); err != nil {
				t.Fatal(err)
			}
			golden.Calls = append(golden.Calls, record.Call{Tool: gc.Tool, Args: args})
		}
	}
	answerOnly := record.Trace{Answer: golden.Answer, Turns: golden.Turns}
	looped := golden
	looped.OutOfTurns = true
	return []record.Trace{golden, answerOnly, {}, looped}
}
