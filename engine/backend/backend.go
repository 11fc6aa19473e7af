package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/results"
)

// Backend sends one chat request and returns the model's reply.
//
// Chat must return err == nil whenever it obtained a reply from the model,
// whatever the reply says: a wrong, malformed or missing tool call is a
// model behaviour for the scorer, not an error. A non-nil error means the
// infrastructure failed (server down, model missing, stream broken,
// cassette miss); it should be an *Error so the engine can tell whether a
// retry may help. The agent loop, not the backend, owns policy: turn
// limits, timeouts and retries.
type Backend interface {
	Chat(ctx context.Context, req *Request) (*Response, error)
}

// Preflighter is implemented by backends that can check, before any run
// starts, that they can serve every model the plan needs. Preflight
// returns facts to record in config.json (server version, model digests).
// It checks that the models accept tools unless ctx is ToolFree.
type Preflighter interface {
	Preflight(ctx context.Context, models []string) (*Info, error)
}

type toolFreeKey struct{}

// ToolFree marks ctx as a preflight's for models that are offered no
// tools (a simulated user): the backend checks that they answer, and
// neither offers them a tool nor asks whether they take one. Wrappers
// pass ctx on as it is.
func ToolFree(ctx context.Context) context.Context {
	return context.WithValue(ctx, toolFreeKey{}, true)
}

// IsToolFree reports whether ctx was marked by ToolFree.
func IsToolFree(ctx context.Context) bool {
	v, _ := ctx.Value(toolFreeKey{}).(bool)
	return v
}

// Info is what a preflight learned. Its shape is part of the result
// directory's format (config.json), so package results defines it.
type Info = results.BackendInfo

// ModelInfo is what a server's model list says about one model.
type ModelInfo = results.ModelInfo

// Request is one model turn.
type Request struct {
	Model       string
	Messages    []Message
	Tools       []Tool
	Seed        int
	Temperature float64
	// Options are the cell's backend options (its options set), applied
	// over the backend's own settings; nil for the "default" set. Each
	// backend reads only its own entry.
	Options *schema.OptionsSet
	// OptionsName is the options set's name in the run config (its
	// options_sets key), for messages that say which setting to change;
	// "" with no set.
	OptionsName string
	// Key identifies the turn for replay and recording; real backends
	// ignore it.
	Key Key
}

// Key identifies one turn of one run.
type Key struct {
	Case string            // case id
	Cell map[string]string // axis name -> value as package schema/cell formats it (cell.Cell.Values), e.g. {"model": "qwen3:0.6b", "confirm": "deny", "seed": "1"}
	// Turn is the 0-based model turn within the run, counted across the
	// whole conversation; for Side SideUser, the simulated user's turn
	// (0: its first reply, after the model's first final answer).
	Turn int
	// Side says who is asked: "" the model under test, SideUser the
	// simulated user of a conversation, SideJudge the judge.
	Side string
	// Input is, for SideJudge, the digest of the judge's whole input
	// (score.JudgeInput.Digest): a cassette's judge turn recorded for
	// another input does not answer it.
	Input string
}

// Key.Side values besides "" (the model under test).
const (
	// SideUser is Key.Side for a simulated user's request.
	SideUser = "user"
	// SideJudge is Key.Side for a judge's request on a judged answer
	// (package engine/judge); Key.Turn numbers the run's judge requests.
	SideJudge = "judge"
)

