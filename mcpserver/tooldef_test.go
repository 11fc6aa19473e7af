package mcpserver

import (
	"strings"
	"testing"
)

func TestCheckArgs(t *testing.T) {
	defs, err := ParseToolDefs([]byte(`
- name: t
  description: Test tool.
  input_schema:
    type: object
    additionalProperties: false
    properties:
      n: {type: integer, minimum: 1, maximum: 10, default: 3}
      tags: {type: array, items: {type: string, enum: [a, b]}, maxItems: 2}
      opts: {type: object, properties: {deep: {type: boolean}}, required: [deep]}
      name: {type: string, minLength: 2, maxLength: 4}
  result: "ok"
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	schema := defs[0].InputSchema
	args := map[string]any{}
	if err := checkArgs(schema, args); err != nil || args["n"] != 3.0 {
		t.Errorf("default not applied: %v %v", args, err)
	}
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"x": 1}, `unknown argument "x" (accepted: n, name, opts, tags)`},
		{map[string]any{"n": 11.0}, "at most 10"},
		{map[string]any{"n": 0.0}, "at least 1"},
		{map[string]any{"tags": []any{"a", "c"}}, `"tags[1]" must be one of a, b`},
		{map[string]any{"tags": []any{"a", "a", "b"}}, "at most 2 items"},
		{map[string]any{"opts": map[string]any{}}, `in argument "opts": missing required argument "deep"`},
		{map[string]any{"opts": map[string]any{"deep": "yes"}}, "true or false"},
		{map[string]any{"name": "x"}, "at least 2 characters"},
		{map[string]any{"name": "héllo"}, "at most 4 characters"},
	} {
		if err := checkArgs(schema, tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("checkArgs(%v) = %v, want %q", tt.args, err, tt.want)
		}
	}
	if err := checkArgs(schema, map[string]any{"n": 10.0, "tags": []any{"b"}, "opts": map[string]any{"deep": true}, "name": "héll"}); err != nil {
		t.Errorf("valid arguments rejected: %v", err)
	}
}
