// Command gen writes the generated forms of toolward's formats from their
// sources; `go generate ./schema/...` runs it (see schema/generate.go) in
// the schema directory. The Go types are the source of the case format's
// fields: each field's yaml tag, cue tag and doc comment.
//
//   - toolward.cue's marked blocks: "axes" from the axis table of package
//     schema/cell, "case fields" from the case types of schema/types.go,
//     "expect fields" from the expectation types of matchers/format.go;
//   - case.schema.json, the JSON Schema of case files, from #Case of the
//     toolward.cue just written;
//   - cassette.schema.json from the cassette shapes of package schema;
//   - the copy of case.schema.json in the committed BFCL suite.
//
// TestGeneratedFilesCurrent fails while a committed file differs from
// what gen writes.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolward/toolward/schema"
)

func main() {
	if err := write("."); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// write regenerates the files of the schema directory dir.
func write(dir string) error {
	files, err := generate(dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		old, err := os.ReadFile(path)
		if err == nil && bytes.Equal(old, f.data) {
			continue
		}
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// file is one generated file, by its name in the schema directory.
type file struct {
	name string
	data []byte
}

// generate returns every generated file of the schema directory dir,
// from the sources there and in ../matchers.
func generate(dir string) ([]file, error) {
	cueSrc, err := os.ReadFile(filepath.Join(dir, "toolward.cue"))
	if err != nil {
		return nil, err
	}
	cueSrc, err = cueBlocks(dir, cueSrc)
	if err != nil {
		return nil, err
	}
	caseSchema, err := caseJSONSchema(cueSrc)
	if err != nil {
		return nil, err
	}
	return []file{
		{"toolward.cue", cueSrc},
		{"case.schema.json", caseSchema},
		// The BFCL import writes the schema beside its cases; its
		// committed suite keeps a copy.
		{"../fixtures/bfcl/suite/case.schema.json", caseSchema},
		{"cassette.schema.json", schema.CassetteJSONSchema()},
	}, nil
}
