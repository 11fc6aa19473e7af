package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/toolward/toolward/matchers"
)

// Case is one case file document (cases/**/*.yaml). ParseCases reads
// it; its yaml tags write it (the BFCL importer and `toolward init`
// write cases as these types). Each field with a cue tag is a field of
// #CaseFields in toolward.cue, generated from it (see the package doc),
// and its doc comment is the field's user-facing text. The loader fills
// File/Line/Col and
// RunDigest; Expect is kept raw here (its shape is matchers.Expect, whose
// fields generate #Expect) and compiled by package matchers
// (matchers.CompileExpect) so that every consumer scores with the same
// compiled tree.
type Case struct {
	// The case's name, unique in the suite (checked in Go): results,
	// filters and cassettes name the case by it.
	ID string `json:"id" yaml:"id" cue:"string & =~\"^[A-Za-z0-9][A-Za-z0-9_.:/-]*$\""`
	// What the case checks, for the reports.
	Description string `json:"description,omitempty" yaml:"description,omitempty" cue:"string"`
	// Labels for filters (tag=...) and the reports' breakdowns.
	Tags []string `json:"tags,omitempty" yaml:"tags,omitempty" cue:"[...string]"`
	// The user's message; a case has exactly one of prompt and messages.
	Prompt string `json:"prompt,omitempty" yaml:"prompt,omitempty" cue:"string & !=\"\""`
	// The system prompt.
	System string `json:"system,omitempty" yaml:"system,omitempty" cue:"string"`
	// A scripted conversation prefix, instead of prompt.
	Messages []Message `json:"messages,omitempty" yaml:"messages,omitempty" cue:"[#Message, ...#Message]"`
	// Tools always offered; must include every tool of expect.calls and
	// of the when overrides' calls (checked in Go).
	Needs []string `json:"needs,omitempty" yaml:"needs,omitempty" cue:"[...#Name]"`
	// Tools never offered to this case as distractors (count and all
	// subsets): tools that would answer it too, so that calling them is no
	// mistake. Must not overlap needs (checked in Go).
	Avoid []string `json:"avoid,omitempty" yaml:"avoid,omitempty" cue:"[...#Name]"`
	// How the user goes on after each final answer: a conversation.
	// Without it the run ends at the first final answer.
	User *User `json:"user,omitempty" yaml:"user,omitempty" cue:"#User"`
	// Calls toolward makes on the run's server session before the
	// conversation, and on the fresh session of every golden replay
	// before the golden's calls, never shown to the model: the loading
	// of the case's world (BFCL's initial_config). They may call
	// probe-only tools. A setup call whose result is an error stops the
	// run as an infrastructure error (kind setup), never the model's
	// failure.
	Setup []GoldenCall `json:"setup,omitempty" yaml:"setup,omitempty" cue:"[...#GoldenCall]"`
	// true: a call to a tool the server has but the case did not offer
	// is executed like an offered one (BFCL runs every function of an
	// involved class) and recorded as unoffered, instead of refused and
	// failed with unoffered_call. Probe-only tools are never executed
	// for the model.
	ExecuteUnoffered bool `json:"execute_unoffered,omitempty" yaml:"execute_unoffered,omitempty" cue:"bool"`
	// How a run of this case is judged.
	Expect map[string]any `json:"expect" yaml:"expect" cue:"#Expect"` // without the goldens of when entries (see WhenGoldens)
	// One known-good trajectory; validate proves the expectations accept
	// it in the default cell: temperature 0, tools "needed", confirm
	// "auto", descriptions "default", no model (checked in Go).
	Golden *Golden `json:"golden,omitempty" yaml:"golden,omitempty" cue:"#Golden"`
	// Answers labelled by a person, for measuring the judge of the
	// case's judged answers ({$judge: …}): `toolward judge-check` puts
	// each to the judge and reports how often it agrees. Not shown to
	// the model, and not part of how runs are judged.
	Calibration []Labelled `json:"calibration,omitempty" yaml:"calibration,omitempty" cue:"[...#Labelled]"`
	// WhenGoldens are the golden trajectories of `when` entries
	// (expect.when[i].golden), taken out of Expect when the case is
	// loaded. Like Golden they judge no run, so they are not part of its
	// RunDigest. A writer puts them in Expect.
	WhenGoldens []WhenGolden `json:"when_goldens,omitempty" yaml:"-"`

	// Where the case was read from. Not part of the case's identity.
	File string `json:"-" yaml:"-"`
	Line int    `json:"-" yaml:"-"`
	Col  int    `json:"-" yaml:"-"`
	// RunDigest is RunDigest(c), filled by the loader: it changes when
	// what the model sees changes, so run ids follow it, and not when only
	// how runs are judged (expect, golden) or described (description,
	// tags) changes.
	RunDigest string `json:"-" yaml:"-"`
	// Expectation is Expect compiled by the loader (matchers.CompileExpect);
	// nil for a Case built by hand.
	Expectation *matchers.Expectation `json:"-" yaml:"-"`
	// Warnings are doubts the loader has about the case that are not
	// errors (a when entry overriding the expectations with no golden of
	// its own to prove a run can pass it); validate prints them.
	Warnings Errors `json:"-" yaml:"-"`

	idLine, idCol int // position of the id field, for duplicate reports
}

