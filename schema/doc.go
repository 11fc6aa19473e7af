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
// into Case.WhenGoldens (part of the Digest, like Golden), and scores it
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
// Validate does both for `toolward validate`, walking directories (a
// directory with nothing to check is a mistake); Check also returns a
// Summary of what it checked, for the command's summary line.
//
// # Limits
//
// Every user-supplied file is read through ReadFile, which refuses what
// is not a regular file (a directory, /dev/zero, a named pipe) and reads
// at most the file's limit (MaxCaseFileSize, MaxConfigFileSize,
// MaxDescriptionFileSize), so no path makes loading unbounded. Before
// CUE sees a config, checkCUESize refuses nesting deeper than MaxCUEDepth
// and list or struct literals longer than MaxCUEElements, where CUE's own
// evaluation turns quadratic or overflows the stack. Errors.Lines prints
// at most MaxSameKind errors of one kind and counts the rest.
package schema
