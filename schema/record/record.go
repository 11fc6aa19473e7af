// Package record defines the run record, one line of runs.jsonl, and reads
// and writes streams of them.
//
// A record is self-contained: scoring, reports and diffs are computed from
// records alone, never from a model or a server. Readers stream records in
// the manner of bufio.Scanner (Scan/Record/Err), decoding lazily: Record
// the record, ID only the run id. Lines are decoded with
// github.com/goccy/go-json, or with encoding/json where goccy would not
// give its result (decode.go). A line that does not parse
// is reported as a *SyntaxError and skipped, never an abort, so a truncated
// last line left by a crash costs one run, not the file. A line longer than
// MaxLineBytes is such a line too. Writers bound what a record keeps
// (MaxFieldBytes per string, MaxRecordBytes per record; see Marshal).
package record

import (
	"time"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/cell"
)

// Version is the format version written in every record. Readers accept
// records with Version <= this.
//
// Version 2 (this one): run ids hash the case's run digest (what the model
// sees) instead of its whole content; a record carries the digest of the
// scoring rules that judged it (Rules) and whether the loop ran out of
// turns (Trace.OutOfTurns), so that it can be re-scored from the record
// alone. A version 1 record read back gets OutOfTurns from its reasons (a
// version 1 run that ran out of turns always failed with max_iterations)
// and no Rules.
const Version = 2

// Outcome is how a run ended: the one vocabulary of records, scores,
// reports and diffs.
type Outcome string

// Outcome values.
const (
	Pass  Outcome = "pass"  // the scorer accepted the trace
	Fail  Outcome = "fail"  // the scorer rejected it; Reasons say why
	Error Outcome = "error" // infrastructure failure; never a model failure
)

// OutcomeOf is the outcome of a scored run: Pass if the scorer accepted
// its trace, else Fail.
func OutcomeOf(pass bool) Outcome {
	if pass {
		return Pass
	}
	return Fail
}

// KnownOutcome reports whether s is Pass, Fail or Error.
func KnownOutcome[S ~string](s S) bool {
	o := Outcome(s)
	return o == Pass || o == Fail || o == Error
}

// Record is one finished run.
type Record struct {
	Version int      `json:"version"`
	ID      string   `json:"id"`   // deterministic hash of (case id, case run digest, cell)
	Case    string   `json:"case"` // case id
	Tags    []string `json:"tags,omitempty"`
	Cell    Cell     `json:"cell"`

	Outcome Outcome           `json:"outcome"`           // Pass | Fail | Error
	Reasons []matchers.Reason `json:"reasons,omitempty"` // for Fail
	Error   *InfraError       `json:"error,omitempty"`   // for Error
	// Rules is the digest of the scoring rules that judged the trace (the
	// case's expectation, the text-call families and the scorer's
	// version; see package matchers/score); "" for an error record, and for
	// a version 1 record.
	Rules string `json:"rules,omitempty"`
	// Attempts counts tries, 1 when the first succeeded; infrastructure
	// errors are retried up to the config's limit.
	Attempts int `json:"attempts"`

	Trace  Trace  `json:"trace"`
	Tokens Tokens `json:"tokens"`
	// Throttled is what rate limits cost the run, per model host: the
	// throttled answers (429, Anthropic's 529, or 503 with Retry-After) and the time spent
	// waiting them out. Each was followed by the same request again, so
	// it cost no attempt; empty when the run was never throttled.
	Throttled []Throttle `json:"throttled,omitempty"`
	// State is what the case's state probes (expect.state) saw after the
	// conversation; nil when the run's cell has none.
	State *State `json:"state,omitempty"`
	// Judged holds the judge's verdicts on the run's judged answers
	// ({$judge: RUBRIC}), in the order of the case's expectation; empty
	// when the run's cell has none.
	Judged []Judgement `json:"judged,omitempty"`

	Started  time.Time `json:"started"`
	Duration Millis    `json:"duration_ms"`

	// Truncated lists the values stored only in part because they were
	// longer than MaxFieldBytes (or the record than MaxRecordBytes);
	// scoring saw them whole.
	Truncated []Truncation `json:"truncated,omitempty"`
}

// Cell is the matrix cell of a run: one value per axis. It is
// schema/cell's Cell, whose JSON form is the record's "cell" object.
type Cell = cell.Cell