// Message is one message of a scripted conversation prefix.
type Message struct {
	Role    string `json:"role" yaml:"role" cue:"\"system\" | \"user\" | \"assistant\""`
	Content string `json:"content" yaml:"content" cue:"string"`
}

// User continues a conversation after each final answer: with scripted
// Replies, or as a simulated user following Instructions. Exactly one is
// set.
type User struct {
	// Scripted: one user message after each final answer, in order; the
	// conversation ends when the last one is answered.
	Replies []string `json:"replies,omitempty" yaml:"replies,omitempty" cue:"[#Reply, ...#Reply]"`
	// Simulated: instructions for the user model the run config names
	// (simulator): who the user is, what they want, what to reveal and
	// when. The simulator ends the conversation with its stop marker.
	Instructions string `json:"instructions,omitempty" yaml:"instructions,omitempty" cue:"string & !=\"\""`
	// With instructions only (checked in Go): the most user messages the
	// model receives, the opening prompt included; default 6. A
	// conversation still going after the answer to the last one fails
	// with max_turns. At most 100 (MaxMaxTurns).
	MaxTurns int `json:"max_turns,omitempty" yaml:"max_turns,omitempty" cue:"int & >=2 & <=100"` // 0 means DefaultMaxTurns
	// With replies only (checked in Go): tools first offered with a
	// later user message, beyond needs (BFCL's miss_func holds some
	// functions out until a turn).
	AddTools []AddTools `json:"add_tools,omitempty" yaml:"add_tools,omitempty" cue:"[...#AddTools]"`
}

// AddTools are tools offered from one user turn of a scripted
// conversation on.
type AddTools struct {
	// The user turn from which they are offered: 1 is the first reply;
	// at most the number of replies (checked in Go).
	Turn int `json:"turn" yaml:"turn" cue:"int & >=1"`
	// The server's tools offered from then on, in this order after the
	// tools already offered.
	Tools []string `json:"tools" yaml:"tools" cue:"[#Name, ...#Name]"`
	// The description the model sees for some of them, instead of the
	// server's (BFCL's held-out functions lack the note the others get);
	// keys among tools (checked in Go).
	Descriptions map[string]string `json:"descriptions,omitempty" yaml:"descriptions,omitempty" cue:"{[#Name]: string}"`
}

// AddedAt returns the tools added at user turn n (AddTools with Turn n),
// in order, and their description overrides.
func (u *User) AddedAt(n int) (tools []string, descs map[string]string) {
	if u == nil {
		return nil, nil
	}
	for _, a := range u.AddTools {
		if a.Turn != n {
			continue
		}
		tools = append(tools, a.Tools...)
		for k, v := range a.Descriptions {
			if descs == nil {
				descs = map[string]string{}
			}
			descs[k] = v
		}
	}
	return tools, descs
}

// DefaultMaxTurns is User.MaxTurns when a case gives none.
const DefaultMaxTurns = 6

