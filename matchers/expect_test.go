package matchers

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func expect(t *testing.T, s string) *Expectation {
	t.Helper()
	raw, ok := y(t, s).(map[string]any)
	if !ok {
		t.Fatalf("not a mapping: %s", s)
	}
	e, err := CompileExpect(raw)
	if err != nil {
		t.Fatalf("CompileExpect: %v", err)
	}
	return e
}

// call is a call with args decoded as the engine decodes them (numbers
// as json.Number).
func call(tool, args string) Call {
	var m map[string]any
	if args != "" {
		dec := json.NewDecoder(strings.NewReader(args))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			panic(err)
		}
	}
	return Call{Tool: tool, Args: m}
}

func codes(v Verdict) string {
	var c []string
	for _, r := range v.Reasons {
		c = append(c, r.Code)
	}
	return strings.Join(c, ",")
}

func TestScore(t *testing.T) {
	const sqlCase = `
calls:
  - tool: query_database
    args: {sql: {$contains: Engineering}}
  - tool: calculate
    args: {expression: {$any: true}}
order: sequence
forbid: [delete_employee]
max_calls: 4
answer: {$contains: "84,960"}
when:
  - confirm: deny
    answer: {$not: {$contains: deleted}}
`
	tests := []struct {
		name   string
		expect string
		trace  Trace
		cell   Cell
		codes  string
		detail string // first reason's detail, when set
	}{
		{"pass", sqlCase, Trace{Calls: []Call{
			call("query_database", `{"sql": "SELECT avg(salary) FROM x WHERE d='Engineering'"}`),
			call("calculate", `{"expression": "708000*0.12"}`),
		}, Answer: "It would cost $84,960."}, Cell{Confirm: "auto"}, "", ""},
		{"interleaved", sqlCase, Trace{Calls: []Call{
			call("list_tables", `{}`),
			call("query_database", `{"sql": "Engineering"}`),
			call("query_database", `{"sql": "again"}`),
			call("calculate", `{"expression": "1"}`),
		}, Answer: "84,960"}, Cell{}, "", ""},
		{"wrong args", sqlCase, Trace{Calls: []Call{
			call("query_database", `{"sql": "SELECT 1"}`),
			call("calculate", `{"expression": "1"}`),
		}, Answer: "84,960"}, Cell{}, "wrong_args",
			`calls[0].args.sql: want string containing "Engineering", got "SELECT 1" (expect.calls[0])`},
		{"missing", sqlCase, Trace{Calls: []Call{
			call("query_database", `{"sql": "Engineering"}`),
		}, Answer: "84,960"}, Cell{}, "missing_call", `expect.calls[1] (calculate): calculate was never called`},
		{"out of order", sqlCase, Trace{Calls: []Call{
			call("calculate", `{"expression": "1"}`),
			call("query_database", `{"sql": "Engineering"}`),
		}, Answer: "84,960"}, Cell{}, "missing_call",
			`expect.calls[1] (calculate): out of order: only calls[0] matches, before the call matched by expect.calls[0]`},
		{"answer", sqlCase, Trace{Calls: []Call{
			call("query_database", `{"sql": "Engineering"}`),
			call("calculate", `{"expression": "1"}`),
		}, Answer: "about 85k"}, Cell{}, "answer_mismatch", `answer: want string containing "84,960", got "about 85k"`},
		{"when deny overrides answer", sqlCase, Trace{Calls: []Call{
			call("query_database", `{"sql": "Engineering"}`),
			call("calculate", `{"expression": "1"}`),
		}, Answer: "I could not do that."}, Cell{Confirm: "deny"}, "", ""},
		{"when deny rejects", sqlCase, Trace{Calls: []Call{
			call("query_database", `{"sql": "Engineering"}`),
			call("calculate", `{"expression": "1"}`),
		}, Answer: "I deleted 3 rows"}, Cell{Confirm: "deny"}, "answer_mismatch", ""},
		{"forbidden even if denied", sqlCase, Trace{Calls: []Call{
			call("query_database", `{"sql": "Engineering"}`),
			{Tool: "delete_employee", Args: map[string]any{"id": 3.0}, Denied: true},
			call("calculate", `{"expression": "1"}`),
		}, Answer: "84,960"}, Cell{}, "forbidden_call",
			`calls[1]: forbidden tool "delete_employee" was called (denied by the user, still attempted)`},
		{"too many", sqlCase, Trace{Calls: []Call{
			call("query_database", `{"sql": "Engineering"}`), call("x", `{}`), call("x", `{}`), call("x", `{}`),
			call("calculate", `{"expression": "1"}`),
		}, Answer: "84,960"}, Cell{}, "too_many_calls", `calls: want at most 4 calls, got 5`},
		{"malformed", sqlCase, Trace{Calls: []Call{
			{Tool: "query_database", Malformed: true},
			call("calculate", `{"expression": "1"}`),
		}, Answer: "84,960"}, Cell{}, "malformed_call,missing_call", `calls[0]: arguments to "query_database" are not a JSON object`},
		{"not offered", sqlCase, Trace{Calls: []Call{
			call("query_database", `{"sql": "Engineering"}`),
			{Tool: "calculator", Args: map[string]any{}, NotOffered: true},
			call("calculate", `{"expression": "1"}`),
		}, Answer: "84,960"}, Cell{}, "unoffered_call", `calls[1]: tool "calculator" was not offered`},
		{"no_calls pass", `{no_calls: true}`, Trace{Answer: "I can't help."}, Cell{}, "", ""},
		{"no_calls fail", `{no_calls: true}`, Trace{Calls: []Call{call("get_weather", `{"city": "Oslo"}`)}}, Cell{},
			"unexpected_call", `calls: want no tool calls, got 1 (first: get_weather)`},
		{"strict args", `{calls: [{tool: f, args: {a: 1}}], strict_args: true}`,
			Trace{Calls: []Call{call("f", `{"a": 1, "b": 2}`)}}, Cell{}, "wrong_args",
			`calls[0].args.b: unexpected argument (strict_args), got 2 (expect.calls[0])`},
		{"strict args pass", `{calls: [{tool: f, args: {a: 1, b: {$absent_or: 2}}}], strict_args: true}`,
			Trace{Calls: []Call{call("f", `{"a": 1}`)}}, Cell{}, "", ""},
		{"closest of several", `{calls: [{tool: f, args: {a: 1, b: 2, c: 3}}]}`,
			Trace{Calls: []Call{call("f", `{"a": 0, "b": 0, "c": 0}`), call("f", `{"a": 1, "b": 2, "c": 4}`), call("f", `{}`)}}, Cell{},
			"wrong_args", `calls[1].args.c: want 3, got 4 (expect.calls[0], closest of 3 f calls)`},
		{"no args expected", `{calls: [{tool: f}]}`, Trace{Calls: []Call{{Tool: "f"}}}, Cell{}, "", ""},
		{"nil args read as empty", `{calls: [{tool: f, args: {a: {$absent_or: 1}}}]}`,
			Trace{Calls: []Call{{Tool: "f"}}}, Cell{}, "", ""},
		{"nil args lack a required one", `{calls: [{tool: f, args: {a: 1}}]}`,
			Trace{Calls: []Call{{Tool: "f"}}}, Cell{}, "wrong_args", `calls[0].args.a: want 1, got absent (expect.calls[0])`},
		// Greedy first-fit would give calls[0] (a=1, b=2) to expected call 0
		// ({a: 1}) and then find nothing for expected call 1 ({b: 2}); the
		// optimal assignment is 0->calls[1], 1->calls[0].
		{"unordered optimal", `
calls:
  - {tool: f, args: {a: 1}}
  - {tool: f, args: {b: 2}}
order: unordered`, Trace{Calls: []Call{call("f", `{"a": 1, "b": 2}`), call("f", `{"a": 1}`)}}, Cell{}, "", ""},
		{"unordered any order", `
calls: [{tool: g}, {tool: f}]
order: unordered`, Trace{Calls: []Call{call("f", `{}`), call("g", `{}`)}}, Cell{}, "", ""},
		{"unordered needs two calls", `
calls:
  - {tool: f, args: {a: 1}}
  - {tool: f, args: {a: {$any: true}}}
order: unordered`, Trace{Calls: []Call{call("f", `{"a": 1}`)}}, Cell{}, "missing_call",
			`expect.calls[1] (f): no call left: calls[0] matches but is assigned to expect.calls[0]`},
		{"sequence same tool twice", `calls: [{tool: f, args: {a: 1}}, {tool: f, args: {a: 1}}]`,
			Trace{Calls: []Call{call("f", `{"a": 1}`)}}, Cell{}, "missing_call", ""},
		{"when by model and temperature", `
answer: base
when:
  - {model: [m1, m2], temperature: 0.7, answer: hot}
  - {model: m2, answer: m2}`, Trace{Answer: "hot"}, Cell{Model: "m1", Temperature: 0.7}, "", ""},
		{"when later entry wins", `
answer: base
when:
  - {model: [m1, m2], temperature: 0.7, answer: hot}
  - {model: m2, answer: m2}`, Trace{Answer: "m2"}, Cell{Model: "m2", Temperature: 0.7}, "", ""},
		{"when not selected", `
answer: base
when:
  - {model: m1, answer: other}`, Trace{Answer: "base"}, Cell{Model: "m2"}, "", ""},
		{"when zero cell", `
answer: base
when:
  - {tools: needed, answer: other}`, Trace{Answer: "base"}, Cell{}, "", ""},
		{"when no_calls clears base calls", `
calls: [{tool: f}]
when:
  - {confirm: deny, no_calls: true}`, Trace{Answer: "ok"}, Cell{Confirm: "deny"}, "", ""},
		{"when no_calls clears base calls, fails on a call", `
calls: [{tool: f}]
when:
  - {confirm: deny, no_calls: true}`, Trace{Calls: []Call{call("f", `{}`)}}, Cell{Confirm: "deny"}, "unexpected_call", ""},
		{"when calls lift base no_calls", `
no_calls: true
when:
  - {tools: all, calls: [{tool: f}]}`, Trace{Calls: []Call{call("f", `{}`)}}, Cell{Tools: "all"}, "", ""},
		{"when replaces calls", `
calls: [{tool: delete_employee}]
when:
  - {confirm: deny, calls: [], forbid: []}`, Trace{Answer: "declined"}, Cell{Confirm: "deny"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := expect(t, tt.expect)
			v := e.Score(tt.trace, tt.cell)
			if got := codes(v); got != tt.codes {
				t.Fatalf("codes %q, want %q: %+v", got, tt.codes, v.Reasons)
			}
			if v.Pass != (tt.codes == "") {
				t.Fatalf("Pass = %v with reasons %v", v.Pass, v.Reasons)
			}
			if tt.detail != "" && v.Reasons[0].Detail != tt.detail {
				t.Fatalf("detail\n got  %s\n want %s", v.Reasons[0].Detail, tt.detail)
			}
		})
	}
}

