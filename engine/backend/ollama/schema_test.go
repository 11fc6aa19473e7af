package ollama

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
)

// roundTrip converts a tool, encodes it the way the client sends it, and
// decodes it the way the Ollama server does (into api.Tool), returning the
// JSON the server would render for the model.
func roundTrip(t *testing.T, tool backend.Tool) string {
	t.Helper()
	ot, err := ConvertTool(tool)
	if err != nil {
		t.Fatalf("ConvertTool: %v", err)
	}
	wire, err := json.Marshal(ot)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var server api.Tool
	if err := json.Unmarshal(wire, &server); err != nil {
		t.Fatalf("server-side decode of %s: %v", wire, err)
	}
	out, err := json.Marshal(server)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestConvertToolRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		desc   string
		schema string
		want   string // JSON after a trip through the server's types
	}{
		{
			name:   "empty schema",
			schema: ``,
			want:   `{"type":"function","function":{"name":"t","parameters":{"type":"object","properties":{}}}}`,
		},
		{
			name:   "null schema",
			schema: `null`,
			want:   `{"type":"function","function":{"name":"t","parameters":{"type":"object","properties":{}}}}`,
		},
		{
			name: "flat with enum, order kept, metadata dropped",
			desc: "Look up weather.",
			schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,
				"properties":{"city":{"type":"string","description":"City name","minLength":2},
				"unit":{"type":"string","enum":["c","f"],"default":"c"},
				"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city"]}`,
			want: `{"type":"function","function":{"name":"t","description":"Look up weather.","parameters":{"type":"object","required":["city"],"properties":{` +
				`"city":{"type":"string","description":"City name (at least 2 characters)"},` +
				`"unit":{"type":"string","description":"(default: \"c\")","enum":["c","f"]},` +
				`"days":{"type":"integer","description":"(minimum 1) (maximum 7)"}}}}}`,
		},
		{
			name: "nested object with required",
			schema: `{"type":"object","properties":{"employee":{"type":"object","description":"Who to add.",
				"required":["name","salary"],
				"properties":{"name":{"type":"string"},"salary":{"type":"number","exclusiveMinimum":0},"email":{"type":"string","format":"email"}}}},
				"required":["employee"]}`,
			want: `{"type":"function","function":{"name":"t","parameters":{"type":"object","required":["employee"],"properties":{` +
				`"employee":{"type":"object","description":"Who to add.","properties":{` +
				`"name":{"type":"string","description":"(required)"},` +
				`"salary":{"type":"number","description":"(greater than 0) (required)"},` +
				`"email":{"type":"string","description":"(format: email)"}}}}}}}`,
		},
		{
			name: "array of objects with enum keeps items whole",
			schema: `{"type":"object","properties":{"rows":{"type":"array","minItems":1,"description":"Rows to insert.",
				"items":{"type":"object","required":["kind"],"properties":{"kind":{"type":"string","enum":["a","b"]},"n":{"type":"integer","minimum":0}}}}}}`,
			want: `{"type":"function","function":{"name":"t","parameters":{"type":"object","properties":{` +
				`"rows":{"type":"array","items":{"properties":{"kind":{"enum":["a","b"],"type":"string"},"n":{"minimum":0,"type":"integer"}},"required":["kind"],"type":"object"},` +
				`"description":"Rows to insert. (at least 1 items)"}}}}}`,
		},
		{
			name: "const, oneOf, anyOf, pattern, type list",
			schema: `{"type":"object","properties":{
				"mode":{"const":"fast"},
				"id":{"oneOf":[{"type":"string","pattern":"^[a-z]+$"},{"type":"integer"}]},
				"when":{"anyOf":[{"type":"string","format":"date"},{"type":"null"}],"description":"Day."},
				"tags":{"type":["array","null"],"items":{"type":"string"},"uniqueItems":true}}}`,
			want: `{"type":"function","function":{"name":"t","parameters":{"type":"object","properties":{` +
				`"mode":{"enum":["fast"]},` +
				`"id":{"anyOf":[{"type":"string","description":"(pattern: ^[a-z]+$)"},{"type":"integer"}]},` +
				`"when":{"anyOf":[{"type":"string","description":"(format: date)"},{"type":"null"}],"description":"Day."},` +
				`"tags":{"type":["array","null"],"items":{"type":"string"},"description":"(items unique)"}}}}}`,
		},
		{
			name: "defs and refs, unknown keywords folded, top-level extras into description",
			desc: "Do it.",
			schema: `{"type":"object","description":"Args.","$defs":{"Money":{"type":"number"}},
				"properties":{"amount":{"$ref":"#/$defs/Money"},"meta":{"type":"object","additionalProperties":{"type":"string"}}}}`,
			want: `{"type":"function","function":{"name":"t","description":"Do it. arguments (description: \"Args.\")","parameters":{"type":"object","$defs":{"Money":{"type":"number"}},"properties":{` +
				`"amount":{"description":"($ref: \"#/$defs/Money\")"},` +
				`"meta":{"type":"object","description":"(other keys: {\"type\":\"string\"})"}}}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := roundTrip(t, backend.Tool{Name: "t", Description: tt.desc, InputSchema: json.RawMessage(tt.schema)})
			if got != tt.want {
				t.Errorf("round trip:\n got  %s\n want %s", got, tt.want)
			}
		})
	}
}

