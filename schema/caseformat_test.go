package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// issuesOf returns the schema issues of doc, one "path: message" a line.
func issuesOf(t *testing.T, s *caseSchema, doc string) string {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	v, err := yamlValue(&n)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, is := range s.check(v.(map[string]any)) {
		line := is.msg
		if len(is.elems) > 0 {
			line = pathString(is.elems) + ": " + line
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// TestCaseFormatNewField: a field added to #Case, with its Go field and
// no check of its own, is checked as the generated schema says, at its
// path, in the loader's words. The field is added here to the embedded
// schema the way the generator would write it.
func TestCaseFormatNewField(t *testing.T) {
	t.Parallel()
	var raw map[string]any
	if err := json.Unmarshal(caseSchemaJSON, &raw); err != nil {
		t.Fatal(err)
	}
	fields := raw["properties"].(map[string]any)
	fields["retries"] = map[string]any{"type": "integer", "minimum": 0.0}
	fields["owner"] = map[string]any{"type": "object", "additionalProperties": false, "required": []any{"name"},
		"properties": map[string]any{"name": map[string]any{"$ref": "#/definitions/Sel"}, "team": map[string]any{"enum": []any{"a", "b"}}}}
	b, _ := json.Marshal(raw)
	s, err := compileCaseSchema(b)
	if err != nil {
		t.Fatal(err)
	}
	const base = "id: x\nprompt: p\nexpect: {answer: {$bogus: 1}}\n" // expect is left to matchers
	for _, tt := range []struct{ doc, want string }{
		{base + "retries: 2\nowner: {name: ann, team: a}\n", ""},
		{base + "retries: -1\n", "retries: want at least 0, got -1"},
		{base + "retries: 1.5\n", "retries: want a whole number, got 1.5"},
		{base + "owner: {team: c}\n", "owner: missing field \"name\"\nowner.team: want one of \"a\", \"b\", got \"c\""},
		{base + "owner: {name: '', tem: a}\n", "owner.name: want a non-empty string, got \"\"\nowner.tem: unknown field \"tem\" (did you mean \"team\"?)"},
		{base + "retrys: 1\n", "retrys: unknown field \"retrys\" (did you mean \"retries\"?)"},
		{"id: x\nexpect: {}\n", "missing field \"prompt\" (or \"messages\")"},
		{"id: x\nprompt: p\nmessages: [{role: user, content: c}]\nexpect: {}\n", "messages: want prompt or messages, not both"},
		{base + "user: {instructions: i, max_turns: 1}\n", "user.max_turns: want at least 2, got 1"},
		{base + "user: {instructions: i, max_turns: 1000000}\n", "user.max_turns: want at most 100, got 1000000"},
		{base + "golden: {turns: [{calls: [{tool: 'a b'}], answer: x}]}\n", "golden.turns[0].calls[0].tool: want a tool name, got \"a b\""},
		{"id: x\nprompt: p\nexpect: {when: [{}, {golden: {answr: x}}]}\n", "expect.when[1].golden.answr: unknown field \"answr\" (did you mean \"answer\"?)"},
	} {
		if got := issuesOf(t, s, tt.doc); got != tt.want {
			t.Errorf("%s:\n got  %s\n want %s", tt.doc, got, tt.want)
		}
	}
}
func TestDecodeFields(t *testing.T) {
	t.Parallel()
	var dst struct {
		N    int      `yaml:"n"`
		L    []string `yaml:"l,omitempty"`
		Skip string   `yaml:"-"`
		P    *struct {
			B bool `yaml:"b"`
		} `yaml:"p"`
	}
	err := decodeFields(reflect.ValueOf(&dst).Elem(), map[string]any{"n": int64(3), "l": []any{"a"}, "-": "x", "p": map[string]any{"b": true}}, nil)
	if err != nil || dst.N != 3 || len(dst.L) != 1 || dst.Skip != "" || dst.P == nil || !dst.P.B {
		t.Errorf("decoded %+v, %v", dst, err)
	}
	err = decodeFields(reflect.ValueOf(&dst).Elem(), map[string]any{"l": []any{"a", int64(1)}}, []any{"golden"})
	if err == nil || err.Error() != "golden.l[1]: Go type string cannot hold number (toolward.cue and the schema types disagree)" {
		t.Errorf("err = %v", err)
	}
}