func TestCompileExpectErrors(t *testing.T) {
	tests := []struct{ expect, path, msg string }{
		{`{calls: [{tool: f, args: {lang: {$contians: py}}}]}`, `expect.calls[0].args.lang`, `unknown matcher "$contians" (did you mean "$contains"?)`},
		{`{calls: [{args: {}}]}`, `expect.calls[0]`, `missing field "tool"`},
		{`{calls: [{tool: f, arg: {}}]}`, `expect.calls[0].arg`, `unknown field "arg" (did you mean "args"?)`},
		{`{calls: [{tool: f, args: [1]}]}`, `expect.calls[0].args`, `want an object of argument matchers, got list`},
		{`{calls: [{tool: f, args: {$any: true}}]}`, `expect.calls[0].args`, `args must be an object of argument names, not a matcher ("$any")`},
		{`{calls: f}`, `expect.calls`, `want a list of calls, got string`},
		{`{order: random}`, `expect.order`, `want "sequence" or "unordered", got "random"`},
		{`{max_calls: -1}`, `expect.max_calls`, `want a whole number >= 0, got -1`},
		{`{max_calls: 1.5}`, `expect.max_calls`, `want a whole number >= 0, got 1.5`},
		{`{strict_args: "yes"}`, `expect.strict_args`, `want true or false, got "yes"`},
		{`{forbid: delete}`, `expect.forbid`, `want a list of tool names, got string`},
		{`{answr: x}`, `expect.answr`, `unknown field "answr" (did you mean "answer"?)`},
		{`{calls: [{tool: f}], no_calls: true}`, `expect.no_calls`, `no_calls: true contradicts the expected calls`},
		{`{calls: [{tool: g}, {tool: f}], forbid: [f]}`, `expect.calls[1].tool`, `tool "f" is both expected and forbidden`},
		{`{when: [{confirm: deny, calls: [{tool: f}], forbid: [f]}]}`, `expect.when[0].calls[0].tool`, `tool "f" is both expected and forbidden`},
		{`{forbid: [f], when: [{confirm: approve, calls: [{tool: f}]}]}`, `expect.when[0]`, `with this override, tool "f" is both expected and forbidden`},
		{`{when: [{answer: x}]}`, `expect.when[0]`, `a when entry needs at least one selector (model, temperature, tools, confirm, descriptions, options)`},
		{`{when: [{confirm: deny}]}`, `expect.when[0]`, `a when entry needs at least one override (calls, order, strict_args, forbid, max_calls, min_calls, no_calls, answer, state, contains_golden_results, turns)`},
		{`{when: [{confrim: deny, answer: x}]}`, `expect.when[0].confrim`, `unknown field "confrim" (did you mean "confirm"?)`},
		{`{when: [{confirm: deny, answer: {$nto: x}}]}`, `expect.when[0].answer`, `unknown matcher "$nto" (did you mean "$not"?)`},
		{`{when: [{temperature: hot, answer: x}]}`, `expect.when[0].temperature`, `want a number or a list of numbers, got "hot"`},
		{`{when: {confirm: deny}}`, `expect.when`, `want a list of overrides, got object`},
		{`{when: [{confirm: deny, calls: [{tool: f}], no_calls: true}]}`, `expect.when[0].no_calls`, `no_calls: true contradicts the expected calls`},
		{`{when: [{confirm: maybe, answer: x}]}`, `expect.when[0].confirm`, `want one of auto, approve, deny, got "maybe"`},
	}
	for _, tt := range tests {
		raw := y(t, tt.expect).(map[string]any)
		_, err := CompileExpect(raw)
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Errorf("%s: err = %v", tt.expect, err)
			continue
		}
		if ce.Path != tt.path || ce.Msg != tt.msg {
			t.Errorf("%s:\n got  %s: %s\n want %s: %s", tt.expect, ce.Path, ce.Msg, tt.path, tt.msg)
		}
	}
}

