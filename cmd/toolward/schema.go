package main

import (
	"fmt"
	"io"

	"github.com/toolward/toolward/schema"
)

func init() {
	register(&command{name: "schema", summary: "print the CUE schema, or a JSON Schema for case files", run: runSchema})
}

const schemaUsage = `usage: toolward schema [--jsonschema [--cassette]]

Prints the CUE schema embedded in toolward (#Case, #Matcher, #Config).
With --jsonschema, prints a JSON Schema (draft-07) for case files instead,
for editors: put
    # yaml-language-server: $schema=<path or URL of that file>
at the top of a case file. With --cassette as well, the JSON Schema of
replay cassette files.
`

func runSchema(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("schema", schemaUsage, false, stderr)
	js := fs.Bool("jsonschema", false, "print a JSON Schema (draft-07) for case files")
	cassette := fs.Bool("cassette", false, "with --jsonschema: the JSON Schema of cassette files")
	if err := fs.Parse(args); err != nil {
		return exitCode(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "toolward schema: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *cassette && !*js {
		fmt.Fprintln(stderr, "toolward schema: --cassette goes with --jsonschema")
		return 2
	}
	var out []byte
	switch {
	case *js && *cassette:
		out = schema.CassetteJSONSchema()
	case *js:
		out = schema.CaseJSONSchema()
	default:
		out = schema.Source()
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintln(stderr, "toolward schema:", err)
		return 1
	}
	return 0
}