// InfraError describes an infrastructure failure: the backend, the MCP
// server, or a timeout, as opposed to a model mistake.
type InfraError struct {
	Kind    string `json:"kind"`    // backend | model_missing | mcp | timeout | cassette_miss | setup | internal
	Message string `json:"message"` // what happened, for a person
}

// Throttle is one host's rate limiting of one run.
type Throttle struct {
	Host     string `json:"host,omitempty"` // the host's base URL; "" for a backend without hosts
	Requests int    `json:"requests"`       // throttled answers
	Wait     Millis `json:"wait_ms"`        // time spent waiting
}

// Trace is everything the run did, in order.
type Trace struct {
	Offered []string `json:"offered"` // tool names offered to the model, in the order offered
	Turns   []Turn   `json:"turns"`
	Calls   []Call   `json:"calls"`
	Answer  string   `json:"answer"` // final assistant content ("" when none)
	// TextCalls are the tool calls the model wrote as text in its turns
	// (call-shaped markup the server did not parse), as the scorer found
	// them in the whole turn contents. A re-score recomputes them from
	// Turns (matchers.FindTextCalls); a turn stored in part (Truncated)
	// may then hide some.
	TextCalls []matchers.TextCall `json:"text_calls,omitempty"`
	// OutOfTurns is set when the loop stopped at limits.max_iterations
	// without a final answer, which fails the run whatever its calls.
	OutOfTurns bool `json:"out_of_turns,omitempty"`
	// Users are the user's messages of a conversation (a case with a user
	// block), in order, the opening first; empty for a single request.
	// Users[i] is answered by the model turns from Users[i].Before up to
	// the next sent user message.
	Users []UserTurn `json:"users,omitempty"`
	// OutOfUserTurns is set when a simulated user had not ended the
	// conversation with its stop marker after the case's user.max_turns
	// user messages, which fails the run whatever its calls (max_turns).
	OutOfUserTurns bool `json:"out_of_user_turns,omitempty"`
	// Setup holds the case's setup calls (Case.Setup) as made on the
	// run's session before the conversation, with their results; the
	// model never saw them.
	Setup []SetupCall `json:"setup,omitempty"`
}

// SetupCall is one setup call the harness made before the conversation.
type SetupCall struct {
	Tool    string         `json:"tool"`
	Args    map[string]any `json:"args,omitempty"`
	Result  string         `json:"result"`
	IsError bool           `json:"is_error,omitempty"`
}

// UserTurn is one message of the user in a conversation.
type UserTurn struct {
	// Before is the index in Trace.Turns of the first model turn after
	// this message (len(Turns) at the time it was written).
	Before  int    `json:"before"`
	Content string `json:"content"`
	// From says who wrote it: UserFromCase (the opening prompt),
	// UserFromScript (user.replies) or UserFromSimulator.
	From string `json:"from"`
	// Model is the simulator's model, for From == UserFromSimulator.
	Model string `json:"model,omitempty"`
	// Stop is set when the message carried the simulator's stop marker:
	// it ended the conversation and was not sent.
	Stop bool `json:"stop,omitempty"`
	// Unsent is set for a message the model never received: a stop
	// message, or the simulator's message after the last allowed turn.
	Unsent  bool    `json:"unsent,omitempty"`
	Tokens  *Tokens `json:"tokens,omitempty"`     // the simulator's, when it said
	Latency Millis  `json:"latency_ms,omitempty"` // the simulator's request
	Host    string  `json:"host,omitempty"`       // the simulator's host, as Turn.Host
	// Added are the tools first offered with this message
	// (user.add_tools), in order.
	Added []string `json:"added,omitempty"`
}

// UserTurn.From values.
const (
	UserFromCase      = "case"
	UserFromScript    = "script"
	UserFromSimulator = "simulator"
)

// Turn is one model reply.
type Turn struct {
	Content   string `json:"content,omitempty"`
	Thinking  string `json:"thinking,omitempty"`
	ToolCalls int    `json:"tool_calls"` // calls requested in this turn; see Trace.Calls
	Tokens    Tokens `json:"tokens"`
	Latency   Millis `json:"latency_ms"`
	// DoneReason is the backend's stop reason when it gives one.
	DoneReason string `json:"done_reason,omitempty"`
	// Host is the model host that served the turn (its base URL), for a
	// backend with hosts; "" for replay.
	Host string `json:"host,omitempty"`
}

