package matchers

import (
	"slices"

	"github.com/toolward/toolward/schema/cell"
)

// This file holds the contract between the engine and the scorer: the
// shapes of an executed trace, the matrix cell that produced it, and the
// verdict. The engine converts its richer run record into a Trace; the
// scorer never sees anything the engine did not record.

// Call is one tool call the model attempted, in the order it attempted it.
type Call struct {
	// Tool is the name the model asked for.
	Tool string
	// Args is the decoded JSON argument object: map[string]any, []any,
	// string, bool, nil and numbers. The engine decodes with UseNumber,
	// so numbers are json.Number holding the model's text (10.0 stays
	// 10.0, for $int); float64 and the integer types are accepted too and
	// compare by value. Nil when Malformed.
	Args map[string]any
	// Malformed is set when the model's arguments were not a JSON object.
	Malformed bool
	// NotOffered is set when the tool was not among those offered.
	NotOffered bool
	// Denied is set when the simulated user declined the call (confirm
	// mode deny). A denied call still counts as attempted.
	Denied bool
	// IsError is set when the tool returned an MCP isError result.
	IsError bool
	// Turn is the index in Trace.Turns of the turn that requested the
	// call.
	Turn int
	// UserTurn is the index of the user turn of a conversation the call
	// was made to answer (0: the opening prompt); 0 for a single request.
	UserTurn int
	// Result is the text the call gave back to the model
	// (contains_golden_results compares it with the golden's).
	Result string
}

// Trace is what the scorer sees of one run.
type Trace struct {
	Calls []Call
	// Answer is the model's final assistant message content.
	Answer string
	// Turns holds the content of every model turn, in order; the last is
	// normally Answer. The scorer looks for call-shaped text in each (see
	// FindTextCalls). A golden trajectory has no turns: its Answer is
	// scanned instead.
	Turns []string
	// Thinking holds the thinking text of every model turn, by turn
	// index ("" for a turn without); calls written in it are found too,
	// but judged apart (TextCall.Thinking): the model thought of a call
	// and did not make it.
	Thinking []string
	// State holds what the state probes saw after the conversation, one
	// result per probe of Expectation.Probes for the run's cell. Nil means
	// not observed (a golden trajectory judged offline): expect.state is
	// then not judged. The engine sets it, possibly empty, whenever the
	// cell has probes.
	State []ProbeResult
	// TurnState holds, by user turn, what the probes of
	// expect.turns[i].state saw after the answer to that turn (one result
	// per probe of Expectation.TurnProbes); nil means not observed, and
	// so does a nil entry (a turn never answered).
	TurnState [][]ProbeResult
	// GoldenResults holds, by user turn, the results of the golden's
	// calls replayed on a fresh server after the case's setup (for
	// contains_golden_results); nil means not observed.
	GoldenResults [][]string
	// Answers holds, for a conversation, the model's final answer to each
	// user turn it answered, in order (the last is Answer); nil for a
	// single request, whose one answer is Answer.
	Answers []string
	// Verdicts holds the judge's verdicts on the judged answers of the
	// run's cell (Expectation.Judged), by Judged.Where. A judged answer
	// without one is not judged: the verdict lists it as Unjudged.
	Verdicts map[string]JudgeVerdict
}

// TextCall is a tool call the model wrote as text: markup of a known
// family (package textcall) that decodes to a tool name and an arguments
// object, found in a turn's content. The server's chat-template parser
// did not turn it into a call, so it was never executed.
type TextCall struct {
	// Turn is the index of the turn in Trace.Turns; -1 when the text is
	// an Answer with no recorded turns (a golden trajectory).
	Turn   int            `json:"turn"`
	Family string         `json:"family"` // e.g. "hermes" for <tool_call>…</tool_call>
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args"`
	// Thinking is set for a call written in the turn's thinking text
	// rather than its content: never a reason of the verdict.
	Thinking bool `json:"thinking,omitempty"`
}

// Cell names the matrix cell a run belongs to (package schema/cell holds
// the one definition and the table of its axes); `when` overrides in a
// case select on its scoring axes (cell.ScoringNames). The zero value of
// a field matches only a `when` entry that does not name that field.
type Cell = cell.Cell

// Reason codes a failing verdict may carry. The engine adds its own
// (max_iterations) when the loop, not the scorer, decides the failure.
const (
	ReasonMissingCall    = "missing_call"    // an expected call has no matching actual call
	ReasonWrongArgs      = "wrong_args"      // the tool was called, but no call's arguments matched
	ReasonForbiddenCall  = "forbidden_call"  // a tool listed in forbid was attempted
	ReasonUnexpectedCall = "unexpected_call" // a call where none was allowed (no_calls)
	ReasonTooManyCalls   = "too_many_calls"  // more calls than max_calls
	ReasonAnswerMismatch = "answer_mismatch" // the final answer failed its matcher
	ReasonMalformedCall  = "malformed_call"  // arguments not a JSON object
	ReasonUnofferedCall  = "unoffered_call"  // a call to a tool that was not offered to the model
	ReasonMaxIterations  = "max_iterations"  // the loop ran out of turns before a final answer
	// ReasonUnparsedCall: the model wrote a tool call as text that the
	// server did not parse (see TextCall). It fails a no_calls case and a
	// call to a forbidden tool, and accompanies any other failure of a
	// run that has such text.
	ReasonUnparsedCall = "unparsed_call"
	// ReasonMissingTurn: expect.turns has rules for a user turn the
	// conversation never reached or never answered.
	ReasonMissingTurn = "missing_turn"
	// ReasonMaxTurns: a simulated user had not ended the conversation
	// with its stop marker after the case's user.max_turns user messages
	// (the engine's reason, as max_iterations).
	ReasonMaxTurns = "max_turns"
	// ReasonJudgeRejected: the judge (a model) failed an answer judged
	// by a rubric ({$judge: …}); the detail carries its reason.
	ReasonJudgeRejected = "judge_rejected"
)

// Reason is one cause of failure with a path-bearing explanation, e.g.
// {Code: "wrong_args", Detail: `calls[0].args.sql: want string containing "Engineering", got "SELECT 1"`}.
type Reason struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// ReasonCodes returns the distinct codes of reasons, in order of first
// appearance: a run counts once per code however many of its checks
// failed that way.
func ReasonCodes(reasons []Reason) []string {
	var codes []string
	for _, r := range reasons {
		if !slices.Contains(codes, r.Code) {
			codes = append(codes, r.Code)
		}
	}
	return codes
}

// Verdict is the judgement of one trace: by a case's expectations
// (Expect.Score), and by the scorer of a whole run (matchers/score, which
// adds the reasons of running out of turns), the one verdict type of
// the module; a run record stores it as its outcome and reasons.
type Verdict struct {
	Pass    bool
	Reasons []Reason
	// TextCalls are the calls the model wrote as text, whatever the
	// verdict; the engine stores them on the run record.
	TextCalls []TextCall
	// Unjudged lists the judged answers (Judged.Where) the trace held no
	// verdict for: Pass says only what the rest decided. A run scored so
	// has no verdict yet (package matchers/score makes it an error); a
	// golden judged offline has its judged answers left to judge-check.
	Unjudged []string
}
