package anthropic

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/toolward/toolward/engine/backend"
)

// DefaultBaseURL is Anthropic's API root, the part before /v1/messages.
const DefaultBaseURL = "https://api.anthropic.com"

// APIVersion is sent as the anthropic-version header of every request.
const APIVersion = "2023-06-01"

// DefaultMaxTokens is sent as max_tokens when Config.MaxTokens is 0.
const DefaultMaxTokens = 4096

// DefaultMaxReplyBytes bounds one reply's text, thinking, signatures and
// tool input together when Config.MaxReplyBytes is 0.
const DefaultMaxReplyBytes = 4 << 20

// Config configures the backend. The zero value talks to DefaultBaseURL
// without an API key, asks for DefaultMaxTokens tokens and sends none of
// the optional fields.
type Config struct {
	// BaseURL is the API root; "" means DefaultBaseURL. A URL without a
	// scheme gets http://.
	BaseURL string
	// APIKeyEnv names the environment variable holding the API key, read
	// by New and sent as x-api-key; "" sends no key. The key itself is
	// never part of a Config, so it cannot reach config.json.
	APIKeyEnv string
	// Headers are added to every request (e.g. anthropic-beta).
	Headers map[string]string
	// MaxTokens is sent as max_tokens; 0 means DefaultMaxTokens.
	MaxTokens int
	// ToolChoice, when set ("auto", "any", "none", "tool"), is sent with
	// requests that offer tools; ToolName names the tool for "tool".
	ToolChoice, ToolName string
	// DisableParallelToolUse asks for at most one tool call per reply.
	DisableParallelToolUse bool
	// ThinkingBudget, when positive, enables extended thinking with this
	// many tokens (the API wants at least 1024, less than MaxTokens).
	ThinkingBudget int
	// MaxReplyBytes bounds what one reply may hold; 0 means
	// DefaultMaxReplyBytes. A longer reply is cut there and its
	// DoneReason is DoneReplyLimit.
	MaxReplyBytes int
	// HTTPClient is used for every request; nil means a client with no
	// timeout (requests are bounded by their context) that keeps up to 64
	// idle connections per host.
	HTTPClient *http.Client
}

// Backend talks to the Messages API. It is safe for concurrent use.
type Backend struct {
	base      string // without a trailing slash
	keyEnv    string
	headers   http.Header
	cfg       Config
	limit     int
	maxTokens int
	client    *http.Client
	tools     backend.ToolCache // the wire JSON of the tools offered, memoised
}

var (
	_ backend.Backend     = (*Backend)(nil)
	_ backend.Preflighter = (*Backend)(nil)
)

// New returns a backend for cfg. It reads the API key from the
// environment but does not contact the server; call Preflight for that.
func New(cfg Config) (*Backend, error) {
	_, base, err := backend.ParseServerURL(cfg.BaseURL, DefaultBaseURL, "anthropic: bad base_url")
	if err != nil {
		return nil, err
	}
	if cfg.MaxTokens < 0 || cfg.MaxReplyBytes < 0 || cfg.ThinkingBudget < 0 {
		return nil, errors.New("anthropic: max_tokens, thinking_budget and the limits must not be negative")
	}
	maxTokens := cmp.Or(cfg.MaxTokens, DefaultMaxTokens)
	if cfg.ThinkingBudget > 0 && cfg.ThinkingBudget >= maxTokens {
		return nil, fmt.Errorf("anthropic: the thinking budget (%d) must be less than max_tokens (%d)", cfg.ThinkingBudget, maxTokens)
	}
	key, err := backend.APIKey(cfg.APIKeyEnv, "anthropic: backend.anthropic.api_key_env", `export it with your Anthropic API key (or set api_key_env: "" for a gateway that adds its own)`)
	if err != nil {
		return nil, err
	}
	return &Backend{
		base: base, keyEnv: cfg.APIKeyEnv, cfg: cfg, limit: cmp.Or(cfg.MaxReplyBytes, DefaultMaxReplyBytes), maxTokens: maxTokens,
		client:  backend.HTTPClient(cfg.HTTPClient),
		headers: backend.Headers(cfg.Headers, "Anthropic-Version", APIVersion, "X-Api-Key", key),
	}, nil
}

// BaseURL returns the API root requests go to.
func (b *Backend) BaseURL() string { return b.base }

func (b *Backend) where() string { return "Anthropic Messages API at " + b.base }

// Chat sends one Messages API request and accumulates the streamed reply.
// A 429 or 529 answer is a KindThrottled error carrying the server's
// retry-after, which backend.Throttle (or the pool) waits out before
// sending the same request again.
func (b *Backend) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	body, err := b.encode(req, false)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	out, err := b.send(ctx, body, "chat with "+req.Model, req.Model)
	if err != nil {
		return nil, err
	}
	out.Latency = time.Since(start)
	return out, nil
}

// send posts body once and reads the reply.
func (b *Backend) send(ctx context.Context, body []byte, doing, model string) (*backend.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header = b.headers.Clone()
	hr.Header.Set("Accept", "text/event-stream")
	resp, err := b.client.Do(hr)
	if err != nil {
		return nil, b.transportError(ctx, err, doing)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, b.statusError(resp, doing, model)
	}
	a := &accumulator{ReplyBudget: backend.ReplyBudget{Limit: b.limit}}
	if err := readStream(resp.Body, a); err != nil && !errors.Is(err, backend.ErrCut) {
		return nil, b.readError(ctx, err, doing)
	}
	out := &backend.Response{Message: a.message(), DoneReason: a.doneReason()}
	out.TokensIn, out.TokensOut = a.tokens()
	out.TokensCached = a.usage.CacheReadInputTokens
	return out, nil
}

