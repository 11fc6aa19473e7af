// Package layout holds no code: its doc is the map of the module, and its
// test (TestDependencyRules) checks that imports follow it.
//
// One room per stage, lowest first:
//
//	schema/cell            the matrix cell and its axes (imports nothing of the module)
//	matchers, textcall     the matcher language: one value against one JSON value
//	schema                 the formats toolward reads and writes: cases and cassettes
//	  schema/record        a run record (runs.jsonl line)
//	  schema/plan          the lazy plan: a config's runs, their ids, filters, shards
//	  schema/results       a result directory: config.json, runs.jsonl, the lock
//	  schema/runconfig     run configs: the embedded CUE schema (the only CUE user at run time)
//	  schema/internal/gen  go generate: toolward.cue's generated blocks and the JSON Schemas
//	matchers/score         judging: a trace and a case's rules to a verdict
//	engine                 the runtime: scheduler, agent loop, MCP sessions, backends,
//	                       and the judge of judged answers (engine/judge: judging's impure half)
//	mcpserver              the bundled MCP server (SQLite, corpus, calculator)
//	internal/analysis      reading results: report, stats, diff, rescore
//	internal/generate      writing suites: bfcl (import), scaffold (init)
//	internal/userfile      the bounded reader of user files
//	cmd/toolward           the CLI: flags in, one library call, exit code out
//	fixtures               data embedded in the binary (catalogs, corpus, cassettes)
//	  fixtures/fakes       test servers (model fakes, hostile servers), test helpers; never shipped
//
// A room may import the rooms listed above it, never those below, with
// the exceptions the rules spell out (formats use the matcher language;
// the bundled server shares only the user-file reader and fixtures).
package layout
