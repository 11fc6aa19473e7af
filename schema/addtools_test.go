package schema

import (
	"slices"
	"strings"
	"testing"
)

// TestConversationWorldFieldsChecked: add_tools, setup and
// contains_golden_results are checked beyond their shape, each mistake
// at its own position.
func TestConversationWorldFieldsChecked(t *testing.T) {
	t.Parallel()
	src := `id: x
prompt: hi
needs: [add]
setup: [{tool: load, args: {n: 1}}]
user:
  replies: [a]
  add_tools: [{turn: 2, tools: [add, late], descriptions: {other: x}}]
expect:
  turns:
    - contains_golden_results: true
`
	_, errs := ParseCases("x.yaml", []byte(src))
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`x.yaml:7:16: user.add_tools[0].turn: turn 2, but the conversation has 1 replies (turn 1 is the first reply)`,
		`x.yaml:7:33: user.add_tools[0].tools[0]: tool "add" is in needs, offered from the start`,
		`x.yaml:7:60: user.add_tools[0].descriptions.other: a description for "other", which is not among this entry's tools`,
		`x.yaml:10:7: expect.turns[0].contains_golden_results: contains_golden_results needs the case's golden: its calls are replayed on a fresh server to give the results to look for`,
	}
	slices.Sort(got)
	slices.Sort(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ok := strings.NewReplacer("turn: 2", "turn: 1", "add, late", "late", "other: x", "late: x", "    - contains_golden_results: true\n", "    - contains_golden_results: true\ngolden: {turns: [{answer: a}, {answer: b}]}\n").Replace(src)
	cs, errs := ParseCases("x.yaml", []byte(ok))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	tools, descs := cs[0].User.AddedAt(1)
	if len(tools) != 1 || tools[0] != "late" || descs["late"] != "x" || cs[0].Setup[0].Tool != "load" {
		t.Fatalf("decoded %+v %v %v", cs[0], tools, descs)
	}
}
