package matchers

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// y decodes a YAML snippet the way case files are decoded.
func y(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("yaml %q: %v", s, err)
	}
	return v
}

// j decodes JSON the way the engine decodes model arguments: numbers
// keep their text (json.Number).
func j(t testing.TB, s string) any { t.Helper(); return jn(t, s) }

// jf decodes JSON with numbers as float64, as a backend that decodes the
// model's arguments itself (Ollama's) hands them over.
func jf(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("json %q: %v", s, err)
	}
	return v
}

const absent = "<absent>"

func TestMatch(t *testing.T) {
	tests := []struct {
		spec  string // YAML
		value string // JSON, or absent
		ok    bool
		why   string // expected explanation when !ok ("" = don't check)
	}{
		// $all: every one matches; the first that fails explains
		{`{$all: [{$contains: a}, {$contains: b}]}`, `"ab"`, true, ""},
		{`{$all: [{$contains: a}, {$contains: b}]}`, `"ax"`, false, `want string containing "b", got "ax"`},
		{`{$all: [{$regex: "^S"}, {$not: {$contains: DROP}}]}`, `"SELECT DROP"`, false, `want not string containing "DROP", got "SELECT DROP"`},
		{`{$all: [{$any: true}]}`, absent, false, `want any value, got absent`},
		// literal scalars
		{`5`, `5`, true, ""},
		{`5`, `5.0`, true, ""},
		{`5.0`, `5`, true, ""},
		{`5`, `"5"`, false, `want 5, got "5"`},
		{`"5"`, `5`, false, `want "5", got 5`},
		{`0.1`, `0.1`, true, ""},
		{`-0`, `0`, true, ""},
		{`9007199254740993`, `9007199254740993`, true, ""}, // json.Number keeps it exact
		{`9007199254740993`, `9007199254740992`, false, "want 9007199254740993, got 9007199254740992"},
		{`9007199254740992`, `9007199254740992`, true, ""},
		{`1e300`, `1e300`, true, ""},
		{`hello`, `"hello"`, true, ""},
		{`hello`, `"Hello"`, false, `want "hello", got "Hello"`},
		{`""`, `""`, true, ""},
		{`""`, `null`, false, `want "", got null`},
		{`""`, absent, false, `want "", got absent`},
		{`true`, `true`, true, ""},
		{`true`, `"true"`, false, ""},
		{`null`, `null`, true, ""},
		{`null`, absent, false, `want null, got absent`},
		{`"héllo wörld ✓"`, `"héllo wörld ✓"`, true, ""},
		// literal lists
		{`[1, 2]`, `[1, 2]`, true, ""},
		{`[1, 2]`, `[2, 1]`, false, `[0]: want 1, got 2`},
		{`[1, 2]`, `[1, 2, 3]`, false, `want list of 2, got list of 3: [1,2,3]`},
		{`[]`, `[]`, true, ""},
		{`[1]`, `{"a":1}`, false, ""},
		// literal objects
		{`{a: 1}`, `{"a": 1, "b": 2}`, true, ""},
		{`{a: 1}`, `{"b": 2}`, false, `a: want 1, got absent`},
		{`{a: {b: [x, {c: 3}]}}`, `{"a": {"b": ["x", {"c": 4}]}}`, false, `a.b[1].c: want 3, got 4`},
		{`{a: null}`, `{"a": null}`, true, ""},
		{`{a: null}`, `{}`, false, `a: want null, got absent`},
		{`{"my key": 1}`, `{"my key": 2}`, false, `["my key"]: want 1, got 2`},
		{`{}`, `{"x": 1}`, true, ""},
		// $any
		{`{$any: true}`, `null`, true, ""},
		{`{$any: true}`, `""`, true, ""},
		{`{$any: true}`, absent, false, `want any value, got absent`},
		// $contains
		{`{$contains: Eng}`, `"SELECT * FROM Engineering"`, true, ""},
		{`{$contains: Engineering}`, `"SELECT 1"`, false, `want string containing "Engineering", got "SELECT 1"`},
		{`{$contains: ""}`, `""`, true, ""},
		{`{$contains: eng}`, `"Engineering"`, false, ""},
		{`{$contains: b}`, `["a", "b"]`, true, ""},
		{`{$contains: b}`, `["a", "abc"]`, false, `want list containing "b", got ["a","abc"]`},
		{`{$contains: {$regex: "^b"}}`, `["a", "bc"]`, true, ""},
		{`{$contains: {id: 2}}`, `[{"id": 1}, {"id": 2, "x": 0}]`, true, ""},
		{`{$contains: 3}`, `[1, 2, 3.0]`, true, ""},
		{`{$contains: x}`, `5`, false, ""},
		{`{$contains: x}`, absent, false, `want string containing "x", got absent`},
		{`{$contains: "✓"}`, `"done ✓"`, true, ""},
		// $one_of
		{`{$one_of: [a, b]}`, `"b"`, true, ""},
		{`{$one_of: [a, b]}`, `"c"`, false, `want one of "a" | "b", got "c"`},
		{`{$one_of: [1, {$contains: x}]}`, `"xyz"`, true, ""},
		{`{$one_of: [1, {$contains: x}]}`, `1.0`, true, ""},
		{`{$one_of: [null, 0]}`, `null`, true, ""},
		{`{$one_of: [null, 0]}`, absent, false, ""},
		{`{$one_of: [{$absent_or: 1}]}`, absent, true, ""},
		// $absent_or
		{`{$absent_or: 3}`, absent, true, ""},
		{`{$absent_or: 3}`, `3`, true, ""},
		{`{$absent_or: 3}`, `null`, false, `want 3, got null`},
		{`{a: {$absent_or: {b: {$absent_or: 1}}}}`, `{}`, true, ""},
		{`{a: {$absent_or: {b: {$absent_or: 1}}}}`, `{"a": {}}`, true, ""},
		{`{a: {$absent_or: {b: {$absent_or: 1}}}}`, `{"a": {"b": 2}}`, false, `a.b: want 1, got 2`},
		// $regex
		{`{$regex: "^[0-9]+$"}`, `"123"`, true, ""},
		{`{$regex: "^[0-9]+$"}`, `"12a"`, false, `want string matching /^[0-9]+$/, got "12a"`},
		{`{$regex: "(?i)paris"}`, `"PARIS, France"`, true, ""},
		{`{$regex: "1"}`, `1`, false, ""},
		{`{$regex: "^.$"}`, `"é"`, true, ""},
		// $not
		{`{$not: {$contains: deleted}}`, `"nothing happened"`, true, ""},
		{`{$not: {$contains: deleted}}`, `"I deleted it"`, false, `want not string containing "deleted", got "I deleted it"`},
		{`{$not: 1}`, absent, true, ""},
		{`{$not: {$any: true}}`, absent, true, ""},
		{`{$not: {$any: true}}`, `null`, false, ""},
		// $approx
		{`{$approx: {value: 84960, tol: 0.5}}`, `84960.4`, true, ""},
		{`{$approx: {value: 84960, tol: 0.5}}`, `84961`, false, `want number within 0.5 of 84960, got 84961`},
		{`{$approx: {value: 1, tol: 0}}`, `1.0`, true, ""},
		{`{$approx: {value: 1, tol: 1}}`, `"1"`, false, ""},
	}
	for _, tt := range tests {
		m, err := Compile(y(t, tt.spec))
		if err != nil {
			t.Errorf("Compile(%s): %v", tt.spec, err)
			continue
		}
		var v any
		present := tt.value != absent
		if present {
			v = j(t, tt.value)
		}
		ok, why := m.Match(v, present)
		if ok != tt.ok {
			t.Errorf("%s vs %s: ok = %v, want %v (why %q)", tt.spec, tt.value, ok, tt.ok, why)
			continue
		}
		if !ok && why == "" {
			t.Errorf("%s vs %s: mismatch without explanation", tt.spec, tt.value)
		}
		if tt.why != "" && why != tt.why {
			t.Errorf("%s vs %s: why = %q, want %q", tt.spec, tt.value, why, tt.why)
		}
	}
}

