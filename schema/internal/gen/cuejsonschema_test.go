package main

import (
	"encoding/json"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

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
