package runconfig

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
)

// TestCaseJSONSchemaDescriptions: the descriptions are for a case's
// author: no note about where a rule is checked survives, and every
// field of a case says what it is.
func TestCaseJSONSchemaDescriptions(t *testing.T) {
	t.Parallel()
	b, err := CaseJSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("checked in Go")) {
		t.Error(`a description says "checked in Go"`)
	}
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	for name, p := range s.Properties {
		if p.Description == "" {
			t.Errorf("case field %s has no description (write a doc comment in #CaseFields)", name)
		}
	}
	caseJSONSchema(t) // it resolves as a JSON Schema
}

// cueFields are the field names of a CUE struct value, and of every
// struct it is a conjunction or disjunction of.
func cueFields(t *testing.T, v cue.Value) []string {
	t.Helper()
	var out []string
	switch op, args := v.Expr(); op {
	case cue.AndOp, cue.OrOp:
		for _, a := range args {
			out = append(out, cueFields(t, a)...)
		}
	default:
		it, err := v.Fields(cue.Optional(true))
		if err != nil {
			t.Fatal(err)
		}
		for it.Next() {
			out = append(out, it.Selector().Unquoted())
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestCaseFieldsAgree: every field of the case format in toolward.cue is
// a key the Go loader reads and a writer writes, and the other way
// round: the yaml tags of the schema types and of the expectation types
// of package matchers (whose keys the loader and CompileExpect allow) are
// the fields of the CUE definitions. Those types' fields are generated
// into toolward.cue (schema/internal/gen, kept current by its
// TestGeneratedFilesCurrent), so for them this catches a stale
// toolward.cue or a yaml-keyed field without a cue tag; for #Probe (a
// one-of around #ProbeFields) and #When, which stay hand-written, it
// names the side that lacks a field.
func TestCaseFieldsAgree(t *testing.T) {
	if err := load(); err != nil {
		t.Fatal(err)
	}
	keys := schema.YAMLKeys
	when := append(append([]string{"golden"}, matchers.WhenSelectors...), matchers.WhenOverrides...)
	for _, tt := range []struct {
		def, goName string
		goKeys      []string
	}{
		{"#CaseFields", "schema.Case", keys(reflect.TypeFor[schema.Case]())},
		{"#Message", "schema.Message", keys(reflect.TypeFor[schema.Message]())},
		{"#UserFields", "schema.User", keys(reflect.TypeFor[schema.User]())},
		{"#GoldenFields", "schema.Golden", keys(reflect.TypeFor[schema.Golden]())},
		{"#GoldenTurn", "schema.GoldenTurn", keys(reflect.TypeFor[schema.GoldenTurn]())},
		{"#GoldenCall", "schema.GoldenCall", keys(reflect.TypeFor[schema.GoldenCall]())},
		{"#Call", "matchers.ExpectedCall", keys(reflect.TypeFor[matchers.ExpectedCall]())},
		{"#Expect", "matchers.Expect (ExpectFields)", matchers.ExpectFields},
		{"#Rules", "matchers.Rules (WhenOverrides)", matchers.WhenOverrides},
		{"#TurnRules", "matchers.TurnRules (TurnFields)", matchers.TurnFields},
		{"#Probe", "matchers.StateProbe (ProbeFields)", matchers.ProbeFields},
		{"#When", "matchers.WhenSelectors, WhenOverrides and golden", when},
	} {
		compiled.mu.Lock()
		c := cueFields(t, compiled.root.LookupPath(cue.ParsePath(tt.def)))
		compiled.mu.Unlock()
		g := slices.Sorted(slices.Values(tt.goKeys))
		for _, k := range c {
			if !slices.Contains(g, k) {
				t.Errorf("%s.%s is not in %s", tt.def, k, tt.goName)
			}
		}
		for _, k := range g {
			if !slices.Contains(c, k) {
				t.Errorf("%s has %s, not in %s", tt.goName, k, tt.def)
			}
		}
	}
}

// TestJSONSchemaGenerator translates each construct the generator knows
// and refuses the others, naming their position.
func TestJSONSchemaGenerator(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		src  string // #D: ...
		want string // compact JSON of #D's schema, without definitions
		err  string
	}{
		{src: `#D: string`, want: `{"type":"string"}`},
		{src: `#D: int & >=0`, want: `{"minimum":0,"type":"integer"}`},
		{src: `#D: number & >0 & <=1`, want: `{"exclusiveMinimum":0,"maximum":1,"type":"number"}`},
		{src: `#D: string & !=""`, want: `{"minLength":1,"type":"string"}`},
		{src: `#D: string & !="x"`, want: `{"not":{"const":"x"},"type":"string"}`},
		{src: `#D: =~"^a" & !~"b$"`, want: `{"not":{"pattern":"b$"},"pattern":"^a","type":"string"}`},
		{src: `#D: "a" | "b"`, want: `{"enum":["a","b"]}`},
		{src: `#D: null | bool`, want: `{"type":["null","boolean"]}`},
		{src: `#D: *"x" | string`, want: `{"anyOf":[{"const":"x"},{"type":"string"}],"default":"x"}`},
		{src: `#D: *[1] | [int, ...int]`, want: `{"anyOf":[{"const":[1]},{"items":{"type":"integer"},"minItems":1,"type":"array"}],"default":[1]}`},
		{src: `#D: [int]`, err: "x.cue:1:5: JSON Schema generator: a closed list not supported"},
		{src: `#D: [...string]`, want: `{"items":{"type":"string"},"type":"array"}`},
		{src: `#D: [string, string, ...string]`, want: `{"items":{"type":"string"},"minItems":2,"type":"array"}`},
		{src: `#D: [string, ...int]`, err: "x.cue:1:6: JSON Schema generator: a list element unlike the list's ...type not supported"},
		{src: `#D: {
	// The a.
	a!: string
	b?: int
}`, want: `{"additionalProperties":false,"properties":{"a":{"description":"The a.","type":"string"},"b":{"type":"integer"}},"required":["a"],"type":"object"}`},
		{src: `#D: {a?: int, ...}`, want: `{"properties":{"a":{"type":"integer"}},"type":"object"}`},
		{src: `#D: {a: int}`, err: "x.cue:1:6: JSON Schema generator: a regular field (write a? or a!) not supported"},
		{src: `#D: {[string]: int}`, want: `{"additionalProperties":{"type":"integer"},"type":"object"}`},
		{src: `#D: {[!~"^[$]"]: int}`, want: `{"additionalProperties":{"type":"integer"},"propertyNames":{"not":{"pattern":"^[$]"}},"type":"object"}`},
		{src: "#E: {a?: int}\n#D: {#E, b?: int}", want: `{"additionalProperties":false,"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"type":"object"}`},
		{src: "#E: {a?: int}\n#D: {b?: #E}", want: `{"additionalProperties":false,"properties":{"b":{"$ref":"#/definitions/E"}},"type":"object"}`},
		{src: `#D: {a?: int, b?: int} & ({a!: int, b?: _|_} | {b!: int})`,
			want: `{"anyOf":[{"additionalProperties":false,"properties":{"a":{"type":"integer"}},"required":["a"],"type":"object"},{"additionalProperties":false,"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["b"],"type":"object"}]}`},
		{src: `#D: {a?: int, b?: int} & matchN(1, [{a!: _}, {b!: _}])`,
			want: `{"additionalProperties":false,"oneOf":[{"properties":{"a":{}},"required":["a"],"type":"object"},{"properties":{"b":{}},"required":["b"],"type":"object"}],"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"type":"object"}`},
		{src: "#E: string\n#D: #E & =~\"a\"", want: `{"allOf":[{"$ref":"#/definitions/E"},{"pattern":"a","type":"string"}]}`},
		{src: `#D: matchN(2, [int, string])`, err: "x.cue:1:12: JSON Schema generator: matchN with a count other than 0 or 1 not supported"},
		{src: "import \"strings\"\n#D: strings.MinRunes(1)", err: "x.cue:2:5: JSON Schema generator: this call not supported"},
		{src: `#D: {a?: int} | {b?: int}`, want: `{"anyOf":[{"additionalProperties":false,"properties":{"a":{"type":"integer"}},"type":"object"},{"additionalProperties":false,"properties":{"b":{"type":"integer"}},"type":"object"}]}`},
		{src: `#D: "a" + "b"`, err: "x.cue:1:5: JSON Schema generator: operator + not supported"},
		{src: `#D: {a?: =~"("}`, err: "x.cue:1:10: error parsing regexp"},
		{src: "x: 1\n#D: {a?: x}", err: "x.cue:2:10: JSON Schema generator: identifier x not supported"},
		{src: `#D: {for k in ["a"] {(k): int}}`, err: "x.cue:1:6: JSON Schema generator: declaration *ast.Comprehension not supported"},
	} {
		v := cuecontext.New().CompileString(tt.src, cue.Filename("x.cue"))
		if err := v.Err(); err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		s, err := generateJSONSchema(v, "#D")
		switch {
		case err != nil:
			if tt.err == "" || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %s", tt.src, err, tt.err)
			}
		case tt.err != "" && tt.want == "":
			t.Errorf("%s: no error, want %s", tt.src, tt.err)
		default:
			delete(s, "definitions")
			got, _ := json.Marshal(s)
			if string(got) != tt.want {
				t.Errorf("%s:\n got  %s\n want %s", tt.src, got, tt.want)
			}
		}
	}
}

// TestCaseJSONSchemaMutations compares the generated JSON Schema with
// #Case beyond the corpus: documents made by mutating the corpus's
// (a key dropped, a key added, a scalar replaced, an element appended,
// with a fixed seed) must get the same verdict from both.
func TestCaseJSONSchemaMutations(t *testing.T) {
	t.Parallel()
	if err := load(); err != nil {
		t.Fatal(err)
	}
	js := caseJSONSchema(t)
	leaves := []any{nil, true, false, 0, -1, 1.5, "", "x", "a b", "deny", "sequence", "golden",
		[]any{}, []any{"x"}, map[string]any{}, map[string]any{"$any": true}, map[string]any{"tool": "f"}, map[string]any{"answer": "x"}}
	keys := []string{"id", "prompt", "messages", "expect", "golden", "user", "calls", "answer", "turns", "when", "state", "tool",
		"args", "result", "equals", "ignore", "confirm", "model", "temperature", "replies", "instructions", "max_turns",
		"$contains", "$one_of", "$approx", "value", "tol", "role", "content", "todo", "order", "min_calls", "no_calls", "zzz"}
	r := rand.New(rand.NewPCG(1, 2))
	var mutate func(v any) any
	mutate = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			m := maps.Clone(x)
			ks := slices.Sorted(maps.Keys(m))
			switch {
			case len(ks) > 0 && r.IntN(5) == 0:
				delete(m, ks[r.IntN(len(ks))])
			case r.IntN(4) == 0 || len(ks) == 0:
				m[keys[r.IntN(len(keys))]] = leaves[r.IntN(len(leaves))]
			default:
				k := ks[r.IntN(len(ks))]
				m[k] = mutate(m[k])
			}
			return m
		case []any:
			l := slices.Clone(x)
			if len(l) > 0 && r.IntN(2) == 0 {
				i := r.IntN(len(l))
				l[i] = mutate(l[i])
			} else {
				l = append(l, leaves[r.IntN(len(leaves))])
			}
			return l
		}
		if r.IntN(3) == 0 {
			return leaves[r.IntN(len(leaves))]
		}
		return v
	}
	var seeds []any
	for _, c := range caseCorpus {
		var v any
		if err := yaml.Unmarshal([]byte(c.doc), &v); err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, jsonRoundTrip(t, v))
	}
	accepted := 0
	for range 1500 {
		v := seeds[r.IntN(len(seeds))]
		for range 1 + r.IntN(3) {
			v = mutate(v)
		}
		jsErr := js.Validate(v)
		cueErr := cueCheck(t, compiled.caseV, v)
		if (jsErr == nil) != (cueErr == nil) {
			b, _ := json.Marshal(v)
			t.Errorf("%s:\n JSON Schema: %v\n CUE: %v", b, jsErr, cueErr)
		}
		if jsErr == nil {
			accepted++
		}
	}
	t.Logf("%d of 1500 mutated documents valid", accepted)
	if accepted < 100 {
		t.Errorf("only %d of the mutated documents are valid: the test compares too few", accepted)
	}
}
