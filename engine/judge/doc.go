// Package judge asks a model, the run config's judge, for its verdict on
// a judged answer ({$judge: RUBRIC}): the one impure step of judging,
// kept apart from the pure scorer (package matchers/score builds the
// judge's input and reads the stored verdicts; this package sends it).
//
// Judge implements score.Asker. For each sample (seed) of an input it
// sends the input's messages to its backend with Key.Side
// backend.SideJudge, so a replay cassette answers from its turns with
// role judge and the recorder writes them there, and reads the reply
// strictly (Parse): one JSON object {"verdict": "pass" | "fail",
// "reason": "…"} and nothing else, no tool call, not cut. Anything else,
// and any failure of the judge's backend, is a *backend.Error of kind
// judge (score.KindJudge): an infrastructure error, retried by the
// engine, never the model's failure. The majority of the votes decides;
// every vote is kept.
package judge
