package matchers

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func compileYAML(t *testing.T, src string) *Expectation {
	t.Helper()
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(src), &raw); err != nil {
		t.Fatal(err)
	}
	e, err := CompileExpect(raw)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestStateProbes(t *testing.T) {
	t.Parallel()
	e := compileYAML(t, `
state:
  - tool: state_tickets
    result: {tickets: [{priority: high}]}
  - tool: read_graph
    args: {x: 1}
    equals: golden
    ignore: ["entities[*].id", "$.stamp"]
    ignore_order: true
when:
  - confirm: deny
    state: [{tool: state_tickets, equals: initial}]
`)
	cell := Cell{Confirm: "auto"}
	ps := e.Probes(cell)
	if len(ps) != 2 || ps[0].Tool != "state_tickets" || ps[1].Equals != EqualsGolden || ps[1].Args["x"] != 1 {
		t.Fatalf("probes: %+v", ps)
	}
	if d := e.Probes(Cell{Confirm: "deny"}); len(d) != 1 || d[0].Equals != EqualsInitial {
		t.Fatalf("deny probes: %+v", d)
	}
	if !e.HasProbes() {
		t.Fatal("HasProbes false")
	}
	graph := `{"entities": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}], "stamp": 5}`
	graphOther := `{"entities": [{"id": 9, "name": "b"}, {"id": 8, "name": "a"}], "stamp": 6}`
	tests := []struct {
		name    string
		state   []ProbeResult
		reasons []string // substrings of the state_mismatch details, in order
	}{
		{"pass", []ProbeResult{
			{Value: jsonValue(t, `{"tickets": [{"priority": "high", "title": "x"}]}`)},
			{Value: jsonValue(t, graph), Want: &ProbeResult{Value: jsonValue(t, graphOther)}},
		}, nil},
		{"wrong priority", []ProbeResult{
			{Value: jsonValue(t, `{"tickets": [{"priority": "low"}]}`)},
			{Value: jsonValue(t, graph), Want: &ProbeResult{Value: jsonValue(t, graph)}},
		}, []string{`state[0] (state_tickets): tickets[0].priority: want "high", got "low"`}},
		{"golden differs", []ProbeResult{
			{Value: jsonValue(t, `{"tickets": [{"priority": "high"}]}`)},
			{Value: jsonValue(t, `{"entities": [{"id": 1, "name": "a"}]}`), Want: &ProbeResult{Value: jsonValue(t, graph)}},
		}, []string{`state[1] (read_graph): differs from the golden state: entities: want 2 elements, got 1`}},
		{"probe error", []ProbeResult{
			{Value: "no such table", IsError: true},
			{Value: jsonValue(t, graph), Want: &ProbeResult{Value: "boom", IsError: true}},
		}, []string{`state[0] (state_tickets): the probe returned an error: "no such table"`, `state[1] (read_graph): the same probe on the golden state returned an error: "boom"`}},
		{"count", []ProbeResult{{Value: 1}}, []string{"want 2 probe results, got 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := e.Score(Trace{State: tt.state}, cell)
			var got []string
			for _, r := range v.Reasons {
				if r.Code != ReasonStateMismatch {
					t.Fatalf("reason %+v", r)
				}
				got = append(got, r.Detail)
			}
			if len(got) != len(tt.reasons) {
				t.Fatalf("reasons %q, want %d", got, len(tt.reasons))
			}
			for i, w := range tt.reasons {
				if !strings.Contains(got[i], w) {
					t.Errorf("reason %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
	// A golden judged offline (no state observed) is not judged on state.
	if v := e.Score(Trace{}, cell); !v.Pass {
		t.Fatalf("nil state judged: %+v", v.Reasons)
	}
}

func TestStateCompileErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ src, want string }{
		{`{state: [{tool: s}]}`, `expect.state[0]: missing field "result"`},
		{`{state: [{tool: s, result: 1, equals: golden}]}`, `expect.state[0].equals: want result or equals, not both`},
		{`{state: [{tool: s, equals: fresh}]}`, `expect.state[0].equals: want "golden" or "initial", got "fresh"`},
		{`{state: [{tool: s, result: 1, ignore: [a]}]}`, `expect.state[0].ignore: ignore applies to equals probes only`},
		{`{state: [{tool: s, equals: initial, ignore: ["a[x]"]}]}`, `expect.state[0].ignore[0]: bad JSON path "a[x]"`},
		{`{state: [{tol: s, equals: initial}]}`, `did you mean "tool"?`},
		{`{state: {tool: s}}`, `expect.state: want a list of probes`},
	} {
		var raw map[string]any
		if err := yaml.Unmarshal([]byte(tt.src), &raw); err != nil {
			t.Fatal(err)
		}
		_, err := CompileExpect(raw)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.src, err, tt.want)
		}
	}
}

func TestJSONPathRemove(t *testing.T) {
	t.Parallel()
	v := jsonValue(t, `{"a": [{"id": 1, "x": 2}, {"id": 3}], "b": {"c": 1, "d": 2}, "k.e": 1}`)
	for _, tt := range []struct{ path, want string }{
		{"a[*].id", `{"a":[{"x":2},{}],"b":{"c":1,"d":2},"k.e":1}`},
		{"$.a[0]", `{"a":[{"id":3}],"b":{"c":1,"d":2},"k.e":1}`},
		{"b.*", `{"a":[{"id":1,"x":2},{"id":3}],"b":{},"k.e":1}`},
		{`["k.e"]`, `{"a":[{"id":1,"x":2},{"id":3}],"b":{"c":1,"d":2}}`},
		{"*.c", `{"a":[{"id":1,"x":2},{"id":3}],"b":{"d":2},"k.e":1}`},
	} {
		jp, err := parseJSONPath(tt.path)
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		b, _ := json.Marshal(jp.remove(v))
		if string(b) != tt.want {
			t.Errorf("%s: got %s, want %s", tt.path, b, tt.want)
		}
	}
	// remove copies: v is untouched.
	if b, _ := json.Marshal(v); !strings.Contains(string(b), `"id":1`) {
		t.Fatalf("remove modified its input: %s", b)
	}
}

func TestDiffJSONLimit(t *testing.T) {
	t.Parallel()
	var w, g []any
	for i := range 20 {
		w = append(w, i)
		g = append(g, i+100)
	}
	d := diffJSON(w, g)
	if len(d) != maxDiffs+1 || d[maxDiffs] != "… and 12 more" {
		t.Fatalf("diff: %q", d)
	}
	if d := diffJSON(jsonValue(t, `{"n": 5}`), map[string]any{"n": json.Number("5.0")}); len(d) != 0 {
		t.Fatalf("numbers by value: %q", d)
	}
}

// TestStateMismatchNamesElement: a mismatch in a result too long to quote
// whole names the path and the offending element instead of cutting the
// result short, and $not {$contains} names the element that matched.
func TestStateMismatchNamesElement(t *testing.T) {
	t.Parallel()
	e := compileYAML(t, `
state:
  - tool: read_graph
    result: {entities: {$contains: {name: Carol, type: person}}}
  - tool: read_graph
    result: {entities: {$not: {$contains: {name: Bob}}}}
  - tool: read_note
    result: {$not: {$contains: deleted}}
`)
	graph := jsonValue(t, `{"entities": [
		{"name": "Alice", "type": "place", "observations": ["likes tea", "lives in Lyon"]},
		{"name": "Carol", "type": "robot", "observations": ["built in 2020", "speaks French"]},
		{"name": "Bob", "type": "person", "observations": ["plays chess"]}]}`)
	note := strings.Repeat("a long note that goes on ", 8) + "and then the file was deleted by the model."
	v := e.Score(Trace{State: []ProbeResult{{Value: graph}, {Value: graph}, {Value: note}}}, Cell{Confirm: "auto"})
	want := []string{
		`state[0] (read_graph): entities: want list containing {name: "Carol", type: "person"}, got a list of 3 with none matching (closest, [1].type: want "person", got "robot")`,
		`state[1] (read_graph): entities[2]: want no element {name: "Bob"} (not list containing {name: "Bob"}), got {"name":"Bob","observations":["plays chess"],"type":"person"}`,
		`state[2] (read_note): want not string containing "deleted", got it at character 222: …"goes on and then the file was deleted by the model."`,
	}
	if len(v.Reasons) != len(want) {
		t.Fatalf("reasons %+v", v.Reasons)
	}
	for i, w := range want {
		if v.Reasons[i].Detail != w {
			t.Errorf("reason %d:\n got %s\nwant %s", i, v.Reasons[i].Detail, w)
		}
	}
}