// TestAPITypesDropKeywords documents why ConvertTool folds keywords: a
// schema decoded straight into Ollama's types loses them.
func TestAPITypesDropKeywords(t *testing.T) {
	schema := `{"type":"object","properties":{"o":{"type":"object","required":["x"],"properties":{"x":{"type":"integer","minimum":1,"default":3}}}}}`
	var params api.ToolFunctionParameters
	if err := json.Unmarshal([]byte(schema), &params); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(params)
	for _, kw := range []string{`"required"`, `"minimum"`, `"default"`} {
		if bytes.Contains(out, []byte(kw)) {
			t.Errorf("api types now keep %s (%s); ConvertTool could carry it structurally", kw, out)
		}
	}
	// ConvertTool keeps their meaning.
	got := roundTrip(t, backend.Tool{Name: "t", InputSchema: json.RawMessage(schema)})
	for _, want := range []string{"(required)", "(minimum 1)", "(default: 3)"} {
		if !bytes.Contains([]byte(got), []byte(want)) {
			t.Errorf("converted tool lacks %q: %s", want, got)
		}
	}
}

func TestConvertToolBadSchema(t *testing.T) {
	for _, schema := range []string{`{"type":`, `[1,2]`, `{"type":"object","properties":{"a":{"type":5}}}`, `{"required":"a"}`} {
		_, err := ConvertTool(backend.Tool{Name: "bad", InputSchema: json.RawMessage(schema)})
		var be *backend.Error
		if !errors.As(err, &be) || be.Kind != backend.KindBadRequest || be.Retryable {
			t.Errorf("schema %s: got %v, want a non-retryable %s error", schema, err, backend.KindBadRequest)
		}
	}
}

// TestConvertMemo: the backend converts each distinct tool once, keyed by
// everything the conversion reads, so a tool whose description (or
// schema) differs is converted afresh.
func TestConvertMemo(t *testing.T) {
	b, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"x":{"type":"integer","minimum":1}}}`)
	tools := []backend.Tool{
		{Name: "f", Description: "Default.", InputSchema: schema},
		{Name: "f", Description: "Terse.", InputSchema: schema},
		{Name: "f", Description: "Default.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	for range 3 {
		got, encs, err := b.convertTools(tools)
		if err != nil {
			t.Fatal(err)
		}
		var all api.Tools
		for i, tl := range tools {
			want, _ := ConvertTool(tl)
			all = append(all, want)
			if g, w := mustJSON(t, got[i]), mustJSON(t, want); g != w {
				t.Fatalf("tool %d: memoised %s, want %s", i, g, w)
			}
		}
		for i := range tools {
			if g, w := string(encs[i]), mustJSON(t, all[i]); g != w {
				t.Fatalf("tool %d: memoised encoding %s, want %s", i, g, w)
			}
		}
	}
	if n := len(b.converted); n != 3 {
		t.Fatalf("%d conversions kept, want 3 (one per distinct tool)", n)
	}
	// Fields run together differently must not collide.
	if a, c := toolKey(nil, backend.Tool{Name: "ab", Description: "c"}), toolKey(nil, backend.Tool{Name: "a", Description: "bc"}); string(a) == string(c) {
		t.Fatalf("keys collide: %q", a)
	}
	if _, _, err := b.convertTools([]backend.Tool{{Name: "bad", InputSchema: json.RawMessage(`{`)}}); err == nil {
		t.Fatal("bad schema: want error")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
