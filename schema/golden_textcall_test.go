package schema

import (
	"strings"
	"testing"
)

// TestGoldenTextCall: a golden answer holding a tool call written as
// text is rejected with unparsed_call, pointing at the answer, both when
// the case forbids calls (no_calls) and when the scorer alone would let
// it pass; prose mentioning tool calls is fine.
func TestGoldenTextCall(t *testing.T) {
	const call = `<tool_call>{"name": "calculate", "arguments": {"expression": "1+1"}}</tool_call> Paris`
	for _, tc := range []struct{ name, doc, want string }{
		{"no_calls", "id: a\nprompt: p\nexpect: {no_calls: true, answer: {$contains: Paris}}\ngolden:\n  answer: '" + call + "'\n",
			"c.yaml:5:3: golden: rejected (unparsed_call): answer: the model wrote a call to calculate as text (hermes markup)"},
		{"answer only", "id: a\nprompt: p\nexpect: {answer: {$contains: Paris}}\ngolden:\n  answer: '" + call + "'\n",
			"c.yaml:5:3: golden: rejected (unparsed_call): answer: the model wrote a call to calculate as text (hermes markup)"},
		{"prose", "id: a\nprompt: p\nexpect: {no_calls: true, answer: {$contains: Paris}}\ngolden:\n  answer: I need no <tool_call> for Paris.\n", ""},
	} {
		_, errs := ParseCases("c.yaml", []byte(tc.doc))
		got := ""
		if len(errs) > 0 {
			got = errs.Error()
		}
		if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: errors %q, want %q…", tc.name, got, tc.want)
		}
	}
}
