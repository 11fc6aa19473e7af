package schema

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/matchers"
)

// TestCaseWriteReadsBack: a Case written through its yaml tags (as the
// BFCL importer and `toolward init` write cases) loads back as the same
// case, so a field the loader reads but the type does not write (or
// spells differently) fails here.
func TestCaseWriteReadsBack(t *testing.T) {
	t.Parallel()
	in := []*Case{
		{ID: "a", Description: "d", Tags: []string{"x"}, Prompt: "p", System: "s", Needs: []string{"f"}, Avoid: []string{"g"},
			Expect: map[string]any{"calls": []matchers.ExpectedCall{{Tool: "f", Args: map[string]any{"n": 1}}}, "max_calls": 2},
			Golden: &Golden{Calls: []GoldenCall{{Tool: "f", Args: map[string]any{"n": 1}}}, Answer: "ok"}},
		{ID: "b", Messages: []Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "yes"}}, Expect: map[string]any{"no_calls": true}},
	}
	var docs []string
	for _, c := range in {
		b, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	src := strings.Join(docs, "---\n")
	out, errs := ParseCases("x.yaml", []byte(src))
	if len(errs) > 0 || len(out) != len(in) {
		t.Fatalf("%v\n%s", errs, src)
	}
	for i, got := range out {
		want := in[i]
		if got.ID != want.ID || got.Description != want.Description || !slices.Equal(got.Tags, want.Tags) || got.Prompt != want.Prompt ||
			got.System != want.System || !reflect.DeepEqual(got.Messages, want.Messages) || !slices.Equal(got.Needs, want.Needs) ||
			!slices.Equal(got.Avoid, want.Avoid) || (got.Golden == nil) != (want.Golden == nil) {
			t.Errorf("case %d read back as %+v\n%s", i, got, docs[i])
		}
		if want.Golden != nil && (got.Golden.Answer != want.Golden.Answer || len(got.Golden.Calls) != len(want.Golden.Calls)) {
			t.Errorf("case %d: golden read back as %+v", i, got.Golden)
		}
	}
}
