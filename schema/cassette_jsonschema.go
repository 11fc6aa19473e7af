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
	b, err := JSONSchemaFile(CassetteJSONSchemaID, "toolward replay cassette",
		"The scripted model replies for one case (one YAML document; --- separates several). Generated from schema.CassetteJSONSchema.",
		cassetteShape.jsonSchema())
	if err != nil {
		panic(err) // static data
	}
	return b
}

// JSONSchemaFile is a committed JSON Schema (draft-07) file: $schema,
// $id, title and description, then the keywords of body but its
// description, indented.
func JSONSchemaFile(id, title, description string, body map[string]any) ([]byte, error) {
	s := obj{"$schema": "http://json-schema.org/draft-07/schema#", "$id": id, "title": title, "description": description}
	for k, v := range body {
		if k != "description" {
			s[k] = v
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err := enc.Encode(s)
	return b.Bytes(), err
}

// obj is a JSON object being built.
type obj = map[string]any
