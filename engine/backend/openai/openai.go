package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/ollamactx"
	"github.com/toolward/toolward/schema"
)

// DefaultBaseURL is llama-server's address; the base URL is the API root,
// the part before /chat/completions.
const DefaultBaseURL = "http://127.0.0.1:8080/v1"

// DefaultMaxReplyBytes bounds one reply's content, reasoning and tool call
// arguments together when Config.MaxReplyBytes is 0.
const DefaultMaxReplyBytes = 4 << 20

// Config configures the backend. The zero value talks to DefaultBaseURL
// without an API key, streams, and sends none of the optional fields.
type Config struct {
	// BaseURL is the API root, e.g. http://127.0.0.1:11434/v1 for
	// Ollama; "" means DefaultBaseURL. A URL without a scheme gets http://.
	BaseURL string
	// APIKeyEnv names the environment variable holding the API key, read
	// by New and sent as "Authorization: Bearer …"; "" sends no key. The
	// key itself is never part of a Config, so it cannot reach
	// config.json.
	APIKeyEnv string
	// Headers are added to every request (e.g. an organisation header).
	Headers map[string]string
	// MaxTokens, when positive, is sent as max_tokens.
	MaxTokens int
	// ToolChoice, when set ("auto", "none", "required"), is sent as
	// tool_choice with requests that offer tools.
	ToolChoice string
	// ParallelToolCalls, when set, is sent as parallel_tool_calls with
	// requests that offer tools.
	ParallelToolCalls *bool
	// NoStream asks for whole replies instead of server-sent events.
	NoStream bool
	// MaxReplyBytes bounds what one reply may hold (content, reasoning
	// and tool call arguments); 0 means DefaultMaxReplyBytes. A longer
	// streamed reply is cut there and its DoneReason is DoneReplyLimit.
	MaxReplyBytes int
	// HTTPClient is used for every request; nil means a client with no
	// timeout (requests are bounded by their context) that keeps up to 64
	// idle connections per host.
	HTTPClient *http.Client
	// Block is where these settings are in the run config, for the
	// messages that say what to change: "backend" (the default) or
	// "simulator.backend".
	Block string
}

// Backend talks to an OpenAI-compatible server. It is safe for concurrent
// use.
type Backend struct {
	base    string // without a trailing slash
	keyEnv  string
	headers http.Header
	cfg     Config
	limit   int
	client  *http.Client
	tools   backend.ToolCache // the wire JSON of the tools offered, memoised

	winOnce sync.Once
	win     *ollamactx.Client // set when base_url is Ollama's /v1 (see ollama)
	block   string            // Config.Block, for messages
}

var (
	_ backend.Backend        = (*Backend)(nil)
	_ backend.Preflighter    = (*Backend)(nil)
	_ backend.PromptMeasurer = (*Backend)(nil)
)

// New returns a backend for cfg. It reads the API key from the
// environment but does not contact the server; call Preflight for that.
func New(cfg Config) (*Backend, error) {
	_, base, err := backend.ParseServerURL(cfg.BaseURL, DefaultBaseURL, "openai: bad base_url")
	if err != nil {
		return nil, err
	}
	if cfg.MaxTokens < 0 || cfg.MaxReplyBytes < 0 {
		return nil, errors.New("openai: max_tokens and the reply limit must not be negative")
	}
	block := cmp.Or(cfg.Block, "backend")
	key, err := backend.APIKey(cfg.APIKeyEnv, "openai: "+block+".openai.api_key_env", "export it with the API key, or remove api_key_env for a server without keys")
	if err != nil {
		return nil, err
	}
	auth := ""
	if key != "" {
		auth = "Bearer " + key
	}
	return &Backend{
		base: base, keyEnv: cfg.APIKeyEnv, cfg: cfg, block: block, limit: cmp.Or(cfg.MaxReplyBytes, DefaultMaxReplyBytes),
		client: backend.HTTPClient(cfg.HTTPClient), headers: backend.Headers(cfg.Headers, "Authorization", auth),
	}, nil
}

// BaseURL returns the API root requests go to.
func (b *Backend) BaseURL() string { return b.base }

func (b *Backend) where() string { return "openai-compatible server at " + b.base }

// Chat sends one chat completion request and accumulates the reply.
func (b *Backend) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	body, err := b.encode(req, false)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	a, err := b.exchange(ctx, body, !b.cfg.NoStream, "chat with "+req.Model, req.Model)
	if err != nil {
		return nil, err
	}
	latency := time.Since(start)
	out := &backend.Response{Message: a.message(), Latency: latency, DoneReason: a.doneReason()}
	if a.usage != nil {
		out.TokensIn, out.TokensOut = a.usage.PromptTokens, a.usage.CompletionTokens
		if f := b.fit(ctx, req, &backend.PromptFit{Tokens: out.TokensIn}); f.Cut() && out.DoneReason != DoneReplyLimit {
			return nil, b.truncated(req.Model, f)
		}
	}
	return out, nil
}

// post sends a chat completion request body.
func (b *Backend) post(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header = b.headers.Clone()
	if stream {
		hr.Header.Set("Accept", "text/event-stream")
	}
	return b.client.Do(hr)
}

// exchange posts body and reads the reply, streamed or whole, mapping a
// failure to what it was doing.
func (b *Backend) exchange(ctx context.Context, body []byte, stream bool, doing, model string) (*accumulator, error) {
	resp, err := b.post(ctx, body, stream)
	if err != nil {
		return nil, b.transportError(ctx, err, doing)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, b.statusError(resp, doing, model)
	}
	a := &accumulator{ReplyBudget: backend.ReplyBudget{Limit: b.limit}}
	read := readWhole
	if stream {
		read = readStream
	}
	if err := read(resp.Body, a); err != nil && !errors.Is(err, backend.ErrCut) {
		return nil, b.readError(ctx, err, doing)
	}
	return a, nil
}

