package main

import (
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/runconfig"
)

// caseJSONSchema is the JSON Schema of case files: #Case of the CUE
// schema cueSrc.
func caseJSONSchema(cueSrc []byte) ([]byte, error) { return runconfig.CaseJSONSchemaOf(cueSrc) }

// cassetteJSONSchema is the JSON Schema of cassette files.
func cassetteJSONSchema() []byte { return schema.CassetteJSONSchema() }
