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
// Judged answers ({$judge: RUBRIC}) are decided by a model, the run
// config's judge, before Score (judge.go): JudgeInputs builds the
// judge's whole input for each judged answer of a run (its messages, the
// candidate's text delimited as untrusted material, and a digest of it
// all), Rejudge keeps each stored verdict whose input digest is
// unchanged and asks an Asker (package engine/judge) for the others, and
// Score reads only verdicts whose digest the rules still give; a judged
// answer without one makes the run an error of kind judge, never the
// model's failure. A rubric is an expectation: editing it changes the
// rules digest and the judge's input, not the run id.
//
// The verdict is a matchers.Verdict; Rules.Score stores it on a record
// (record.OutcomeOf gives its outcome).
//
// Each judged record carries the digest of the rules that judged it
// (record.Record.Rules): the case's expectation and this package's
// Version, so a report can tell verdicts of two versions of a case apart.
package score
