package schema

import (
	"bytes"
	"encoding/json"
)

// CassetteJSONSchemaID is the $id of the generated cassette JSON Schema.
const CassetteJSONSchemaID = "https://github.com/toolward/toolward/schema/cassette.schema.json"

// CassetteJSONSchema returns a JSON Schema (draft-07) for replay
// cassette files, for editors such as yaml-language-server (committed as
// cassette.schema.json). It mirrors ParseCassettes; what only Go checks
// (a lone backslash ending a pattern, numbers JSON cannot hold, case ids
// that name no case, a case with two cassettes, a todo still there) is left to `toolward
// validate`. TestCassetteJSONSchemaAgreement checks the two agree on a
// corpus.
func CassetteJSONSchema() []byte {
	// A reply's text may be any scalar: `content: 42` is the text "42".
	str := obj{"type": []any{"string", "number", "boolean"}}
	nonNeg := obj{"type": "number", "minimum": 0}
	closed := func(props obj, required ...any) obj {
		o := obj{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			o["required"] = required
		}
		return o
	}
	scalar := obj{"type": []any{"string", "number", "boolean", "null"}}
	pattern := obj{"anyOf": []any{scalar, obj{"type": "array", "minItems": 1, "items": scalar}}}
	when := obj{}
	for _, a := range CassetteAxes {
		when[a] = pattern
	}
	call := closed(obj{
		"name":          obj{"type": []any{"string", "number", "boolean"}, "description": "The tool called."},
		"arguments":     obj{"description": "Any value; sent as JSON with its key order kept (a non-object exercises malformed calls)."},
		"raw_arguments": obj{"type": []any{"string", "number", "boolean"}, "description": "Sent verbatim, even when it is not valid JSON."},
	}, "name")
	call["not"] = obj{"required": []any{"arguments", "raw_arguments"}}
	turn := closed(obj{
		"content":     str,
		"thinking":    str,
		"tool_calls":  obj{"type": "array", "items": call},
		"tokens":      closed(obj{"in": nonNeg, "out": nonNeg}),
		"latency_ms":  nonNeg,
		"done_reason": str,
	})
	whenSchema := closed(when)
	whenSchema["description"] = "Cell selector: each named axis must match one of its values (exactly, as a glob with * ? \\, or as an equal number)."
	run := closed(obj{
		"when":  obj{"anyOf": []any{obj{"type": "null"}, whenSchema}},
		"turns": obj{"type": "array", "minItems": 1, "items": turn, "description": "Reply i answers model turn i."},
	}, "turns")
	s := obj{
		"$schema":     "http://json-schema.org/draft-07/schema#",
		"$id":         CassetteJSONSchemaID,
		"title":       "toolward replay cassette",
		"description": "The scripted model replies for one case (one YAML document; --- separates several). Generated from schema.CassetteJSONSchema.",
	}
	for k, v := range closed(obj{
		"case": obj{"type": "string", "minLength": 1, "description": "The id of the case it answers for."},
		"runs": obj{"type": "array", "minItems": 1, "items": run, "description": "Tried in order; the first whose when matches the cell wins."},
		"todo": obj{"type": "string", "description": "A cassette still to be written: validate and replay refuse it (\"fill in the cassette\") until this is removed."},
	}, "case", "runs") {
		s[k] = v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // static data
	}
	return b.Bytes()
}
