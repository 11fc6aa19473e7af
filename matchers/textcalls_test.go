package matchers

import (
	"strings"
	"testing"
)

// hiddenCall is the reply of issue 12: a call the server's parser missed,
// then an answer.
const hiddenCall = `<tool_call>{"name": "calculate", "arguments": {"expression": "1+1"}}</tool_call> Paris`

// TestUnparsedCall: call-shaped text fails a no_calls case (it used to
// pass: the answer contains Paris and there are no calls), fails a case
// forbidding the tool it names, is named on any other failure, and leaves
// a run that otherwise passes passing, always recorded on the verdict.
func TestUnparsedCall(t *testing.T) {
	noCalls := expect(t, `{no_calls: true, answer: {$contains: Paris}}`)
	forbid := expect(t, `{forbid: [calculate], answer: {$contains: Paris}}`)
	needs := expect(t, `{calls: [{tool: calculate}], answer: {$contains: Paris}}`)
	prose := "I won't emit a <tool_call>; the answer is Paris."
	for _, tc := range []struct {
		name  string
		e     *Expectation
		trace Trace
		codes string
	}{
		{"issue 12: no_calls", noCalls, Trace{Answer: hiddenCall, Turns: []string{hiddenCall}}, ReasonUnparsedCall},
		{"no_calls, in an earlier turn", noCalls, Trace{Answer: "Paris", Turns: []string{hiddenCall, "Paris"}}, ReasonUnparsedCall},
		{"no_calls, golden answer without turns", noCalls, Trace{Answer: hiddenCall}, ReasonUnparsedCall},
		{"no_calls, prose about tool calls", noCalls, Trace{Answer: prose, Turns: []string{prose}}, ""},
		{"forbidden tool", forbid, Trace{Answer: hiddenCall, Turns: []string{hiddenCall}}, ReasonUnparsedCall},
		{"the call was lost", needs, Trace{Answer: hiddenCall, Turns: []string{hiddenCall}}, ReasonMissingCall + "," + ReasonUnparsedCall},
		{"a real call too", needs, Trace{Calls: []Call{call("calculate", `{}`)}, Answer: hiddenCall, Turns: []string{"", hiddenCall}}, ""},
	} {
		v := tc.e.Score(tc.trace, Cell{})
		if got := codes(v); got != tc.codes || v.Pass != (tc.codes == "") {
			t.Errorf("%s: pass %v, reasons %v; want %q", tc.name, v.Pass, v.Reasons, tc.codes)
		}
		if strings.Contains(tc.name, "prose") != (len(v.TextCalls) == 0) {
			t.Errorf("%s: text calls %v", tc.name, v.TextCalls)
		}
	}
}

// TestUnparsedCallDetail: the reason says where, which tool and markup,
// and what to check.
func TestUnparsedCallDetail(t *testing.T) {
	turns := []string{"thinking aloud", hiddenCall, `[TOOL_CALLS] [{"name": "search_documents", "arguments": {"query": "x"}}]`}
	v := expect(t, `{no_calls: true}`).Score(Trace{Turns: turns, Answer: turns[2]}, Cell{})
	want := `turns[1]: the model wrote a call to calculate as text (hermes markup) that the server did not parse, 2 such calls in all: check the model's chat template (want no tool calls)`
	if len(v.Reasons) != 1 || v.Reasons[0].Detail != want {
		t.Errorf("reasons %v\nwant detail %s", v.Reasons, want)
	}
	if len(v.TextCalls) != 2 || v.TextCalls[1].Turn != 2 || v.TextCalls[1].Family != "mistral" || v.TextCalls[0].Args["expression"] != "1+1" {
		t.Errorf("text calls %+v", v.TextCalls)
	}
}

// TestUnparsedCallReason: the engine's own failures (out of turns) name
// text calls only when the scorer passed and there were some.
func TestUnparsedCallReason(t *testing.T) {
	if _, ok := UnparsedCallReason(Verdict{Pass: true}); ok {
		t.Error("reason without text calls")
	}
	if _, ok := UnparsedCallReason(Verdict{Pass: false, TextCalls: []TextCall{{Tool: "a"}}}); ok {
		t.Error("reason for a failed verdict, which names them already")
	}
	r, ok := UnparsedCallReason(Verdict{Pass: true, TextCalls: []TextCall{{Turn: 3, Tool: "a", Family: "json"}}})
	if !ok || r.Code != ReasonUnparsedCall || !strings.HasPrefix(r.Detail, "turns[3]: ") {
		t.Errorf("got %v, %v", r, ok)
	}
}

