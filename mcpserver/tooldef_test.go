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

// TestUncheckedArgs: a tool with unchecked_args offers its schema as
// written, enum and default values that contradict their own types
// included (the quirks of BFCL's data), and answers every call: the
// server neither refuses arguments nor fills in defaults. Without the
// flag the same schema is refused when the catalog loads.
func TestUncheckedArgs(t *testing.T) {
	t.Parallel()
	const catalog = `
- name: q
  description: Quirky tool.
  input_schema:
    type: object
    required: [n]
    properties:
      n: {type: integer, enum: ["1", "2"]}
      color: {type: string, enum: [red, blue], default: any}
      auth: {type: array, items: {type: string}, default: [null, null]}
      metrics: {type: array, items: {type: string}, enum: [view, favorability]}
      when: {type: object, optional: true, required: [day]}
  unchecked_args: true
  result: "ok"
`
	defs, err := ParseToolDefs([]byte(catalog), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := defs[0]
	props := d.MCPTool().RawInputSchema
	for _, want := range []string{`"enum":["1","2"]`, `"default":"any"`, `"default":[null,null]`, `"enum":["view","favorability"]`,
		// Keys outside JSON Schema and a required name without a property
		// are offered as written, with no properties added.
		`"when":{"optional":true,"required":["day"],"type":"object"}`} {
		if !strings.Contains(string(props), want) {
			t.Errorf("offered schema lacks %s: %s", want, props)
		}
	}
	for _, args := range []map[string]any{{}, {"n": 1.0, "color": "green", "metrics": []any{"view"}}, {"n": "x", "extra": true}} {
		before := fmt.Sprint(args)
		if err := d.checkArgs(args); err != nil {
			t.Errorf("checkArgs(%v) = %v", args, err)
		}
		if fmt.Sprint(args) != before {
			t.Errorf("checkArgs filled in %v", args)
		}
	}
	_, err = ParseToolDefs([]byte(strings.Replace(catalog, "  unchecked_args: true\n", "", 1)), "test.yaml")
	if err == nil || !strings.Contains(err.Error(), `test.yaml:10:50: tool q: input_schema.properties.auth: default [null,null] does not fit the schema: argument items: type: null has type "null", want "string"`) {
		t.Errorf("the checked schema: %v", err)
	}
	// A checked schema refuses what an unchecked one carries.
	for _, bad := range []string{"optional: true", "required: [day], properties: {}"} {
		_, err = ParseToolDefs([]byte("- name: c\n  description: C.\n  input_schema: {type: object, properties: {w: {type: object, "+bad+"}}}\n  result: ok\n"), "test.yaml")
		if err == nil || !strings.Contains(err.Error(), "unsupported JSON Schema keyword \"optional\"") && !strings.Contains(err.Error(), `required property "day" is not in properties`) {
			t.Errorf("checked %s: %v", bad, err)
		}
	}
	// The structure is still checked.
	_, err = ParseToolDefs([]byte(strings.Replace(catalog, "type: integer", "type: int", 1)), "test.yaml")
	if err == nil || !strings.Contains(err.Error(), "test.yaml:8:11: tool q: input_schema.properties.n: type must be one of") {
		t.Errorf("a wrong type in an unchecked schema: %v", err)
	}
}

// TestEveryBadToolListed: a catalog reports each refused tool, at the
// line and column of what is wrong, not only the first.
func TestEveryBadToolListed(t *testing.T) {
	t.Parallel()
	_, err := ParseToolDefs([]byte(`
- name: a
  description: Default not in its enum.
  input_schema: {type: object, properties: {c: {type: string, enum: [red], default: any}}}
  result: ok
- name: fine
  description: Fine.
  input_schema: {type: object}
  result: ok
- name: b
  description: A null default inside an array of strings.
  input_schema:
    type: object
    properties:
      auth: {type: array, items: {type: string, default: null}}
  result: ok
- name: "bad name"
  description: x
  input_schema: {type: object}
  result: ok
`), "cat.yaml")
	if err == nil {
		t.Fatal("accepted")
	}
	want := []string{
		`cat.yaml:4:76: tool a: input_schema.properties.c: default "any" does not fit the schema: enum: any does not equal any of: [red]`,
		`cat.yaml:15:49: tool b: input_schema.properties.auth.items: default null does not fit the schema: type: null has type "null", want "string"`,
		`cat.yaml:17:3: tool bad name: name "bad name" must be 1-64 letters, digits, _ or -`,
	}
	if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