// MaxMaxTurns is the largest user.max_turns: every turn sends the whole
// conversation again, so its cost grows with the square of the turns.
// It is the bound in User's cue tag.
const MaxMaxTurns = 100

// Simulated reports whether the user is a simulator (Instructions).
func (u *User) Simulated() bool { return u != nil && u.Instructions != "" }

// Turns is the most user messages the model can receive in the
// conversation, the opening included: 1 without a user block.
func (u *User) Turns() int {
	switch {
	case u == nil:
		return 1
	case u.Simulated():
		if u.MaxTurns > 0 {
			return u.MaxTurns
		}
		return DefaultMaxTurns
	}
	return len(u.Replies) + 1
}

// turnsFrom says where Turns comes from, for messages.
func (u *User) turnsFrom() string {
	if u.Simulated() {
		return "user.max_turns"
	}
	return fmt.Sprintf("the opening and %d replies", len(u.Replies))
}

// Golden is one known-good trajectory; validate proves the case's own
// expectations accept it. A conversation's golden has Turns instead of
// Calls and Answer.
type Golden struct {
	// A golden still to be written (a `toolward init` skeleton): validate
	// reports "fill in the golden" with this note until it is removed
	// (checked in Go).
	Todo string `json:"todo,omitempty" yaml:"todo,omitempty" cue:"string & !=\"\""` // ParseCases reports it, so such a case never loads
	// The calls made, in order.
	Calls []GoldenCall `json:"calls,omitempty" yaml:"calls,omitempty" cue:"[...#GoldenCall]"`
	// The final answer.
	Answer string `json:"answer,omitempty" yaml:"answer,omitempty" cue:"string"`
	// A conversation's golden: one {calls, answer} per user turn, the
	// opening first. As many as the case's scripted replies plus one, or
	// at most user.max_turns for a simulated user; not with calls or
	// answer, and only for a case with a user block (checked in Go).
	Turns []GoldenTurn `json:"turns,omitempty" yaml:"turns,omitempty" cue:"[#GoldenTurn, ...#GoldenTurn]"`
}

// AllCalls returns the golden's calls in order: Calls, or for a
// conversation the calls of every turn, one after the other.
func (g *Golden) AllCalls() []GoldenCall {
	if len(g.Turns) == 0 {
		return g.Calls
	}
	var out []GoldenCall
	for _, t := range g.Turns {
		out = append(out, t.Calls...)
	}
	return out
}

// GoldenTurn is the golden of one user turn: the calls made answering
// it and the answer.
type GoldenTurn struct {
	Calls  []GoldenCall `json:"calls,omitempty" yaml:"calls,omitempty" cue:"[...#GoldenCall]"`
	Answer string       `json:"answer" yaml:"answer" cue:"string"`
}

// Labelled is one answer a person judged against a case's rubric.
type Labelled struct {
	// The answer, as a model might give it.
	Answer string `json:"answer" yaml:"answer" cue:"string"`
	// The person's verdict.
	Verdict string `json:"verdict" yaml:"verdict" cue:"\"pass\" | \"fail\""`
	// The judged answer whose rubric it is for: expect.answer (the
	// default) or expect.turns[i].answer; it must have {$judge: …}
	// (checked in Go).
	Where string `json:"where,omitempty" yaml:"where,omitempty" cue:"=~\"^expect[.](answer|turns\\\\[[0-9]+\\\\][.]answer)$\""`
	// Why the person gave the verdict, for the report.
	Note string `json:"note,omitempty" yaml:"note,omitempty" cue:"string"`
}

// LabelledWhere is Labelled.Where when it names none.
const LabelledWhere = "expect.answer"

// At returns the judged answer l is for.
func (l *Labelled) At() string {
	if l.Where == "" {
		return LabelledWhere
	}
	return l.Where
}

// WhenGolden is the golden trajectory of one `when` entry; validate
// proves the expectations accept it in the cell the entry selects (see
// WhenCell).
type WhenGolden struct {
	When   int    `json:"when"` // index of the entry in expect.when
	Golden Golden `json:"golden"`
}

