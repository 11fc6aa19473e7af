package matchers

import (
	"bytes"
	"encoding/json"
	"testing"
)

// jn decodes JSON keeping number text (UseNumber), as the agent decodes
// model arguments.
func jn(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("json %q: %v", s, err)
	}
	return v
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"April 1, 2024":      "april12024",
		"april 1 2024":       "april12024",
		"April-1-2024":       "april12024",
		"San_Francisco/CA.":  "sanfranciscoca",
		"2*x^2":              "2x2",
		"it's":               `it"s`,
		`"it's"`:             `"it"s"`,
		"ÉCOLE":              "école",
		"":                   "",
		"tab\there":          "tab\there", // only spaces are removed
		"New York\u00a0City": "newyork\u00a0city",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormMatcher(t *testing.T) {
	m, err := Compile(y(t, `{$norm: "New York, NY"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{`"new york ny"`, `"NEW-YORK NY"`, `"newyork,ny."`} {
		if ok, why := m.Match(j(t, v), true); !ok {
			t.Errorf("%s: %s", v, why)
		}
	}
	for _, v := range []string{`"New York City"`, `5`, `null`, `["new york ny"]`} {
		if ok, _ := m.Match(j(t, v), true); ok {
			t.Errorf("%s matched", v)
		}
	}
	if ok, why := m.Match(nil, false); ok || why != `want string like "New York, NY" (normalised), got absent` {
		t.Errorf("absent: %v %q", ok, why)
	}
	if _, err := Compile(y(t, `{$norm: 5}`)); err == nil || err.Error() != "$norm takes a string, got 5" {
		t.Errorf("bad $norm: %v", err)
	}
}

func TestIntMatcher(t *testing.T) {
	m, err := Compile(y(t, `{$int: 10}`))
	if err != nil {
		t.Fatal(err)
	}
	pass := []any{jn(t, `10`), j(t, `10`), 10, int64(10), jn(t, `-0`) /* not 10 */}
	for i, v := range pass[:4] {
		if ok, why := m.Match(v, true); !ok {
			t.Errorf("pass[%d] %v: %s", i, v, why)
		}
	}
	fail := map[string]any{
		"10.0 with text":  jn(t, `10.0`),
		"1e1 with text":   jn(t, `1e1`),
		"10.5":            j(t, `10.5`),
		"string":          "10",
		"bool":            true,
		"11":              jn(t, `11`),
		"absent":          nil,
		"list of integer": j(t, `[10]`),
	}
	for name, v := range fail {
		if ok, _ := m.Match(v, name != "absent"); ok {
			t.Errorf("%s (%v) matched $int: 10", name, v)
		}
	}
	if _, why := m.Match(jn(t, `10.0`), true); why != "want integer 10, got 10.0" {
		t.Errorf("why = %q", why)
	}
	for _, bad := range []string{`{$int: 1.5}`, `{$int: "10"}`, `{$int: true}`, `{$int: [1]}`} {
		if _, err := Compile(y(t, bad)); err == nil {
			t.Errorf("%s compiled", bad)
		}
	}
	// Integers beyond 2^53 compare exactly.
	big, err := Compile(y(t, `{$int: 9007199254740993}`))
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := big.Match(jn(t, `9007199254740993`), true); !ok {
		t.Error("exact big integer rejected")
	}
	if ok, _ := big.Match(jn(t, `9007199254740992`), true); ok {
		t.Error("2^53 matched 2^53+1")
	}
}

func TestMinCalls(t *testing.T) {
	e, err := CompileExpect(y(t, `{min_calls: 1}`).(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	cell := Cell{}
	if vd := e.Score(Trace{Calls: []Call{{Tool: "a", Args: map[string]any{}}}}, cell); !vd.Pass {
		t.Errorf("one call: %v", vd.Reasons)
	}
	vd := e.Score(Trace{}, cell)
	if vd.Pass || vd.Reasons[0].Code != ReasonMissingCall || vd.Reasons[0].Detail != "calls: want at least 1 calls to offered tools, got 0" {
		t.Errorf("no call: %+v", vd)
	}
	// A call to a tool that was not offered does not count.
	if vd := e.Score(Trace{Calls: []Call{{Tool: "x", NotOffered: true}}}, cell); vd.Pass {
		t.Error("a not-offered call counted")
	}
	for spec, msg := range map[string]string{
		`{min_calls: 1, no_calls: true}`:                      "expect.min_calls: min_calls: 1 contradicts no_calls: true",
		`{min_calls: 3, max_calls: 2}`:                        "expect.min_calls: min_calls: 3 is more than max_calls: 2",
		`{min_calls: -1}`:                                     "expect.min_calls: want a whole number >= 0, got -1",
		`{min_calls: 1, when: [{tools: n8, no_calls: true}]}`: "",
	} {
		_, err := CompileExpect(y(t, spec).(map[string]any))
		if msg == "" {
			continue // the override is checked in its own cell
		}
		if err == nil || err.Error() != msg {
			t.Errorf("%s: %v, want %s", spec, err, msg)
		}
	}
	w, err := CompileExpect(y(t, `{calls: [{tool: a}], when: [{tools: all, min_calls: 2}]}`).(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	one := Trace{Calls: []Call{{Tool: "a", Args: map[string]any{}}}}
	if !w.Score(one, Cell{Tools: "needed"}).Pass || w.Score(one, Cell{Tools: "all"}).Pass {
		t.Error("min_calls in a when entry")
	}
}
