package schema

// The generated files of this directory (toolward.cue's marked blocks,
// case.schema.json, cassette.schema.json) are written by the command
// schema/internal/gen from their sources; its TestGeneratedFilesCurrent
// fails while one is stale.
//
//go:generate go run ./internal/gen