// GoldenCall is one call of a golden trajectory, as a model would make
// it.
type GoldenCall struct {
	Tool string `json:"tool" yaml:"tool" cue:"#Name"`
	// The arguments, as JSON values.
	Args map[string]any `json:"args,omitempty" yaml:"args,omitempty" cue:"{...}"`
}

// Config is a decoded, schema-checked run config (configs/*.cue) with
// defaults from #Config filled in.
type Config struct {
	Name    string   `json:"name"`
	Cases   []string `json:"cases"` // glob patterns (** allowed), relative to the working directory
	Server  Server   `json:"server"`
	Backend Backend  `json:"backend"`
	// Simulator plays the user of cases with user.instructions; nil when
	// the config names none.
	Simulator *Simulator `json:"simulator,omitempty"`
	// Judge decides the judged answers ({$judge: RUBRIC}) of cases; nil
	// when the config names none.
	Judge  *Judge `json:"judge,omitempty"`
	Matrix Matrix `json:"matrix"`
	// DescriptionSets maps a description set name to a YAML file of
	// tool name -> description. A name used in matrix.descriptions that is
	// absent here resolves to fixtures/descriptions/<name>.yaml; "default"
	// is always the server's own descriptions.
	DescriptionSets map[string]string `json:"description_sets,omitempty"`
	// OptionsSets maps an options set name (a value of matrix.options) to
	// the backend options its cells send; "default" sends none.
	OptionsSets map[string]OptionsSet `json:"options_sets,omitempty"`
	Limits      Limits                `json:"limits"`
	Output      string                `json:"output"` // default "results"
	// Filter keeps only the runs matching every key=glob entry, with the
	// syntax of `toolward run --filter` (e.g. "case=sql-*", "tag=demo");
	// entries with the same key OR together. Command-line filters narrow
	// the result further.
	Filter []string `json:"filter,omitempty"`
	// Prices maps a model to its price per million tokens.
	Prices map[string]Price `json:"prices,omitempty"`

	File string `json:"-"` // the config file it came from
}

// Server says which MCP server a run talks to; exactly one field is set.
// OAuth is an OAuth client of a url server's authorization server that
// needs no user: its secret is read from the environment variable
// ClientSecretEnv when a token is needed, and never written anywhere.
type OAuth struct {
	ClientID        string `json:"client_id"`
	ClientSecretEnv string `json:"client_secret_env"`
	// Scope is asked for; "" means the scope the server names in its
	// 401 or its metadata, if any.
	Scope string `json:"scope,omitempty"`
}

type Server struct {
	Builtin *Builtin          `json:"builtin,omitempty"`
	Command []string          `json:"command,omitempty"` // stdio subprocess
	Env     map[string]string `json:"env,omitempty"`     // extra environment for Command
	URL     string            `json:"url,omitempty"`     // streamable HTTP endpoint
	Headers map[string]string `json:"headers,omitempty"` // extra HTTP headers for URL (e.g. Authorization)
	// OAuth, with URL, gets the server's access token by the OAuth client
	// credentials grant (engine/session's oauth.go).
	OAuth *OAuth `json:"oauth,omitempty"`

	// InheritEnv passes toolward's whole environment to Command; false
	// passes only a small allow-list (session.InheritedEnv) plus Env.
	InheritEnv bool `json:"inherit_env,omitempty"`

	// Isolation says how runs are kept from each other's server state:
	// "" or IsolationShared (runs share whatever the server keeps; pooled
	// connections), IsolationRun (command: a fresh process per run, in a
	// fresh temporary directory) or IsolationSession (url: a fresh MCP
	// session per run, for servers that keep state per session). The
	// builtin server always gives each run a fresh sandbox.
	Isolation string `json:"isolation,omitempty"`
	// Seed, with IsolationRun, is a directory whose contents are copied
	// into each run's directory before the server starts.
	Seed string `json:"seed,omitempty"`
	// Warm, with IsolationRun, is how many server processes are kept
	// started ahead of the runs that need them; 0 means the job's number
	// of workers.
	Warm int `json:"warm,omitempty"`
	// Reset, when set, is done before each run (and before each golden
	// replay of a state probe) on the run's connection.
	Reset *Reset `json:"reset,omitempty"`
	// ProbeOnly names tools kept from the model (never offered, whatever
	// the tool subset) that state probes may call. Tools the server marks
	// so itself (ProbeOnlyMeta in their _meta) are kept from it too.
	ProbeOnly []string `json:"probe_only,omitempty"`
}

