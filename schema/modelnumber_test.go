package schema

import (
	"encoding/json"
	"testing"
)

// Golden arguments and cassette replies reach the matchers as a model's
// would: every number a json.Number holding valid JSON number text that
// keeps the YAML number's kind. YAML spellings JSON lacks are rewritten
// (0x1F, 1_000, +5, 10., .5); a float never becomes an integer's text.
func TestModelNumberSpellings(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"10", "10"},
		{"10.0", "10.0"},
		{"1.50", "1.50"},
		{"1e1", "1e1"},
		{"-0.0", "-0.0"},
		{"9007199254740993", "9007199254740993"},
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{"0x1F", "31"},
		{"1_000", "1000"},
		{"+5", "5"},
		{"10.", "10.0"},
		{".5", "0.5"},
		{"+1.5e3", "1500.0"},
		{"1_000.25", "1000.25"},
		{"!!float 10", "10.0"},
		{"!!float -3", "-3.0"},
		{"!!float 2.5", "2.5"},
		{"!!int 7", "7"},
	} {
		src := "id: a\nprompt: p\nneeds: [f]\nexpect: {calls: [{tool: f}]}\ngolden: {answer: x, calls: [{tool: f, args: {n: " + tt.yaml + "}}]}\n"
		cs, errs := ParseCases("x.yaml", []byte(src))
		if len(errs) > 0 {
			t.Fatalf("%s: %v", tt.yaml, errs)
		}
		if got := cs[0].Golden.Calls[0].Args["n"]; got != json.Number(tt.want) {
			t.Errorf("golden %s: args.n = %#v, want json.Number(%q)", tt.yaml, got, tt.want)
		}
		csrc := "case: a\nruns:\n  - turns:\n      - tool_calls: [{name: f, arguments: {n: " + tt.yaml + "}}]\n"
		cas, errs := ParseCassettes("c.yaml", []byte(csrc))
		if len(errs) > 0 {
			t.Fatalf("cassette %s: %v", tt.yaml, errs)
		}
		if got, want := string(cas[0].Runs[0].Turns[0].ToolCalls[0].Arguments), `{"n":`+tt.want+`}`; got != want {
			t.Errorf("cassette %s: arguments %s, want %s", tt.yaml, got, want)
		}
	}
}

// The numbers of a golden are json.Number at any depth, in lists and
// objects, and through aliases, in when goldens too.
func TestGoldenArgsNestedNumbers(t *testing.T) {
	const src = `id: a
prompt: p
needs: [f]
expect:
  calls: [{tool: f}]
  when:
    - confirm: deny
      max_calls: 2
      golden: {calls: [{tool: f, args: {l: [1, 2.0]}}], answer: x}
golden: {calls: [{tool: f, args: {o: {x: &v 3.0}, y: *v}}], answer: x}
`
	cs, errs := ParseCases("x.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	a := cs[0].Golden.Calls[0].Args
	if a["o"].(map[string]any)["x"] != json.Number("3.0") || a["y"] != json.Number("3.0") {
		t.Errorf("golden args %#v", a)
	}
	l := cs[0].WhenGoldens[0].Golden.Calls[0].Args["l"].([]any)
	if l[0] != json.Number("1") || l[1] != json.Number("2.0") {
		t.Errorf("when golden args %#v", l)
	}
}
