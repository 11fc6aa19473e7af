package matchers

import (
	"encoding/json"
	"strings"
	"testing"
)

// Model arguments reach the scorer as json.Number (the model's text);
// every numeric matcher compares them by value, like float64 and YAML
// integers, and only $int looks at the text.
func TestNumbersKeepTheirText(t *testing.T) {
	tests := []struct {
		spec, value string
		ok          bool
		why         string
	}{
		{`5`, `5.0`, true, ""},
		{`5`, `5e0`, true, ""},
		{`5.0`, `5`, true, ""},
		{`5`, `5.50`, false, "want 5, got 5.50"}, // the model's text, not 5.5
		{`5`, `"5"`, false, `want 5, got "5"`},
		{`[1, 2.5]`, `[1.0, 2.50]`, true, ""},
		{`{n: 3}`, `{"n": 3.000}`, true, ""},
		{`{$approx: {value: 0.3, tol: 0.001}}`, `0.30000`, true, ""},
		{`{$approx: {value: 0.3, tol: 0.001}}`, `3e-1`, true, ""},
		{`{$approx: {value: 0.3, tol: 0.001}}`, `0.31`, false, "want number within 0.001 of 0.3, got 0.31"},
		{`{$one_of: [1, 2]}`, `2.0`, true, ""},
		{`{$one_of: [{$int: 1}, {$int: 2}]}`, `2.0`, false, "want one of integer 1 | integer 2, got 2.0"},
		{`{$one_of: [{$int: 1}, {$int: 2}]}`, `2`, true, ""},
		{`{$contains: 3}`, `[1, 3.0]`, true, ""},
		{`{$not: 3}`, `3.0`, false, "want not 3, got 3.0"},
		{`{$int: 10}`, `10.0`, false, "want integer 10, got 10.0"},
		{`{$int: 10}`, `10`, true, ""},
		{`{$int: -3}`, `-3`, true, ""},
		{`{$int: 0}`, `-0`, true, ""},
		// Beyond float64's range: still a number, equal to nothing finite.
		{`1e300`, `1e400`, false, "want 1e+300, got 1e400"},
		{`{$approx: {value: 0, tol: 1e308}}`, `-1e400`, false, ""},
		// An integer beyond 2^53 is exact in its text: no float64 hint.
		{`9007199254740993`, `9007199254740994`, false, "want 9007199254740993, got 9007199254740994"},
	}
	for _, tt := range tests {
		m, err := Compile(y(t, tt.spec))
		if err != nil {
			t.Fatalf("Compile(%s): %v", tt.spec, err)
		}
		ok, why := m.Match(jn(t, tt.value), true)
		if ok != tt.ok || (tt.why != "" && why != tt.why) {
			t.Errorf("%s vs %s: ok %v why %q; want %v %q", tt.spec, tt.value, ok, why, tt.ok, tt.why)
		}
	}
}

// The same matchers give the same verdicts on float64 arguments (a
// backend that decodes them itself), except that $int cannot see 10.0
// there, and a float64 beyond 2^53 gets the hint.
func TestNumbersAsFloat64(t *testing.T) {
	for spec, value := range map[string]string{`5`: `5.0`, `{$approx: {value: 0.3, tol: 0.001}}`: `0.3`, `{$one_of: [1, 2]}`: `2`, `{$int: 10}`: `10.0`} {
		m, err := Compile(y(t, spec))
		if err != nil {
			t.Fatal(err)
		}
		if ok, why := m.Match(jf(t, value), true); !ok {
			t.Errorf("%s vs float64 %s: %s", spec, value, why)
		}
	}
	m, _ := Compile(y(t, `9007199254740993`))
	if _, why := m.Match(jf(t, `9007199254740993`), true); !strings.Contains(why, "exact only up to 2^53") {
		t.Errorf("float64 beyond 2^53: %q", why)
	}
}

// A whole expectation scored on json.Number arguments: literal numbers
// by value, $int by text, and the explanation quotes the model's text.
func TestScoreNumberText(t *testing.T) {
	e := expect(t, `{calls: [{tool: area, args: {base: {$int: 10}, height: 5}}], strict_args: true}`)
	if v := e.Score(Trace{Calls: []Call{call("area", `{"base": 10, "height": 5.0}`)}}, Cell{}); !v.Pass {
		t.Errorf("10 and 5.0: %v", v.Reasons)
	}
	v := e.Score(Trace{Calls: []Call{call("area", `{"base": 10.0, "height": 5}`)}}, Cell{})
	if v.Pass || codes(v) != ReasonWrongArgs || !strings.Contains(v.Reasons[0].Detail, "base: want integer 10, got 10.0") {
		t.Errorf("10.0: pass %v, %v", v.Pass, v.Reasons)
	}
}

// A markup echo of an executed call is recognised with numbers compared
// by value: the executed call holds json.Number, the markup float64.
func TestTextCallEchoWithNumbers(t *testing.T) {
	echo := `<tool_call>{"name": "area", "arguments": {"base": 10, "sides": [1, 2.5], "unit": null, "ok": true}}</tool_call>`
	for _, tc := range []struct {
		args string
		want int
	}{
		{`{"base": 10, "sides": [1, 2.5], "unit": null, "ok": true}`, 0},
		{`{"base": 10.0, "sides": [1.0, 2.50], "unit": null, "ok": true}`, 0}, // the same values
		{`{"base": 11, "sides": [1, 2.5], "unit": null, "ok": true}`, 1},
		{`{"base": 10, "sides": [1], "unit": null, "ok": true}`, 1},
		{`{"base": 10, "sides": [1, 2.5], "unit": "cm", "ok": true}`, 1},
		{`{"base": 10, "sides": [1, 2.5], "unit": null, "ok": 1}`, 1},
		{`{"base": "10", "sides": [1, 2.5], "unit": null, "ok": true}`, 1},
		{`{"base": 10, "sides": [1, 2.5], "unit": null}`, 1},
	} {
		got := FindTextCalls(Trace{Calls: []Call{call("area", tc.args)}, Turns: []string{echo, "done"}})
		if len(got) != tc.want {
			t.Errorf("executed %s: %d text calls, want %d", tc.args, len(got), tc.want)
		}
	}
}

func TestSameValue(t *testing.T) {
	if !sameValue(json.Number("1e2"), 100.0) || !sameValue(int64(3), json.Number("3.0")) {
		t.Error("numbers of different types")
	}
	if sameValue(json.Number("1"), true) || sameValue("1", json.Number("1")) || sameValue(nil, json.Number("0")) {
		t.Error("a number equals a non-number")
	}
	if sameValue(map[string]any{"a": nil}, map[string]any{"b": nil}) || sameValue([]any{}, map[string]any{}) {
		t.Error("different containers")
	}
}