// Isolation modes of a server.
const (
	IsolationShared  = "shared"
	IsolationRun     = "run"
	IsolationSession = "session"
)

// RunDirVar is replaced, in a command server's arguments and server.env
// values under isolation "run", by the run's fresh directory.
const RunDirVar = "{run_dir}"

// NamesRunDir reports whether a command server's arguments or env values
// name RunDirVar: the server needs isolation "run" to be given one.
func (s Server) NamesRunDir() bool {
	return slices.ContainsFunc(s.Command, func(a string) bool { return strings.Contains(a, RunDirVar) }) ||
		slices.ContainsFunc(slices.Collect(maps.Values(s.Env)), func(v string) bool { return strings.Contains(v, RunDirVar) })
}

// ProbeOnlyMeta is the key of a tool's MCP _meta that, set to true, marks
// it as a state tool for probes: toolward never offers it to the model.
const ProbeOnlyMeta = "toolward/probe_only"

// Reset is what resets a server's state before a run: one tool call, or
// one HTTP request (any 2xx answer is success).
type Reset struct {
	Tool   string         `json:"tool,omitempty"`
	Args   map[string]any `json:"args,omitempty"`
	HTTP   string         `json:"http,omitempty"`   // URL
	Method string         `json:"method,omitempty"` // default POST
}

// SharesState reports whether the runs of a job against s can see each
// other's writes: a command or url server with neither per-run isolation
// nor a reset. Runs with a reset still share the state while two are in
// flight (concurrency above 1).
func (s Server) SharesState() bool {
	if s.Builtin != nil || s.Isolation == IsolationRun || s.Isolation == IsolationSession {
		return false
	}
	return s.Reset == nil
}

// Simulator is the user model of simulated conversations.
type Simulator struct {
	Model       string  `json:"model"`
	Temperature float64 `json:"temperature"`
	// Backend answers the simulator's requests; nil means the config's
	// backend.
	Backend *Backend `json:"backend,omitempty"`
	Stop    string   `json:"stop"`   // the marker that ends the conversation
	System  string   `json:"system"` // system prompt; {instructions} and {stop} are replaced
}

// Judge is the model that decides judged answers.
type Judge struct {
	Model       string  `json:"model"`
	Temperature float64 `json:"temperature"`
	// Backend answers the judge's requests; nil means the config's
	// backend.
	Backend *Backend `json:"backend,omitempty"`
	// Samples is how many times each answer is judged (seeds 1 to
	// Samples); the majority decides.
	Samples int    `json:"samples"`
	System  string `json:"system"` // the judge's system prompt
}

// Builtin configures the bundled server hosted in-process.
type Builtin struct {
	Catalogs []string `json:"catalogs,omitempty"` // extra distractor catalog files
	Corpus   string   `json:"corpus,omitempty"`   // like TOOLWARD_CORPUS
}

// Backend says which model backend answers; exactly one field is set.
type Backend struct {
	Ollama    *Ollama    `json:"ollama,omitempty"`
	OpenAI    *OpenAI    `json:"openai,omitempty"`
	Anthropic *Anthropic `json:"anthropic,omitempty"`
	Replay    string     `json:"replay,omitempty"` // cassette directory
}