// encode builds the request body: top-level system, the conversation as
// content blocks, the tools, temperature always, tool_choice and
// thinking when configured; the cell's options set (top_p, max_tokens,
// thinking_budget) goes over the configuration. A probe asks for one
// token and no thinking.
func (b *Backend) encode(req *backend.Request, probe bool) ([]byte, error) {
	tools, err := b.tools.Encode(req.Tools, EncodeTool)
	if err != nil {
		return nil, err
	}
	system, msgs, err := messages(req.Messages)
	if err != nil {
		return nil, err
	}
	mr := messagesRequest{
		Model: req.Model, MaxTokens: b.maxTokens, System: system, Messages: msgs, Tools: tools,
		Temperature: req.Temperature, Stream: true,
	}
	if len(tools) > 0 {
		mr.ToolChoice = b.toolChoice()
	}
	budget := b.cfg.ThinkingBudget
	if req.Options != nil && req.Options.Anthropic != nil {
		o := req.Options.Anthropic
		mr.TopP = o.TopP
		if o.MaxTokens != nil {
			mr.MaxTokens = *o.MaxTokens
		}
		if o.ThinkingBudget != nil {
			budget = *o.ThinkingBudget
		}
	}
	if budget > 0 {
		mr.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
	}
	if probe {
		mr.MaxTokens, mr.Thinking, mr.ToolChoice = 1, nil, nil
	}
	return json.Marshal(&mr)
}

// toolChoice is the configured tool_choice, nil when there is none to
// send.
func (b *Backend) toolChoice() *toolChoice {
	c := b.cfg
	switch {
	case c.ToolChoice == "none":
		return &toolChoice{Type: "none"}
	case c.ToolChoice != "":
		return &toolChoice{Type: c.ToolChoice, Name: c.ToolName, DisableParallelToolUse: c.DisableParallelToolUse}
	case c.DisableParallelToolUse:
		return &toolChoice{Type: "auto", DisableParallelToolUse: true}
	}
	return nil
}

// messages converts the conversation: system messages become the
// top-level system text (joined by blank lines); user and assistant text
// become messages; an assistant turn's tool calls become tool_use blocks
// (its Blocks, when it has them, are sent as they came); the tool results
// that follow it go together in one user message as tool_result blocks,
// each naming the call it answers (calls without an ID, from a replayed
// history, get one made up from their position, as do their results).
func messages(in []backend.Message) (string, []wireMessage, error) {
	var system []string
	out := make([]wireMessage, 0, len(in))
	var results []block
	var pending []string // ids of the last assistant turn's calls not yet answered
	flush := func() error {
		if len(results) == 0 {
			return nil
		}
		raw, err := json.Marshal(results)
		if err != nil {
			return err
		}
		out = append(out, wireMessage{Role: "user", Content: raw})
		results = results[:0:0]
		return nil
	}
	for i, m := range in {
		if m.Role != "tool" {
			if err := flush(); err != nil {
				return "", nil, err
			}
		}
		switch m.Role {
		case "system":
			system = append(system, m.Content)
		case "user":
			raw, _ := json.Marshal(m.Content)
			out = append(out, wireMessage{Role: "user", Content: raw})
		case "assistant":
			raw, ids, err := assistant(i, m)
			if err != nil {
				return "", nil, err
			}
			pending = ids
			out = append(out, wireMessage{Role: "assistant", Content: raw})
		case "tool":
			id := m.ToolCallID
			if id == "" && len(pending) > 0 {
				id = pending[0]
			}
			if len(pending) > 0 {
				pending = pending[1:]
			}
			results = append(results, block{Type: "tool_result", ToolUseID: id, Content: m.Content, IsError: m.IsError})
		default:
			return "", nil, &backend.Error{Kind: backend.KindBadRequest, Msg: fmt.Sprintf("anthropic: message %d has role %q, which the Messages API does not take", i, m.Role)}
		}
	}
	if err := flush(); err != nil {
		return "", nil, err
	}
	return strings.Join(system, "\n\n"), out, nil
}

// assistant encodes an assistant message and returns the ids of its
// calls, in order.
func assistant(i int, m backend.Message) (json.RawMessage, []string, error) {
	ids := make([]string, len(m.ToolCalls))
	for j, tc := range m.ToolCalls {
		ids[j] = tc.ID
		if ids[j] == "" {
			ids[j] = "toolu_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
		}
	}
	if len(m.Blocks) > 0 {
		return m.Blocks, ids, nil
	}
	if len(m.ToolCalls) == 0 {
		raw, err := json.Marshal(m.Content)
		return raw, ids, err
	}
	blocks := make([]block, 0, 1+len(m.ToolCalls))
	if m.Content != "" {
		blocks = append(blocks, block{Type: "text", Text: m.Content})
	}
	for j, tc := range m.ToolCalls {
		blocks = append(blocks, block{Type: "tool_use", ID: ids[j], Name: tc.Name, Input: objectOrEmpty(tc.Arguments)})
	}
	raw, err := json.Marshal(blocks)
	return raw, ids, err
}

// toolName is what the Messages API accepts as a tool's name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

// EncodeTool returns a tool as this backend sends it in a request's tools
// list: {name, description, input_schema}, the MCP input schema
// unchanged (an empty one sent as an object with no properties). A name
// the API would refuse, or a schema that is not valid JSON, is a
// KindBadRequest error.
func EncodeTool(t backend.Tool) (json.RawMessage, error) {
	if !toolName.MatchString(t.Name) {
		return nil, &backend.Error{Kind: backend.KindBadRequest, Msg: fmt.Sprintf("tool %q: the Messages API takes tool names of 1 to 128 letters, digits, _ and - only; rename the tool on the server", t.Name)}
	}
	schema, err := backend.ToolSchema(t)
	if err != nil {
		return nil, err
	}
	return json.Marshal(wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
}
