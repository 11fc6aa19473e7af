// Package runconfig loads run configs (configs/*.cue) through toolward's
// CUE schema, embedded in package schema (schema.Source) and compiled
// here once per process, and validates whole suites. It is the only
// package of the binary that links CUE: the runtime and `toolward validate` use it;
// the analysis side (score, report, diff) reads cases through package
// schema alone.
//
// # The case JSON Schema
//
// schema/internal/gen translates #Case into the JSON Schema of case
// files (schema/case.schema.json), which the loader checks cases with;
// TestCaseSchemaAgreement and TestCaseJSONSchemaMutations here hold the
// loader and the translation to CUE's verdicts.
//
// # Run configs
//
// Load compiles a config as plain CUE and unifies it with #Config in
// Go, so closedness applies whether or not the file mentions #Config (a
// typo such as `concurency: 8` is an error at its position), fills the
// defaults #Config declares, and decodes into schema.Config. CUE's errors
// are translated into one line per failing node: the headers of failed
// disjunctions, complaints of default branches the value did not choose
// and of matchN alternatives are dropped, and the alternatives left at
// one path merge into "want …, got …". It then checks what CUE cannot:
// case globs match files, description sets and catalogs resolve to files
// (relative to the working directory), host pools, and cross-field
// rules.
//
// # Suites
//
// CheckWith checks case files, cassettes, tool catalogs and configs for
// `toolward validate`, walking directories (a directory with nothing to
// check is a mistake; YAML files are sniffed for cassettes,
// schema.IsCassetteFile), and checks for each config the cases and
// cassettes a run of it loads; it also returns a Summary of what it
// checked, for the command's summary line. Its Options check tool
// catalogs (as the bundled server reads them) and take warnings.
//
// # Limits
//
// Before CUE sees a config, checkCUESize refuses nesting deeper than
// MaxCUEDepth and list or struct literals longer than MaxCUEElements,
// where CUE's own evaluation turns quadratic or overflows the stack. The
// file itself is read through schema.ReadFile, at most
// schema.MaxConfigFileSize bytes.
package runconfig