// readWhole decodes a non-streamed reply. A body past the reply limit is
// not decoded: the reply is empty and cut.
func readWhole(body io.Reader, a *accumulator) error {
	data, err := io.ReadAll(io.LimitReader(body, int64(a.Limit)+pooledCap+1))
	if err != nil {
		return err
	}
	if len(data) > a.Limit+pooledCap {
		a.Cut = true
		return backend.ErrCut
	}
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return backend.NewGarbled(data, err)
	}
	if err := a.add(&c); err != nil {
		return err
	}
	if len(c.Choices) == 0 {
		return errors.New("reply has no choices")
	}
	return nil
}

// readError maps a failure while reading a reply.
func (b *Backend) readError(ctx context.Context, err error, doing string) error {
	var ae *apiError
	if errors.As(err, &ae) {
		low := strings.ToLower(ae.Message)
		e := &backend.Error{Kind: backend.KindUnavailable, Retryable: true, Msg: fmt.Sprintf("%s: %s: the server reported an error mid-reply: %s", b.where(), doing, ae.Error())}
		if overflow(low, http.StatusBadRequest) {
			e.Kind, e.Retryable = backend.KindContextOverflow, false
		}
		return e
	}
	var g *garbled
	var sf *backend.StreamFault
	if errors.As(err, &g) || errors.As(err, &sf) || errors.Is(err, errBrokenStream) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &backend.Error{Kind: backend.KindUnavailable, Retryable: true, Msg: fmt.Sprintf("%s: %s: broken reply", b.where(), doing), Err: err}
	}
	return b.transportError(ctx, err, doing)
}

// encode builds the request body. seed and temperature are always sent;
// the optional fields only when configured. A probe asks for one token,
// not streamed.
func (b *Backend) encode(req *backend.Request, probe bool) ([]byte, error) {
	tools, err := b.tools.Encode(req.Tools, encodeTool)
	if err != nil {
		return nil, err
	}
	cr := chatRequest{
		Model: req.Model, Messages: messages(req.Messages), Tools: tools,
		MaxTokens: b.cfg.MaxTokens, Seed: req.Seed, Temperature: req.Temperature,
		Stream: !b.cfg.NoStream,
	}
	var o *schema.OpenAIOptions
	if req.Options != nil {
		o = req.Options.OpenAI
	}
	if o != nil {
		cr.ReasoningEffort, cr.TopP = o.ReasoningEffort, o.TopP
		if o.MaxTokens != nil {
			cr.MaxTokens = *o.MaxTokens
		}
	}
	if probe {
		cr.MaxTokens, cr.Stream = 1, false
	}
	if len(tools) > 0 {
		cr.ToolChoice, cr.ParallelToolCalls = b.cfg.ToolChoice, b.cfg.ParallelToolCalls
	}
	if cr.Stream {
		cr.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	body, err := json.Marshal(&cr)
	if err != nil || o == nil || len(o.Extra) == 0 {
		return body, err
	}
	return withExtra(body, o.Extra)
}

// withExtra merges an options set's extra fields into an encoded request
// body. A field the body already has is kept: toolward's own fields (the
// model, the messages, the seed) are not the options' to replace.
func withExtra(body []byte, extra map[string]any) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	for k, v := range extra {
		if _, ok := m[k]; ok {
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("openai: options extra %q: %w", k, err)
		}
		m[k] = raw
	}
	return json.Marshal(m)
}

// messages converts the conversation. Every tool result names the call it
// answers: the call's own ID, or, for calls without one (a replayed
// history), an ID made up from its position, given to the call and to the
// result that follows it alike.
func messages(in []backend.Message) []wireMessage {
	out := make([]wireMessage, len(in))
	var pending []string // ids of the last assistant turn's calls not yet answered
	for i, m := range in {
		wm := wireMessage{Role: m.Role, Content: m.Content}
		switch {
		case m.Role == "assistant" && len(m.ToolCalls) > 0:
			pending = pending[:0]
			wm.ToolCalls = make([]wireToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				id := tc.ID
				if id == "" {
					id = "call_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
				}
				args := string(tc.Arguments)
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				wm.ToolCalls[j] = wireToolCall{ID: id, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: args}}
				pending = append(pending, id)
			}
		case m.Role == "tool":
			wm.ToolCallID = m.ToolCallID
			if wm.ToolCallID == "" && len(pending) > 0 {
				wm.ToolCallID = pending[0]
			}
			if len(pending) > 0 {
				pending = pending[1:]
			}
		}
		out[i] = wm
	}
	return out
}

// EncodeTool returns a tool as this backend sends it in a request's
// tools list: {"type":"function","function":{name, description,
// parameters}}, an empty schema sent as an object with no properties.
func EncodeTool(t backend.Tool) (json.RawMessage, error) { return encodeTool(t) }

// encodeTool sends the MCP input schema as the function's parameters
// (backend.ToolSchema): it is JSON Schema, which is what the API takes.
func encodeTool(t backend.Tool) (json.RawMessage, error) {
	params, err := backend.ToolSchema(t)
	if err != nil {
		return nil, err
	}
	return json.Marshal(wireTool{Type: "function", Function: toolFunction{Name: t.Name, Description: t.Description, Parameters: params}})
}