// YAML and JSON decode numbers to different Go types; matching must not
// care, in either direction.
func TestMatchNumberTypes(t *testing.T) {
	values := []any{5, int64(5), uint8(5), float32(5), 5.0, json.Number("5"), json.Number("5.0")}
	for _, spec := range values {
		m, err := Compile(spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if ok, why := m.Match(v, true); !ok {
				t.Errorf("%T(%v) vs %T(%v): %s", spec, spec, v, v, why)
			}
		}
	}
	big := json.Number("123456789012345678901234567890")
	m, _ := Compile(big)
	if ok, _ := m.Match(json.Number("123456789012345678901234567891"), true); ok {
		t.Error("big integers differing in the last digit matched")
	}
	if ok, why := m.Match(json.Number("123456789012345678901234567890"), true); !ok {
		t.Error(why)
	}
}

func TestStrict(t *testing.T) {
	m, err := Compile(y(t, `{a: 1, b: {c: 2}}`))
	if err != nil {
		t.Fatal(err)
	}
	v := j(t, `{"a": 1, "b": {"c": 2, "d": 3}}`)
	if ok, why := m.Match(v, true); !ok {
		t.Fatalf("non-strict: %s", why)
	}
	ok, why := MatchStrict(m, v, true)
	if ok || why != `b.d: unexpected argument (strict_args), got 3` {
		t.Fatalf("strict: ok=%v why=%q", ok, why)
	}
}

