package schema

import (
	"bytes"
	"encoding/json"
)

// CassetteJSONSchemaID is the $id of the generated cassette JSON Schema.
const CassetteJSONSchemaID = "https://github.com/toolward/toolward/schema/cassette.schema.json"

// CassetteJSONSchema returns a JSON Schema (draft-07) for replay
// cassette files, for editors such as yaml-language-server (committed as
// cassette.schema.json). It is generated from the shapes ParseCassettes
// reads (cassette_format.go); what only Go checks (a lone backslash
// ending a pattern, numbers JSON cannot hold, case ids that name no case,
// a case with two cassettes, a todo still there) is left to `toolward
// validate`.
func CassetteJSONSchema() []byte {
	s := obj{
		"$schema":     "http://json-schema.org/draft-07/schema#",
		"$id":         CassetteJSONSchemaID,
		"title":       "toolward replay cassette",
		"description": "The scripted model replies for one case (one YAML document; --- separates several). Generated from schema.CassetteJSONSchema.",
	}
	for k, v := range cassetteShape.jsonSchema() {
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

// obj is a JSON object being built.
type obj = map[string]any
