// Package matchers compiles case expectations into matcher trees and
// scores executed traces against them.
//
// Its position: schema decodes a case's `expect:` mapping; CompileExpect
// turns it into an *Expectation once; the engine scores every run's Trace
// with Expectation.Score(trace, cell), a pure function, so a saved trace
// can be re-scored without a model.
//
// # Matchers
//
// Every matcher of an expectation is one decoded YAML/JSON value:
//
//   - a literal scalar matches an equal value; numbers compare by value
//     (5 = 5.0) but "5" is a string, not 5; strings compare exactly (case
//     and whitespace count, no Unicode normalisation);
//   - numbers in model arguments are json.Number, the text the model
//     wrote (see Call), and every matcher compares them by value, as it
//     does float64 and integer values;
//   - large numbers: a case's YAML integer is kept exactly (int64, or
//     json.Number beyond it) and 2^53+1 is not equal to 2^53, and so is
//     an integer argument kept as json.Number; but a backend that decodes
//     the model's arguments itself (Ollama's native API) hands them over
//     as float64 values, exact only up to 2^53, so an expected integer
//     beyond that cannot match a call through it: the mismatch of a
//     float64 says so, and validate of a config on Ollama reports a
//     golden that fails so (schema.Case.GoldenRejections). A YAML float such as
//     9007199254740993.0 is a float64 already (9007199254740992);
//   - a literal object matches an object that has every named key with a
//     matching value; other keys are allowed unless strict (strict_args);
//   - a literal list matches a list of the same length, element by element;
//   - {$any: true}: present, with any value (null included);
//   - {$contains: X}: a string containing the substring X, or a list with
//     an element matching X (X may itself be a matcher);
//   - {$one_of: [A, B, …]}: any alternative matches; alternatives may be
//     matchers;
//   - {$all: [A, B, …]}: every one matches (e.g. {$all: [{$contains: a},
//     {$contains: b}]}); a mismatch explains the first that fails;
//   - {$absent_or: M}: the key is absent, or present and matching M;
//   - {$regex: "…"}: a string with a match of the RE2 expression anywhere
//     (anchor with ^…$ for a whole-string match);
//   - {$not: M}: M does not match (an absent key passes unless M accepts
//     absence);
//   - {$approx: {value: V, tol: T}}: a number within T of V;
//   - {$norm: "…"}: a string equal to the given one after normalisation
//     (see Normalize: lower-cased, the characters space , . / - _ * ^
//     removed, ' read as "), so "New York" accepts "new-york"; the
//     comparison of the Berkeley Function Calling Leaderboard;
//   - {$int: N}: an integer equal to N. A number with a fractional part,
//     a string "N" and a boolean never match; a number whose JSON text
//     is known (json.Number, as the engine records every model
//     argument) must be written without a decimal point or exponent, so
//     10.0 is not the integer 10. A float64 carries no text: 10.0 decoded
//     into a float64 is the integer 10 (what reaches toolward through
//     Ollama's native API, which re-encodes the model's arguments).
//
// An absent key and a null are different: null is present. An object with
// a key starting with "$" is an operator and must have exactly one key; an
// unknown operator is a compile error with a did-you-mean suggestion, never
// a literal. Every compile error is a *CompileError carrying the path of
// the offending node (e.g. expect.calls[0].args.lang) so that a loader can
// map it to a file position.
//
// A mismatch explains itself with the path of the offending node from
// the trace's root, e.g. `calls[0].args.sql: want string containing "x",
// got "y"`.
//
// # Expectations
//
// An `expect:` mapping has calls ({tool, args} each), order (sequence:
// the expected calls appear in this order, other calls may interleave;
// unordered: expected calls are assigned to distinct actual calls by a
// maximum bipartite matching, so a greedy first-fit cannot steal a call
// another expectation needs), strict_args, forbid (tool names; attempting
// one fails even when the user denied it), max_calls, min_calls (at
// least this many calls to offered tools, whichever: "the model must use
// a tool", e.g. BFCL's relevance category), no_calls and answer (a
// matcher on the final answer string). Its fields are the Go types of
// format.go (Expect, Rules, TurnRules, ExpectedCall, StateProbe), whose
// yaml keys CompileExpect allows and whose plain fields it decodes by
// type; the expect part of toolward.cue is generated from them.
//
// `when` is a list of overrides. Each entry names selectors (the scoring
// axes of package schema/cell, WhenSelectors: model, temperature, …; a string/number or a list of them, any of which selects, in
// the selector language of schema/cell shared with `--filter` and
// cassettes: globs with * ? and \ escapes, temperatures by value) and overrides (calls, order, strict_args,
// forbid, max_calls, min_calls, no_calls, answer, state). Every entry whose selectors all
// match the run's Cell applies, in order; later entries win. An entry that
// sets no_calls: true without calls drops the inherited calls, and one
// that sets calls without no_calls lifts an inherited no_calls. A Cell field
// left at its zero value only satisfies entries that do not name it
// (temperature 0 is a real temperature and matches temperature: 0).
//
// CompileExpect reports every independent mistake (CompileErrors), and
// rules no trace can meet: calls or min_calls with no_calls: true,
// min_calls above max_calls, and an expected call
// to a forbidden tool, in the base, in one entry, or in the base with one
// entry applied.
//
// Score reports failures with the reason codes of trace.go: malformed_call
// for a call whose arguments are not an object, unoffered_call for a call
// to a tool that was not offered (such calls never satisfy an expected
// call), forbidden_call,
// unexpected_call (no_calls), too_many_calls, missing_call (also for
// fewer calls than min_calls), wrong_args
// (naming the expected call and why the closest actual call to that tool
// failed) and answer_mismatch. Denied calls count as attempted: they can
// satisfy an expected call and count towards max_calls.
//
// # Judged answers
//
// An answer expectation may be {$judge: RUBRIC, with: [calls]} instead of
// a matcher (judge.go), wherever answer stands: the final answer, a user
// turn's, a when entry's. A model decides it, so the matcher language
// does not: Expectation.Judged lists the judged answers of a cell, the
// caller puts the judge's verdicts in Trace.Verdicts by their Where, and
// Score fails an answer the judge failed (judge_rejected, with the
// judge's reason) and lists one without a verdict in Verdict.Unjudged
// (not a failure; package matchers/score makes such a run an error).
//
// # Calls written as text
//
// Score also looks for tool calls the model wrote as text in the content
// of every turn (or, for a golden, in its answer): markup such as
// <tool_call>{"name": …, "arguments": …}</tool_call> that the server's
// template parser missed, so the call never ran. Package textcall finds
// them, with its markup families as data (textcall/families.yaml), and
// only where the text decodes to a tool name and an arguments object.
// They fail a no_calls case, and a case whose forbid lists the tool, with
// reason unparsed_call, which is also added to any other failure of such
// a run; a run that meets its expectations otherwise still passes. The
// calls are returned in Verdict.TextCalls either way. A markup that
// repeats a call parsed and executed from the same turn (same tool,
// arguments equal with numbers by value) is not counted.
// Detection is computed from the trace each time it is scored, so a
// re-score finds the same calls (FindTextCalls).
//
// # BFCL
//
// $norm and $int exist for the Berkeley Function Calling Leaderboard's
// verdicts; `toolward import bfcl` (package internal/generate/bfcl)
// translates BFCL's possible answers into expectations with them.
package matchers
