package mcpserver

import (
	"fmt"
	"strings"
	"testing"
)

func TestCheckArgs(t *testing.T) {
	t.Parallel()
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
	d := defs[0]
	args := map[string]any{}
	if err := d.checkArgs(args); err != nil || args["n"] != 3.0 {
		t.Errorf("default not applied: %v %v", args, err)
	}
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"x": 1.0}, `unexpected additional properties ["x"]`},
		{map[string]any{"n": 11.0}, "argument n: maximum"},
		{map[string]any{"n": 0.0}, "argument n: minimum"},
		{map[string]any{"n": 1.5}, `argument n: type: 1.5 has type "number", want "integer"`},
		{map[string]any{"tags": []any{"a", "c"}}, "argument tags[]"},
		{map[string]any{"tags": []any{"a", "a", "b"}}, "argument tags: maxItems"},
		{map[string]any{"opts": map[string]any{}}, `argument opts: required: missing properties: ["deep"]`},
		{map[string]any{"opts": map[string]any{"deep": "yes"}}, `want "boolean"`},
		{map[string]any{"name": "x"}, "argument name: minLength"},
		{map[string]any{"name": "héllo"}, "argument name: maxLength"},
	} {
		if err := d.checkArgs(tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("checkArgs(%v) = %v, want %q", tt.args, err, tt.want)
		}
	}
	if err := d.checkArgs(map[string]any{"n": 10.0, "tags": []any{"b"}, "opts": map[string]any{"deep": true}, "name": "héll"}); err != nil {
		t.Errorf("valid arguments rejected: %v", err)
	}
}

// TestEnumComparesValues: enum values are JSON values, not their printed
// form. The hand-written validator compared fmt.Sprint of each, so it took
// the string "1" for enum [1, 2] and ["1","2"] for enum [[1, 2]]; a schema
// whose enum contradicts its own type is refused when the catalog loads.
func TestEnumComparesValues(t *testing.T) {
	t.Parallel()
	defs, err := ParseToolDefs([]byte(`
- name: t
  description: Test tool.
  input_schema:
    type: object
    properties:
      n: {type: integer, enum: [1, 2]}
      pair: {type: array, enum: [[1, 2]]}
  result: "ok"
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := defs[0]
	for _, bad := range []map[string]any{{"n": "1"}, {"pair": []any{"1", "2"}}, {"n": 3.0}} {
		if err := d.checkArgs(bad); err == nil {
			t.Errorf("checkArgs(%v) accepted", bad)
		}
	}
	for _, good := range []map[string]any{{"n": 1.0}, {"pair": []any{1.0, 2.0}}} {
		if err := d.checkArgs(good); err != nil {
			t.Errorf("checkArgs(%v) = %v", good, err)
		}
	}
	_, err = ParseToolDefs([]byte(`
- name: t
  description: Test tool.
  input_schema:
    type: object
    properties:
      s: {type: string, enum: [1, 2]}
  result: "ok"
`), "test.yaml")
	if err == nil || !strings.Contains(err.Error(), "enum value 1 does not fit the schema") {
		t.Errorf("a string enum of numbers: %v", err)
	}
	long := map[string]any{"name": strings.Repeat("x", 50000)}
	if err := defs0(t).checkArgs(long); err == nil || len(err.Error()) > 3*maxMessage+10 {
		t.Errorf("a 50,000-character argument's error is %d bytes", len(fmt.Sprint(err)))
	}
}

func defs0(t *testing.T) *ToolDef {
	defs, err := ParseToolDefs([]byte(`
- name: t
  description: Test tool.
  input_schema: {type: object, properties: {name: {type: string, maxLength: 4}}}
  result: "ok"
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return defs[0]
}