// Call is one tool call the model attempted.
type Call struct {
	Turn int            `json:"turn"` // index into Trace.Turns
	Tool string         `json:"tool"`
	Args map[string]any `json:"args,omitempty"` // nil when the arguments were not an object
	// RawArgs holds the arguments as the model sent them when they were
	// not a JSON object.
	RawArgs    string `json:"raw_args,omitempty"`
	Malformed  bool   `json:"malformed,omitempty"`
	NotOffered bool   `json:"not_offered,omitempty"`
	// NotExecuted says why toolward did not send a well-formed call to an
	// offered tool to the server: "" when it did, NotExecutedTurnLimit
	// for a call past the calls one turn may execute. The model got an
	// error result; the call still counts as attempted.
	NotExecuted string `json:"not_executed,omitempty"`
	// Confirm is the simulated user's decision: "" (no gate), Approved
	// or Denied. Elicitation requests made by the server during the
	// call are recorded in Elicitations.
	Confirm      string   `json:"confirm,omitempty"`
	Elicitations []string `json:"elicitations,omitempty"` // "accept" | "decline" per request
	Result       string   `json:"result"`                 // text given back to the model
	Structured   any      `json:"structured,omitempty"`   // MCP structuredContent
	IsError      bool     `json:"is_error,omitempty"`
	Latency      Millis   `json:"latency_ms"`
	// Unoffered is set for a call to a tool the server has but the case
	// did not offer, executed all the same because the case says
	// execute_unoffered (NotOffered is then false: it was not refused).
	Unoffered bool `json:"unoffered,omitempty"`
}

// State is what the harness's state probes saw after a run, on the run's
// server session, and what they are compared with.
type State struct {
	// Digest identifies what the probes measured (package engine/score,
	// Rules.ProbeDigest): the probe calls and, for equals probes, the
	// calls replayed to give the state compared with. Stored results are
	// judged again only while the case's probes still have this digest;
	// an edited probe call makes them stale, and the run runs again.
	Digest string  `json:"digest"`
	Probes []Probe `json:"probes"`
	// Turns holds, by user turn, the probes of expect.turns[i].state
	// taken after the answer to that turn; nil for a turn without probes
	// or never answered.
	Turns [][]Probe `json:"turns,omitempty"`
	// GoldenResults holds, by user turn, the results of the golden's
	// calls replayed on a fresh server after the case's setup, when the
	// case's rules compare them (contains_golden_results).
	GoldenResults [][]string `json:"golden_results,omitempty"`
}

// Probe is one state probe's call and result.
type Probe struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args,omitempty"`
	// Got is the probe's result after the run.
	Got ProbeValue `json:"got"`
	// Want, for an equals probe, is the same probe's result on a fresh
	// server after the golden's calls (equals: golden) or none (equals:
	// initial).
	Want *ProbeValue `json:"want,omitempty"`
}

// ProbeValue is one probe call's result: the structured content, else
// the text decoded as JSON when it is JSON, else the text.
type ProbeValue struct {
	Value   any  `json:"value"`
	IsError bool `json:"is_error,omitempty"`
}

// Scored converts the probe results into what the scorer sees.
func (s *State) Scored() []matchers.ProbeResult {
	if s == nil {
		return nil
	}
	return scoredProbes(s.Probes)
}

// ScoredTurns converts the per-turn probe results into what the scorer
// sees (matchers.Trace.TurnState); nil when there are none.
func (s *State) ScoredTurns() [][]matchers.ProbeResult {
	if s == nil || s.Turns == nil {
		return nil
	}
	out := make([][]matchers.ProbeResult, len(s.Turns))
	for i, t := range s.Turns {
		if t != nil {
			out[i] = scoredProbes(t)
		}
	}
	return out
}

func scoredProbes(ps []Probe) []matchers.ProbeResult {
	out := make([]matchers.ProbeResult, len(ps))
	for i, p := range ps {
		out[i] = matchers.ProbeResult{Value: p.Got.Value, IsError: p.Got.IsError}
		if p.Want != nil {
			out[i].Want = &matchers.ProbeResult{Value: p.Want.Value, IsError: p.Want.IsError}
		}
	}
	return out
}

