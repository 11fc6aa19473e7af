package runconfig

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"cuelang.org/go/cue"
	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
)

// TestCaseJSONSchemaDescriptions: the descriptions are for a case's
// author: no note about where a rule is checked survives, and every
// field of a case says what it is.
func TestCaseJSONSchemaDescriptions(t *testing.T) {
	t.Parallel()
	b := schema.CaseJSONSchema()
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

// TestCaseFieldsAgree: the fields of the definitions toolward.cue
// writes by hand around generated ones, #Probe (a one-of around
// #ProbeFields) and #When, are the keys the loader and CompileExpect
// allow, and the other way round; it names the side that lacks a field.
// (The generated definitions have their Go type's fields by
// construction, and the generator refuses a yaml key without a cue tag.)
func TestCaseFieldsAgree(t *testing.T) {
	if err := load(); err != nil {
		t.Fatal(err)
	}
	when := append(append([]string{"golden"}, matchers.WhenSelectors...), matchers.WhenOverrides...)
	for _, tt := range []struct {
		def, goName string
		goKeys      []string
	}{
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
