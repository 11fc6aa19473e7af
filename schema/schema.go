package schema

import _ "embed"

// SchemaFile is the file name the embedded schema is compiled under; CUE
// error positions in the schema itself carry it.
const SchemaFile = "toolward.cue"

//go:embed toolward.cue
var source []byte

// Source returns the CUE schema text embedded in the binary. Package
// schema/runconfig compiles it; this package only carries it, so that
// reading cases never links CUE.
func Source() []byte { return append([]byte(nil), source...) }
