// Package score judges run traces: the scoring stage between running and
// analysis.
//
// Scoring is a pure function of a case's scoring rules, the run's matrix
// cell and the run's stored trace (Judge); it needs no model and no MCP
// server, so a saved result directory can be judged again with the cases
// as they are now (package internal/analysis/rescore, behind `toolward
// score`), and `toolward run
// --resume` re-judges finished runs after an edit that changed only how
// runs are judged. The engine calls Rules.Score on every run it finishes;
// nothing else decides an outcome.
//
// Steps of Judge:
//
//  1. Score the trace, and the run's state probe results when the cell
//     has probes, with the case's compiled expectation in the run's cell
//     (package matchers: every `when` entry selecting the cell applies).
//  2. A loop that ran out of turns (record.Trace.OutOfTurns) fails with
//     max_iterations, and a simulated user still going after
//     user.max_turns messages (OutOfUserTurns) with max_turns, ahead of
//     the matcher's reasons, plus unparsed_call when the model wrote tool
//     calls as text the server did not parse.
//
// The verdict is a matchers.Verdict; Rules.Score stores it on a record
// (record.OutcomeOf gives its outcome).
//
// Each judged record carries the digest of the rules that judged it
// (record.Record.Rules): the case's expectation and this package's
// Version, so a report can tell verdicts of two versions of a case apart.
package score