// Judgement is the judge's verdict on one judged answer of a run.
type Judgement struct {
	// Where names the expectation: "expect.answer" or
	// "expect.turns[i].answer".
	Where string `json:"where"`
	// Input is the digest of the judge's whole input (its model,
	// temperature, samples and messages: rubric, user messages, answer,
	// and calls when the rubric asks for them; package matchers/score,
	// JudgeInput). A verdict is reused only while the input a case gives
	// has this digest; an edited rubric asks the judge again.
	Input string `json:"input"`
	Model string `json:"model"`
	// ModelDigest is the judge model's digest, as the judge backend's
	// preflight reported it; "" when it reports none.
	ModelDigest string `json:"model_digest,omitempty"`
	// Pass is the majority of Votes; Reason is the reason of the first
	// vote that agrees with it.
	Pass   bool   `json:"pass"`
	Reason string `json:"reason"`
	// Votes are every sample's verdict, in seed order.
	Votes []Vote `json:"votes"`
}

// Unanimous reports whether every vote agreed.
func (j *Judgement) Unanimous() bool {
	for _, v := range j.Votes {
		if v.Pass != j.Pass {
			return false
		}
	}
	return true
}

// Vote is one judge request's verdict.
type Vote struct {
	Pass    bool   `json:"pass"`
	Reason  string `json:"reason"`
	Seed    int    `json:"seed"`
	Tokens  Tokens `json:"tokens"`
	Latency Millis `json:"latency_ms"`
	Host    string `json:"host,omitempty"`
}

// NotExecutedTurnLimit is Call.NotExecuted for a call past the number of
// calls of one turn the agent executes (engine/agent.DefaultMaxCallsPerTurn).
const NotExecutedTurnLimit = "turn_call_limit"

// The simulated user's decisions on a gated call (Call.Confirm).
const (
	Approved = "approved"
	Denied   = "denied"
)

// Tokens counts prompt (in) and generated (out) tokens.
type Tokens struct {
	In  int `json:"in"`
	Out int `json:"out"`
	// Cached is the part of In the backend reports as read from its
	// prompt cache (Anthropic's cache_read_input_tokens), priced apart.
	Cached int `json:"cached,omitempty"`
}

// Millis is a duration stored as float milliseconds.
type Millis float64

// FromDuration converts a time.Duration.
func FromDuration(d time.Duration) Millis { return Millis(float64(d) / float64(time.Millisecond)) }

// Duration converts back.
func (m Millis) Duration() time.Duration {
	return time.Duration(float64(m) * float64(time.Millisecond))
}

// Scored converts the trace into what the scorer sees. For a
// conversation, each call is tagged with the user turn it answers and
// Answers holds the final answer to each answered user turn.
func (t Trace) Scored() matchers.Trace {
	out := matchers.Trace{Answer: t.Answer, Calls: make([]matchers.Call, len(t.Calls)), Turns: make([]string, len(t.Turns))}
	for i, tu := range t.Turns {
		out.Turns[i] = tu.Content
		if tu.Thinking != "" {
			if out.Thinking == nil {
				out.Thinking = make([]string, len(t.Turns))
			}
			out.Thinking[i] = tu.Thinking
		}
	}
	// userOf[k] is the user turn model turn k answers.
	var userOf []int
	if len(t.Users) > 0 {
		userOf = make([]int, len(t.Turns))
		sent := 0
		for _, u := range t.Users {
			if u.Unsent {
				continue
			}
			for k := max(u.Before, 0); k < len(userOf); k++ {
				userOf[k] = sent
			}
			sent++
		}
		// A user turn is answered by its last model turn when that turn
		// made no calls: the reply the user saw.
		for i := range sent {
			last := -1
			for k, ui := range userOf {
				if ui == i {
					last = k
				}
			}
			if last < 0 || t.Turns[last].ToolCalls > 0 {
				break
			}
			out.Answers = append(out.Answers, t.Turns[last].Content)
		}
	}
	for i, c := range t.Calls {
		out.Calls[i] = matchers.Call{
			Tool: c.Tool, Args: c.Args, Malformed: c.Malformed,
			NotOffered: c.NotOffered, Denied: c.Confirm == Denied, IsError: c.IsError, Turn: c.Turn,
			Result: c.Result,
		}
		if c.Turn >= 0 && c.Turn < len(userOf) {
			out.Calls[i].UserTurn = userOf[c.Turn]
		}
	}
	return out
}

// upgrade fills in what a record of an older format version does not
// store, from what it does.
func (r *Record) upgrade() {
	if r.Version >= 2 || r.Outcome != Fail {
		return
	}
	for _, re := range r.Reasons {
		if re.Code == matchers.ReasonMaxIterations {
			r.Trace.OutOfTurns = true
			return
		}
	}
}