// Anthropic configures the backend for Anthropic's Messages API.
type Anthropic struct {
	BaseURL string `json:"base_url"` // the API root; default https://api.anthropic.com
	// APIKeyEnv names the environment variable holding the API key
	// (default ANTHROPIC_API_KEY); "" sends none. The key is read at run
	// time and never stored.
	APIKeyEnv string            `json:"api_key_env"`
	Headers   map[string]string `json:"headers,omitempty"` // extra HTTP headers (no key)
	MaxTokens int               `json:"max_tokens"`        // default 4096
	// ToolChoice, when set, is sent with requests that offer tools.
	ToolChoice *ToolChoice `json:"tool_choice,omitempty"`
	// DisableParallelToolUse, when true, asks for at most one tool call
	// per reply.
	DisableParallelToolUse bool `json:"disable_parallel_tool_use,omitempty"`
	// ThinkingBudget, when positive, enables extended thinking with this
	// many tokens.
	ThinkingBudget int `json:"thinking_budget,omitempty"`
	// HostConcurrency caps requests in flight to each server; 0 means
	// the run's concurrency.
	HostConcurrency int `json:"host_concurrency,omitempty"`
	// BaseURLs, when set, is a pool of servers used instead of BaseURL.
	BaseURLs []PoolHost `json:"base_urls,omitempty"`
}

// ToolChoice is Anthropic's tool_choice as a config writes it: "auto",
// "any", "none", or {tool: NAME}.
type ToolChoice struct {
	Type string // auto | any | none | tool
	Tool string // the tool's name, with Type "tool"
}