// Message is one chat message.
type Message struct {
	Role      string     `json:"role"` // system | user | assistant | tool
	Content   string     `json:"content,omitempty"`
	Thinking  string     `json:"thinking,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	ToolName  string     `json:"tool_name,omitempty"` // for role tool
	// ToolCallID is, for role tool, the ID of the call it answers ("" when
	// the backend gave none).
	ToolCallID string `json:"tool_call_id,omitempty"`
	// IsError is, for role tool, whether the result is an error (the
	// tool's, or toolward's for a call it did not make); backends whose
	// API says so (Anthropic's is_error) send it.
	IsError bool `json:"is_error,omitempty"`
	// Blocks is, for an assistant reply, the reply as the backend that
	// made it must be sent it again in later turns, in its own encoding:
	// Anthropic's content blocks when they include thinking, whose
	// signatures the API checks. That backend sends Blocks in place of
	// Content, Thinking and ToolCalls; the others ignore it. nil when the
	// fields above say everything.
	Blocks json.RawMessage `json:"blocks,omitempty"`
}

// ToolCall is one call the model asked for. Arguments are kept as the
// model sent them (key order preserved); they may not be a JSON object.
type ToolCall struct {
	// ID is the backend's id for the call, which the tool result must
	// quote (OpenAI's tool_call_id); "" when the backend gives none.
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Tool is one tool offered to the model, with its MCP input schema kept
// whole as JSON Schema.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Response is the model's reply to one Request.
type Response struct {
	Message   Message
	TokensIn  int
	TokensOut int
	// TokensCached is the part of TokensIn read from the server's prompt
	// cache, when the backend reports it.
	TokensCached int
	Latency      time.Duration // wall time of the request
	DoneReason   string
	// Host names the server that answered (its base URL) when the
	// backend talks to one of several; "" otherwise.
	Host string
}

// Done reasons every backend gives its Response.DoneReason (each maps
// its server's words to them: OpenAI's finish_reason, Ollama's
// done_reason, Anthropic's stop_reason max_tokens).
const (
	// DoneLength: the server stopped the reply at its token limit.
	DoneLength = "length"
	// DoneReplyLimit: toolward cut the reply at its own reply limit
	// (the backend's MaxReplyBytes, or its limit on tool calls).
	DoneReplyLimit = "reply_limit"
)

// Cut reports whether a reply that ended for reason was cut before its
// end, by the server's token limit or toolward's reply limit.
func Cut(reason string) bool { return reason == DoneLength || reason == DoneReplyLimit }

// Error kinds.
const (
	KindUnavailable  = "backend"       // cannot reach the server, 5xx, broken stream
	KindModelMissing = "model_missing" // the model is not there
	KindNoTools      = "no_tools"      // the model does not support tools
	KindCassetteMiss = "cassette_miss" // replay has no reply for this key
	KindTimeout      = "timeout"
	// KindBadRequest: the backend rejected the request itself (a 4xx other
	// than the cases above, or a tool schema that is not valid JSON); a
	// retry sends the same request and cannot help.
	KindBadRequest = "bad_request"
	// KindContextOverflow: the conversation no longer fits the model's
	// context window (a 400 saying so); a retry cannot help.
	KindContextOverflow = "context_overflow"
	// KindContextTruncated: the server cut the prompt to fit its context
	// and answered anyway (Ollama does so silently, reporting as many
	// prompt tokens as the context holds); the model answered a prompt it
	// never saw whole, so the reply is not scored, and a retry cannot help.
	KindContextTruncated = "context_truncated"
)

// PromptMeasurer is implemented by backends that can tell, before any
// run, whether a request's prompt fits the context the server gives it.
type PromptMeasurer interface {
	// MeasurePrompt sends req asking for one output token and reports
	// the prompt's size and the context it must fit.
	MeasurePrompt(ctx context.Context, req *Request) (*PromptFit, error)
}

// Measure asks b to measure req's prompt when b is a PromptMeasurer;
// otherwise it returns a fit with no limit (nothing to check). Wrappers
// forward MeasurePrompt through it.
func Measure(ctx context.Context, b Backend, req *Request) (*PromptFit, error) {
	if m, ok := b.(PromptMeasurer); ok {
		return m.MeasurePrompt(ctx, req)
	}
	return &PromptFit{}, nil
}

// PromptFit is a prompt's size against a context.
type PromptFit struct {
	// Tokens is the prompt's size in tokens: its full size when Need is
	// 0, else what the server kept of it (the whole context).
	Tokens int
	// Limit is the context the prompt must fit (0: unknown, never cut).
	Limit int
	// Need is the full size of a prompt that did not fit, measured with a
	// larger context; 0 when it was not cut or could not be measured.
	Need int
	// Floor, when Need is 0, is the largest context the prompt was found
	// not to fit (at least Limit).
	Floor int
	// Context says what set Limit, e.g. "num_ctx is 4,096".
	Context string
	// Fix says what to do when the prompt does not fit, e.g. "set
	// backend.ollama.num_ctx to at least 16384".
	Fix string
}

// Cut reports whether the prompt reached the context: the server cut it.
func (f *PromptFit) Cut() bool { return f.Limit > 0 && f.Tokens >= f.Limit }

// Needs says how many tokens the prompt needs: "15,591", or "more than
// 4,096" when its full size is unknown.
func (f *PromptFit) Needs() string {
	if f.Need > 0 {
		return Thousands(f.Need)
	}
	return "more than " + Thousands(max(f.Floor, f.Limit))
}

// SuggestContext is the context to advise for a prompt of need tokens:
// the next power of two above it (at least 2,048), which leaves room for
// the reply and a few more turns.
func SuggestContext(need int) int {
	n := 2048
	for n <= need {
		n *= 2
	}
	return n
}

// Thousands formats n with commas between groups of three digits.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Error is an infrastructure failure.
type Error struct {
	Kind      string
	Msg       string
	Retryable bool // a retry with backoff may succeed
	// RetryAfter is how long the server asked the client to wait before
	// retrying (429 Retry-After); 0 means it did not say.
	RetryAfter time.Duration
	// Host is the base URL of the host that answered, when the backend
	// has several (set by pool); "" otherwise.
	Host string
	Err  error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Msg, e.Err)
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// ParseServerURL reads the address of a model server as a config gives
// it: raw, or def when raw is empty, with http:// assumed when no scheme
// is given. It returns the URL without a trailing slash, or an error
// naming what (e.g. "ollama: bad host") and an example.
func ParseServerURL(raw, def, what string) (*url.URL, string, error) {
	s := raw
	if s == "" {
		s = def
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, "", fmt.Errorf("%s %q: want a URL such as %s", what, raw, def)
	}
	return u, strings.TrimRight(u.String(), "/"), nil
}

// ProbePrompt is the user message of the one-token request a preflight
// sends a model (ProbeRequest).
const ProbePrompt = "toolward preflight: reply with OK."

// ProbeRequest is a preflight's request to model: ProbePrompt, offering
// one tool that does nothing (none when ctx is ToolFree: a simulated user
// is offered no tools), so that the request is shaped like a run's and a
// server that refuses tools (llama-server without --jinja, vLLM without a
// tool call parser) says so before any run starts.
func ProbeRequest(ctx context.Context, model string) *Request {
	req := &Request{Model: model, Messages: []Message{{Role: "user", Content: ProbePrompt}}}
	if !IsToolFree(ctx) {
		req.Tools = []Tool{{Name: "toolward_probe", Description: "Does nothing; offered so the request is shaped like a run's.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}}
	}
	return req
}

// MissingModels is a preflight's KindModelMissing error: head, then
// "model m" or "models m, n", then, when the server listed its models
// (listed not nil), "; <has>: " and their names in order with the closest
// one to each missing model (or "; <none>" for an empty list), then tail.
func MissingModels(head string, missing, listed []string, has, none, tail string) *Error {
	var msg strings.Builder
	what := "model"
	if len(missing) > 1 {
		what = "models"
	}
	fmt.Fprintf(&msg, "%s %s %s", head, what, strings.Join(missing, ", "))
	switch {
	case listed == nil:
	case len(listed) == 0:
		msg.WriteString("; " + none)
	default:
		listed = slices.Sorted(slices.Values(listed))
		fmt.Fprintf(&msg, "; %s: %s%s", has, strings.Join(listed, ", "), DidYouMean(missing, listed))
	}
	msg.WriteString(tail)
	return &Error{Kind: KindModelMissing, Msg: msg.String()}
}

// DidYouMean suggests, for each missing model, the closest one the server
// has, e.g. `; did you mean "qwen3:0.6b" for "qwen3:06b"?`; "" when none
// is close. Backends append it to their model-missing errors.
func DidYouMean(missing, have []string) string {
	var parts []string
	for _, m := range missing {
		if s := matchers.Suggest(m, have); s != "" && s != m {
			parts = append(parts, fmt.Sprintf("%q for %q", s, m))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(parts, ", ") + "?"
}
