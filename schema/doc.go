// Package schema holds toolward's input types (Case, Config, Cassette)
// and loads case files and cassettes into them, with file:line:col
// errors, in plain Go: nothing here links CUE, so the analysis side
// (score, report, diff) reads cases without it. The CUE schema
// (#Case, #Matcher, #Config) is embedded here as text (Source);
// package schema/runconfig compiles it to load run configs and
// validates whole suites.
//
// toolward.cue is the documented schema; `toolward schema` prints it and
// `toolward schema --jsonschema` prints the draft-07 JSON Schema of case
// files translated from it (case.schema.json, CaseJSONSchema), which the
// loader checks cases with and editors read. The case format's fields
// have one source, the Go types (see "One definition of the format").
//
// # Case files
//
// Case files are YAML, one case per document. For speed, cases do not go
// through CUE unification (matcher-heavy disjunctions cost milliseconds
// per file): ParseCases decodes yaml.Node trees, so every error keeps its
// position, checks each case against the case JSON Schema (the embedded
// case.schema.json, generated from #Case) with
// santhosh-tekuri/jsonschema, words the library's errors itself at the
// YAML position of the value they are about, and compiles expectations
// with matchers.CompileExpect (which checks all of expect; the schema
// check leaves it out). Beyond the schema (shapeIssues and parseCase say
// why each rule is Go's), a case must list in needs every tool its
// expected calls name (including those of when overrides), and its
// golden trajectory, if any, must pass the case's expectations in
// GoldenCell, the default cell of #Config (temperature 0, tools needed,
// confirm auto, descriptions default, options default, no model): the
// base expectations plus any when entry that selects that cell. A when
// entry may carry its own golden (#When.golden): ParseCases takes it out
// of Case.Expect, so the matchers never see it, into Case.WhenGoldens
// (not part of the RunDigest, like Golden), and scores it in
// WhenCell(entry), the first value of each selector the entry names with
// the other axes from GoldenCell, where every when entry selecting that
// cell applies, as in a run. Its rejections are errors at
// expect.when[i].golden that name the cell and, for the answer, which
// matcher applied (expect.answer or expect.when[j].answer). Golden
// arguments are scored as a model's are: every number a json.Number
// with its text as written (10.0 stays 10.0, so $int: 10 rejects it; a
// YAML spelling JSON lacks, such as 0x1F or 10., becomes 31 or 10.0), as
// the engine decodes a model's arguments and as a cassette replays them.
// Case.GoldenRejections scores them through another decoding: runconfig
// uses it to reject, for a config on Ollama (whose native API re-encodes
// arguments through float64), a golden integer beyond 2^53. LoadCases
// expands globs (with **), loads files in parallel, reports every error
// rather than stopping at the first (every independent mistake in an
// expectation, too), and rejects case ids used twice.
//
// # One definition of the format
//
// A case field is one Go field of Case (or User, Golden, GoldenTurn,
// GoldenCall, Message) with three parts: its yaml tag, the key the
// loader reads (decodeFields fills the types through the tags) and
// writers write; its cue tag, the CUE constraint; and its doc comment,
// the text users read. `go generate ./schema/...` runs the command
// schema/internal/gen, which writes the marked "case fields" part of
// toolward.cue from them (#CaseFields, #UserFields, #GoldenFields,
// #GoldenTurn, #GoldenCall, #Message): the key, required (key!) when the
// yaml tag has no omitempty, so that a writer always writes it, and
// optional (key?) with omitempty; the constraint as written; the doc
// comment line for line. Fields without a cue tag (File, RunDigest, ...)
// are Go's own. The expectation's fields (#Expect, #Rules, #TurnRules,
// #Call, #ProbeFields) are generated the same way from the format types
// of package matchers (matchers/format.go) into the marked "expect
// fields" part, and the axes from package schema/cell. Then it
// translates #Case of that toolward.cue into case.schema.json, the
// schema the loader checks cases with and editors read (`toolward schema
// --jsonschema`). What joins fields into a whole (#Case: #CaseFields &
// matchN(...), the one-of rules of #User and #Golden, #Probe:
// #ProbeFields & a one-of, #When) and #Matcher stay hand-written CUE.
// TestGeneratedFilesCurrent (in schema/internal/gen) fails while a
// generated file is stale; schema/runconfig's TestCaseSchemaAgreement and
// TestCaseJSONSchemaMutations hold the translation to CUE's verdicts.
//
// To add a case field: add the Go field with its yaml tag, cue tag and
// doc comment, run `go generate ./schema/...`, and add a case to the
// tests that uses it (TestCaseSchemaAgreement's corpus for its shape).
// The loader then reads it, checks it as the cue tag says, and words its
// mistakes; write Go checks only for what the tag cannot state.
//
// # Cassettes
//
// ParseCassettes parses replay cassette files (the format of
// engine/backend/replay) with every mistake at file:line:col, and
// Cassette.MarshalYAML and EncodeCassette write them (the recorder, the
// BFCL importer and `toolward init` all write through them). Each field
// of the format is one entry of the shapes in cassette_format.go, which
// give the parser its keys and CassetteJSONSchema, generated from them,
// its properties (committed as cassette.schema.json). LoadCassettes loads a cassette directory;
// CheckCassettes reports cassettes for case ids a config does not have,
// with a did-you-mean. YAMLSyntaxError places yaml.v3's syntax errors at
// the offending line (yaml.v3 reports a block parser error where the
// enclosing mapping starts) and says when a line is indented with a tab.
// ToolUses and Locate give the tool names a case uses and their
// positions, for checks against a live server (engine/preflight).
//
// # Limits
//
// Every user-supplied file is read through ReadFile, which refuses what
// is not a regular file (a directory, /dev/zero, a named pipe) and reads
// at most the file's limit (MaxCaseFileSize, MaxConfigFileSize,
// MaxDescriptionFileSize, MaxCassetteFileSize), so no path makes loading
// unbounded. Errors.Lines prints at most MaxSameKind errors of one kind
// and counts the rest.
package schema