// TestFindTextCallsBounded: a trace of many huge turns is scanned up to
// MaxTraceText and keeps at most MaxTextCalls calls.
func TestFindTextCallsBounded(t *testing.T) {
	big := strings.Repeat(hiddenCall+" ", 1<<14) // ~1.3 MiB of calls
	turns := make([]string, 64)
	for i := range turns {
		turns[i] = big
	}
	got := FindTextCalls(Trace{Turns: turns})
	if len(got) != MaxTextCalls {
		t.Errorf("%d text calls, want %d", len(got), MaxTextCalls)
	}
	late := make([]string, 8)
	for i := range late {
		late[i] = strings.Repeat(" ", 1<<20)
	}
	late[7] = hiddenCall // past MaxTraceText: not scanned
	if got := FindTextCalls(Trace{Turns: late}); len(got) != 0 {
		t.Errorf("found %v past MaxTraceText", got)
	}
}

// TestTextCallEchoOfParsedCall: markup left in a turn's content next to
// the same call parsed and executed from that turn is not a lost call; a
// different call in the markup, or the same call in another turn, is.
func TestTextCallEchoOfParsedCall(t *testing.T) {
	executed := call("calculate", `{"expression": "1+1"}`)
	other := `<tool_call>{"name": "calculate", "arguments": {"expression": "2+2"}}</tool_call>`
	for _, tc := range []struct {
		name  string
		turns []string
		want  int
	}{
		{"echo", []string{hiddenCall, "Paris"}, 0},
		{"different arguments", []string{other, "Paris"}, 1},
		{"another turn", []string{"", hiddenCall}, 1},
	} {
		got := FindTextCalls(Trace{Calls: []Call{executed}, Turns: tc.turns})
		if len(got) != tc.want {
			t.Errorf("%s: %d text calls %v, want %d", tc.name, len(got), got, tc.want)
		}
	}
}

// TestThinkingCallsApart: a call written in a turn's thinking is found
// and marked Thinking, never fails a run (a no_calls case passes, a
// forbidden tool is not "attempted"), and a call the turn really made is
// not counted again.
func TestThinkingCallsApart(t *testing.T) {
	t.Parallel()
	noCalls := expect(t, `{no_calls: true, answer: {$contains: Paris}}`)
	forbid := expect(t, `{forbid: [calculate], answer: {$contains: Paris}}`)
	thought := `<tool_call>{"name": "calculate", "arguments": {"expression": "1+1"}}</tool_call>`
	tr := Trace{Answer: "Paris", Turns: []string{"Paris"}, Thinking: []string{thought}}
	for name, e := range map[string]*Expectation{"no_calls": noCalls, "forbid": forbid} {
		v := e.Score(tr, Cell{})
		if !v.Pass || len(v.TextCalls) != 1 || !v.TextCalls[0].Thinking || v.TextCalls[0].Tool != "calculate" || v.TextCalls[0].Turn != 0 {
			t.Errorf("%s: pass %v, reasons %v, text calls %+v; want a pass with one thinking call", name, v.Pass, v.Reasons, v.TextCalls)
		}
	}
	// The same markup in the content still fails, and is not a thinking call.
	v := noCalls.Score(Trace{Answer: hiddenCall, Turns: []string{hiddenCall}, Thinking: []string{""}}, Cell{})
	if v.Pass || len(v.TextCalls) != 1 || v.TextCalls[0].Thinking {
		t.Errorf("content call: pass %v, text calls %+v", v.Pass, v.TextCalls)
	}
	// Thought of, then made in the same turn: not a call "thought of and not made".
	made := Trace{Calls: []Call{call("calculate", `{"expression": "1+1"}`)}, Answer: "Paris", Turns: []string{"", "Paris"}, Thinking: []string{thought, ""}}
	if v := forbid.Score(made, Cell{}); len(v.TextCalls) != 0 {
		t.Errorf("a call made after thinking of it: text calls %+v", v.TextCalls)
	}
}
