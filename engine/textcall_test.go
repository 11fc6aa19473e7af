package engine

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/toolward/toolward/engine/backend/replay"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/record"
)

// TestUnparsedCallReplayed is issue 12's regression: a replayed reply
// whose content is a Hermes <tool_call> block the server never parsed,
// then "Paris", used to pass a no_calls case with answer $contains:
// Paris. It fails with unparsed_call, the text call is stored on the
// record, and re-scoring the stored trace gives the same verdict.
func TestUnparsedCallReplayed(t *testing.T) {
	setup(t)
	os.WriteFile("cases/irr.yaml", []byte(`
id: irr-paris
prompt: What is the capital of France?
needs: [add]
expect:
  no_calls: true
  answer: {$contains: Paris}
`), 0o644)
	os.WriteFile("cassettes/irr-paris.yaml", []byte(`
case: irr-paris
runs:
  - turns:
      - content: '<tool_call>{"name": "calculate", "arguments": {"expression": "1+1"}}</tool_call> Paris'
`), 0o644)
	os.WriteFile("irr.cue", []byte(`
name: "irr"
cases: ["cases/irr.yaml"]
server: builtin: {}
backend: replay: "cassettes"
matrix: models: ["m"]
`), 0o644)
	rep, err := replay.New("cassettes")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{ConfigPath: "irr.cue", Backend: rep, Builtin: testServer, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	recs := readRuns(t, res.Dir)
	if len(recs) != 1 {
		t.Fatalf("%d runs", len(recs))
	}
	r := recs[0]
	if r.Outcome != record.Fail || len(r.Reasons) != 1 || r.Reasons[0].Code != matchers.ReasonUnparsedCall {
		t.Fatalf("outcome %s, reasons %v; want fail, unparsed_call", r.Outcome, r.Reasons)
	}
	want := []matchers.TextCall{{Turn: 0, Family: "hermes", Tool: "calculate", Args: map[string]any{"expression": "1+1"}}}
	if !reflect.DeepEqual(r.Trace.TextCalls, want) {
		t.Errorf("stored text calls %+v, want %+v", r.Trace.TextCalls, want)
	}
	l, err := Load("irr.cue", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	v := l.Rules[r.Case].Judge(r.Cell, r.Trace, nil, nil)
	if record.OutcomeOf(v.Pass) != record.Fail || !reflect.DeepEqual(v.Reasons, r.Reasons) || !reflect.DeepEqual(v.TextCalls, r.Trace.TextCalls) {
		t.Errorf("re-scored: %+v; stored reasons %v", v, r.Reasons)
	}
}
