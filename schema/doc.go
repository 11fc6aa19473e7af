// Package schema holds toolward's CUE schema (#Case, #Matcher, #Config),
// embedded in the binary, and loads case files and run configs through it
// into the Go types of this package, with file:line:col errors.
//
// toolward.cue is the documented source of truth; `toolward schema` prints
// it and `toolward schema --jsonschema` prints CaseJSONSchema, a draft-07
// JSON Schema of case files for editors (committed as case.schema.json).
//
// # Run configs
//
// LoadConfig compiles a config as plain CUE and unifies it with #Config in
// Go, so closedness applies whether or not the file mentions #Config (a
// typo such as `concurency: 8` is an error at its position), fills the
// defaults #Config declares, and decodes into Config. CUE's errors are
// translated into one line per failing node: the headers of failed
// disjunctions, complaints of default branches the value did not choose
// and of matchN alternatives are dropped, and the alternatives left at
// one path merge into "want …, got …". It then checks what CUE cannot:
// case globs match files, description sets and catalogs resolve to files
// (relative to the working directory), and cross-field rules.
//
// # Case files
//
// Case files are YAML, one case per document. For speed, cases do not go
// through CUE unification (matcher-heavy disjunctions cost milliseconds
// per file): ParseCases decodes yaml.Node trees, so every error keeps its
// position, checks the structure of #Case in Go and compiles expectations
// with matchers.CompileExpect. TestCaseSchemaAgreement and
// TestMatcherAgreement run one corpus of valid and invalid cases and
// matchers through the CUE schema, the Go code and the JSON Schema and
// require the same verdicts, so the three cannot drift apart. Beyond the
// schema, a case must list in needs every tool its expected calls name
// (including those of when overrides), and its golden trajectory, if any,
// must pass the case's expectations in GoldenCell, the default cell of
// #Config (temperature 0, tools needed, confirm auto, descriptions
// default, no model): the base expectations plus any when entry that
// selects that cell. A when entry may carry its own golden (#When.golden):
// ParseCases takes it out of Case.Expect, so the matchers never see it,
// into Case.WhenGoldens (not part of the RunDigest, like Golden), and scores it
// in WhenCell(entry), the first value of each selector the entry names
// with the other axes from GoldenCell, where every when entry selecting
// that cell applies, as in a run. Its rejections are errors at
// expect.when[i].golden that name the cell and, for the answer, which
// matcher applied (expect.answer or expect.when[j].answer). Golden arguments are scored as a model's would be,
// JSON numbers as float64, so an expectation no real call can meet (an
// integer beyond 2^53) is caught too. LoadCases expands globs (with **),
// loads files in parallel, reports every error rather than stopping at
// the first (every independent mistake in an expectation, too), and
// rejects case ids used twice.
//
// # Cassettes
//
// ParseCassettes parses replay cassette files (the format of
// engine/backend/replay, which converts the result) with every mistake
// at file:line:col; CassetteJSONSchema is their JSON Schema (committed as
// cassette.schema.json). LoadCassettes loads a cassette directory;
// CheckCassettes reports cassettes for case ids a config does not have,
// with a did-you-mean. YAMLSyntaxError places yaml.v3's syntax errors at
// the offending line (yaml.v3 reports a block parser error where the
// enclosing mapping starts) and says when a line is indented with a tab.
// ToolUses and Locate give the tool names a case uses and their
// positions, for checks against a live server (engine/preflight).
//
// Validate does all of it for `toolward validate`, walking directories (a
// directory with nothing to check is a mistake; YAML files are sniffed
// for cassettes, IsCassetteFile), and checks for each config the cases
// and cassettes a run of it loads; Check also returns a
// Summary of what it checked, for the command's summary line.
//
// # Limits
//
// Every user-supplied file is read through ReadFile, which refuses what
// is not a regular file (a directory, /dev/zero, a named pipe) and reads
// at most the file's limit (MaxCaseFileSize, MaxConfigFileSize,
// MaxDescriptionFileSize, MaxCassetteFileSize), so no path makes loading
// unbounded. Before
// CUE sees a config, checkCUESize refuses nesting deeper than MaxCUEDepth
// and list or struct literals longer than MaxCUEElements, where CUE's own
// evaluation turns quadratic or overflows the stack. Errors.Lines prints
// at most MaxSameKind errors of one kind and counts the rest.
package schema