func TestExplain(t *testing.T) {
	for _, tt := range []struct{ prefix, why, want string }{
		{"calls[0].args", `sql: want "x", got "y"`, `calls[0].args.sql: want "x", got "y"`},
		{"calls[0].args", `[2].a: want 1, got 2`, `calls[0].args[2].a: want 1, got 2`},
		{"answer", `want "x", got "y"`, `answer: want "x", got "y"`},
		{"", `want "x", got "y"`, `want "x", got "y"`},
		{"a", `["my key"]: want 1, got 2`, `a["my key"]: want 1, got 2`},
	} {
		if got := Explain(tt.prefix, tt.why); got != tt.want {
			t.Errorf("Explain(%q, %q) = %q, want %q", tt.prefix, tt.why, got, tt.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		spec  string
		path  string
		elems []any
		msg   string
	}{
		{`{lang: {$contians: py}}`, `lang`, []any{"lang", "$contians"}, `unknown matcher "$contians" (did you mean "$contains"?)`},
		{`{$oneof: [1]}`, ``, []any{"$oneof"}, `unknown matcher "$oneof" (did you mean "$one_of"?)`},
		{`{$zzzzzzzz: 1}`, ``, []any{"$zzzzzzzz"}, `unknown matcher "$zzzzzzzz" (known: $any, $all, $contains, $one_of, $absent_or, $regex, $not, $approx, $norm, $int)`},
		{`{$any: false}`, ``, []any{"$any"}, `$any takes true, got false`},
		{`{$all: []}`, ``, []any{"$all"}, `$all takes a non-empty list of matchers, every one of which must match, got []`},
		{`{$all: [{$contians: a}]}`, `$all[0]`, []any{"$all", 0, "$contians"}, `unknown matcher "$contians" (did you mean "$contains"?)`},
		{`{$one_of: []}`, ``, []any{"$one_of"}, `$one_of takes a non-empty list of alternatives, got []`},
		{`{$one_of: x}`, ``, []any{"$one_of"}, `$one_of takes a non-empty list of alternatives, got "x"`},
		{`{$regex: "(a"}`, ``, []any{"$regex"}, "$regex: error parsing regexp: missing closing ): `(a`"},
		{`{$regex: 1}`, ``, []any{"$regex"}, `$regex takes a string, got 1`},
		{`{$contains: x, extra: 1}`, ``, nil, `a matcher object has exactly one $ key, got $contains, extra`},
		{`{$approx: {value: 1}}`, ``, []any{"$approx"}, `$approx: missing tol`},
		{`{$approx: {value: x, tol: 1}}`, ``, []any{"$approx", "value"}, `$approx: value must be a number, got "x"`},
		{`{$approx: {value: 1, tol: -1}}`, ``, []any{"$approx", "tol"}, `$approx: tol must be a number >= 0, got -1`},
		{`{$approx: {value: 1, tol: 1, tolerance: 2}}`, ``, []any{"$approx", "tolerance"}, `$approx: unknown field "tolerance" (want value and tol)`},
		{`[1, {a: {$not: {$absent_or: {$regx: x}}}}]`, `[1].a.$not.$absent_or`, []any{1, "a", "$not", "$absent_or", "$regx"}, `unknown matcher "$regx" (did you mean "$regex"?)`},
		{`{a: {$one_of: [1, {$anyy: true}]}}`, `a.$one_of[1]`, []any{"a", "$one_of", 1, "$anyy"}, `unknown matcher "$anyy" (did you mean "$any"?)`},
	}
	for _, tt := range tests {
		_, err := Compile(y(t, tt.spec))
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Errorf("Compile(%s) = %v, want *CompileError", tt.spec, err)
			continue
		}
		if ce.Path != tt.path || ce.Msg != tt.msg {
			t.Errorf("Compile(%s):\n got  %q %q\n want %q %q", tt.spec, ce.Path, ce.Msg, tt.path, tt.msg)
		}
		if tt.elems != nil && !equalElems(ce.Elems, tt.elems) {
			t.Errorf("Compile(%s): elems %v, want %v", tt.spec, ce.Elems, tt.elems)
		}
	}
}

func equalElems(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSuggest(t *testing.T) {
	known := []string{"concurrency", "retries", "max_iterations"}
	if got := Suggest("concurency", known); got != "concurrency" {
		t.Errorf("got %q", got)
	}
	if got := Suggest("zzz", known); got != "" {
		t.Errorf("got %q", got)
	}
}

// FuzzCompileMatch checks that compiling and matching arbitrary JSON never
// panics, that a literal value always matches itself, and that an
// arbitrary object compiled as a whole expectation either fails with
// CompileErrors or scores without panicking, with a reason for every
// failure.
func FuzzCompileMatch(f *testing.F) {
	for _, s := range []string{
		`{"$contains": "x"}`, `{"a": {"$one_of": [1, {"$regex": "^a"}]}}`, `[1, "2", null, true]`,
		`{"$approx": {"value": 1, "tol": 0.1}}`, `{"$not": {"$absent_or": {"$any": true}}}`, `{"$contians": 1}`,
		`{"$regex": "(a"}`, `1e400`, `{"$approx": {"value": "x"}}`,
	} {
		f.Add(s, `{"a": 1, "b": ["x", 2.5]}`)
	}
	for _, s := range []string{
		`{"calls": [{"tool": "f", "args": {"a": 1}}, {"tool": "f"}], "order": "unordered", "strict_args": true}`,
		`{"calls": [{"tool": "g"}], "forbid": ["f"], "max_calls": 1, "answer": {"$contains": "a"}}`,
		`{"no_calls": true, "when": [{"confirm": "deny", "calls": [{"tool": "f"}]}, {"temperature": [0, 0.7], "answer": "x"}]}`,
	} {
		f.Add(s, `{"a": 1}`)
	}
	f.Fuzz(func(t *testing.T, spec, value string) {
		var s, v any
		if json.Unmarshal([]byte(spec), &s) != nil {
			return
		}
		m, err := Compile(s)
		if err == nil {
			present := json.Unmarshal([]byte(value), &v) == nil
			ok, why := m.Match(v, present)
			if !ok && why == "" {
				t.Fatalf("mismatch without explanation: %s vs %s", spec, value)
			}
			MatchStrict(m, v, present)
		} else if _, isCE := err.(*CompileError); !isCE {
			t.Fatalf("error of type %T: %v", err, err)
		}
		// A value with no $ keys compiles to a literal that matches itself.
		if !strings.Contains(spec, "$") && err == nil {
			if ok, why := m.Match(s, true); !ok {
				t.Fatalf("literal %s does not match itself: %s", spec, why)
			}
		}
		// The same input as a whole expectation, scored against a trace
		// whose calls take value as their arguments.
		if raw, isMap := s.(map[string]any); isMap {
			e, err := CompileExpect(raw)
			if err != nil {
				var ces CompileErrors
				if !errors.As(err, &ces) || len(ces) == 0 {
					t.Fatalf("CompileExpect error of type %T: %v", err, err)
				}
				return
			}
			args, _ := v.(map[string]any)
			tr := Trace{Calls: []Call{{Tool: "f", Args: args}, {Tool: "g", Args: args, Denied: true}}, Answer: value}
			for _, c := range []Cell{{}, {Model: "m", Temperature: 0.7, Tools: "all", Confirm: "deny", Descriptions: "terse"}} {
				if vd := e.Score(tr, c); !vd.Pass && len(vd.Reasons) == 0 {
					t.Fatalf("failed without reasons: %s", spec)
				}
			}
		}
	})
}

// TestPathString: the one path syntax of toolward's messages; schema uses
// it too, so a case key with a space reads the same from both.
func TestPathString(t *testing.T) {
	for _, tc := range []struct {
		elems []any
		want  string
	}{
		{nil, ""},
		{[]any{"expect", "calls", 0, "args", "sql"}, "expect.calls[0].args.sql"},
		{[]any{"args", "user name", "$contains"}, `args["user name"].$contains`},
		{[]any{0, "x"}, "[0].x"},
	} {
		if got := PathString(tc.elems); got != tc.want {
			t.Errorf("PathString(%v) = %q, want %q", tc.elems, got, tc.want)
		}
	}
}