// UnmarshalJSON reads "auto", "any", "none" or {"tool": NAME}.
func (tc *ToolChoice) UnmarshalJSON(b []byte) error {
	if s := bytes.TrimSpace(b); len(s) > 0 && s[0] == '"' {
		*tc = ToolChoice{}
		return json.Unmarshal(s, &tc.Type)
	}
	var w struct {
		Tool string `json:"tool"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return err
	}
	*tc = ToolChoice{Type: "tool", Tool: w.Tool}
	return nil
}

// MarshalJSON writes the choice as a config would say it.
func (tc ToolChoice) MarshalJSON() ([]byte, error) {
	if tc.Type == "tool" {
		return json.Marshal(map[string]string{"tool": tc.Tool})
	}
	return json.Marshal(tc.Type)
}

// OpenAI configures the backend for OpenAI-compatible servers.
type OpenAI struct {
	BaseURL string `json:"base_url"` // the API root; default http://127.0.0.1:8080/v1
	// APIKeyEnv names the environment variable holding the API key; ""
	// sends none. The key is read at run time and never stored.
	APIKeyEnv string            `json:"api_key_env,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"` // extra HTTP headers (no Authorization)
	// Sent only when set: MaxTokens > 0, ToolChoice != "",
	// ParallelToolCalls != nil.
	MaxTokens         int    `json:"max_tokens,omitempty"`
	ToolChoice        string `json:"tool_choice,omitempty"` // auto | none | required
	ParallelToolCalls *bool  `json:"parallel_tool_calls,omitempty"`
	Stream            bool   `json:"stream"` // default true: server-sent events
	// HostConcurrency caps requests in flight to each server; 0 means
	// the run's concurrency.
	HostConcurrency int `json:"host_concurrency,omitempty"`
	// BaseURLs, when set, is a pool of servers used instead of BaseURL.
	BaseURLs []PoolHost `json:"base_urls,omitempty"`
}

// Ollama configures the Ollama backend.
type Ollama struct {
	Host      string `json:"host"`                 // default http://127.0.0.1:11434
	NumCtx    int    `json:"num_ctx,omitempty"`    // 0: the model's default
	KeepAlive string `json:"keep_alive,omitempty"` // e.g. "5m"; "": Ollama's default
	Think     bool   `json:"think,omitempty"`      // false: thinking off (sent explicitly)
	// HostConcurrency caps requests in flight to each host; 0 means the
	// run's concurrency.
	HostConcurrency int `json:"host_concurrency,omitempty"`
	// Hosts, when set, is a pool of hosts used instead of Host.
	Hosts []PoolHost `json:"hosts,omitempty"`
}

// OptionsSet is one value of the options axis: backend options by
// backend kind, applied over the backend's own settings. Only the entry
// of the running backend is used.
type OptionsSet struct {
	Ollama    *OllamaOptions    `json:"ollama,omitempty"`
	OpenAI    *OpenAIOptions    `json:"openai,omitempty"`
	Anthropic *AnthropicOptions `json:"anthropic,omitempty"`
}

// OllamaOptions are per-cell Ollama settings; nil fields are not sent.
type OllamaOptions struct {
	// Think is true, false, or a level ("low", "medium", "high").
	Think         any      `json:"think,omitempty"`
	NumCtx        *int     `json:"num_ctx,omitempty"`
	NumPredict    *int     `json:"num_predict,omitempty"`
	TopP          *float64 `json:"top_p,omitempty"`
	TopK          *int     `json:"top_k,omitempty"`
	MinP          *float64 `json:"min_p,omitempty"`
	RepeatPenalty *float64 `json:"repeat_penalty,omitempty"`
}

// OpenAIOptions are per-cell settings of an OpenAI-compatible request;
// nil fields are not sent. Extra is merged into the request body.
type OpenAIOptions struct {
	ReasoningEffort string         `json:"reasoning_effort,omitempty"`
	TopP            *float64       `json:"top_p,omitempty"`
	MaxTokens       *int           `json:"max_tokens,omitempty"`
	Extra           map[string]any `json:"extra,omitempty"`
}

// AnthropicOptions are per-cell settings of a Messages API request.
type AnthropicOptions struct {
	ThinkingBudget *int     `json:"thinking_budget,omitempty"`
	TopP           *float64 `json:"top_p,omitempty"`
	MaxTokens      *int     `json:"max_tokens,omitempty"`
}

// ToolSubset is one value of the tools axis. With neither Count nor
// Include, Name must be "needed" (the case's needs) or "all".
type ToolSubset struct {
	Name    string   `json:"name"`
	Count   int      `json:"count,omitempty"`   // needs + deterministic distractors up to Count tools
	Include []string `json:"include,omitempty"` // needs + these tools
	Order   string   `json:"order,omitempty"`   // "shuffled" (default) | "given"
}

// Limits bound each run and the whole job.
type Limits struct {
	MaxIterations int      `json:"max_iterations"` // model turns per user message; default 8
	RunTimeout    Duration `json:"run_timeout"`    // default 120s, the whole run with its retries and waits; 0 means none
	CallTimeout   Duration `json:"call_timeout"`   // per tool call; default 30s
	Concurrency   int      `json:"concurrency"`    // workers; default 2
	Retries       int      `json:"retries"`        // infrastructure-error retries; default 2
	// ThrottleWait bounds one run's total wait for rate limits; default
	// 10m, 0 means none but the run's timeout.
	ThrottleWait Duration `json:"throttle_wait"`
}

// Duration is a time.Duration written in configs as a Go duration string.
type Duration struct{ time.Duration }

// MarshalJSON writes the duration as a string such as "2m0s".
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return &time.ParseError{Layout: "duration", Value: s, Message: ": want a string such as \"120s\""}
	}
	v, err := time.ParseDuration(s[1 : len(s)-1])
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// Price is what a model's tokens cost, in US dollars per million.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CachedInput prices input read from the backend's prompt cache; nil
	// means Input.
	CachedInput *float64 `json:"cached_input,omitempty"`
}

// Cost is what in input tokens (cached of them read from the prompt
// cache) and out output tokens cost at p, in US dollars.
func (p Price) Cost(in, cached, out int) float64 {
	cachedPrice := p.Input
	if p.CachedInput != nil {
		cachedPrice = *p.CachedInput
	}
	cached = min(max(cached, 0), in)
	return (float64(in-cached)*p.Input + float64(cached)*cachedPrice + float64(out)*p.Output) / 1e6
}

// LocalBackend names the backend when it runs on the user's own hardware
// and so has no price per token: "ollama", or "openai" when every server
// of the pool is on this machine (a loopback address); "" otherwise.
func LocalBackend(b Backend) string {
	switch {
	case b.Ollama != nil:
		return "ollama"
	case b.OpenAI != nil:
		for _, h := range b.OpenAI.PoolHosts() {
			if !loopbackURL(h.URL) {
				return ""
			}
		}
		return "openai"
	}
	return ""
}

// loopbackURL reports whether a server URL names this machine.
func loopbackURL(raw string) bool {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