// Independent mistakes are all reported in one pass; a misspelt field is
// one mistake, not also a missing selector, override or tool.
func TestCompileExpectAllErrors(t *testing.T) {
	raw := y(t, `
order: random
max_calls: -1
calls:
  - {tol: f}
  - {tool: g, args: {a: {$contians: x}}}
when:
  - {confrim: deny, answr: x}
  - {confirm: deny}`).(map[string]any)
	_, err := CompileExpect(raw)
	want := `expect.calls[0].tol: unknown field "tol" (did you mean "tool"?)
expect.calls[1].args.a: unknown matcher "$contians" (did you mean "$contains"?)
expect.order: want "sequence" or "unordered", got "random"
expect.max_calls: want a whole number >= 0, got -1
expect.when[0].answr: unknown field "answr" (did you mean "answer"?)
expect.when[0].confrim: unknown field "confrim" (did you mean "confirm"?)
expect.when[1]: a when entry needs at least one override (calls, order, strict_args, forbid, max_calls, min_calls, no_calls, answer, state, contains_golden_results, turns)`
	var ces CompileErrors
	if !errors.As(err, &ces) || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

func TestTools(t *testing.T) {
	e := expect(t, `
calls: [{tool: a}, {tool: b}]
when:
  - {confirm: deny, calls: [{tool: c}]}
  - {confirm: approve, answer: x}`)
	var got []string
	for _, r := range e.Tools() {
		got = append(got, r.Tool+"@"+r.Path)
	}
	want := []string{"a@expect.calls[0].tool", "b@expect.calls[1].tool", "c@expect.when[0].calls[0].tool"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
}

func TestOverride(t *testing.T) {
	e := expect(t, `
answer: base
when:
  - {confirm: deny, answer: declined}
  - {confirm: [deny, approve], model: m, answer: m-declined}
  - {tools: n8, max_calls: 3}`)
	for _, tt := range []struct {
		cell  Cell
		field string
		want  int
	}{
		{Cell{Confirm: "auto"}, "answer", -1},
		{Cell{Confirm: "deny"}, "answer", 0},
		{Cell{Confirm: "deny", Model: "m"}, "answer", 1},
		{Cell{Confirm: "approve", Model: "m"}, "answer", 1},
		{Cell{Confirm: "deny", Tools: "n8"}, "answer", 0},
		{Cell{Confirm: "deny", Tools: "n8"}, "max_calls", 2},
		{Cell{Confirm: "deny"}, "max_calls", -1},
		{Cell{Confirm: "deny"}, "calls", -1},
	} {
		if got := e.Override(tt.cell, tt.field); got != tt.want {
			t.Errorf("Override(%+v, %s) = %d, want %d", tt.cell, tt.field, got, tt.want)
		}
	}
}
