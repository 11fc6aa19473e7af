package ollama

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/ollamactx"
	"github.com/toolward/toolward/schema"
)

// DefaultHost is where Ollama listens unless configured otherwise.
const DefaultHost = "http://127.0.0.1:11434"

// Config configures the backend. The zero value talks to DefaultHost with
// the model's default context, Ollama's default keep-alive and thinking off.
type Config struct {
	// Host is the server's base URL; "" means DefaultHost. A host without
	// a scheme ("127.0.0.1:11434") gets http://.
	Host string
	// NumCtx sets the context window (options.num_ctx); 0 leaves the
	// model's default.
	NumCtx int
	// KeepAlive is how long the server keeps the model loaded after a
	// request, as a Go duration ("5m"); "" leaves Ollama's default.
	KeepAlive string
	// Think turns thinking on. It is always sent explicitly, so false
	// means off even for models that think by default.
	Think bool
	// HTTPClient is used for every request; nil means a client with no
	// timeout (requests are bounded by their context) that keeps up to 64
	// idle connections to the host.
	HTTPClient *http.Client
	// MaxReplyBytes bounds what one reply may hold (content, thinking,
	// tool names and arguments); 0 means DefaultMaxReplyBytes. A longer
	// reply is cut there and its DoneReason is DoneReplyLimit.
	MaxReplyBytes int
	// Block is where these settings are in the run config, for the
	// messages that say what to change: "backend" (the default) or
	// "simulator.backend".
	Block string
}

// Backend talks to an Ollama server. It is safe for concurrent use.
type Backend struct {
	http        *http.Client // under a signer for a signed host
	host        string
	limit       int  // MaxReplyBytes
	answerLimit int  // maxAnswerBytes
	signed      bool // requests are signed (see signer)
	numCtx      int
	think       bool
	keepAlive   *api.Duration
	win         *ollamactx.Client // the contexts the server gives models
	setting     string            // Block + ".ollama", for messages

	// converted memoises ConvertTool, and the converted tool's JSON, by
	// the tool's name, description and schema (see toolKey): every turn
	// of every run offers tools, and a schema is costly to convert and to
	// encode but one of few.
	mu        sync.RWMutex
	converted map[string]convertedTool
}

var (
	_ backend.Backend        = (*Backend)(nil)
	_ backend.Preflighter    = (*Backend)(nil)
	_ backend.PromptMeasurer = (*Backend)(nil)
)

// New returns a backend for cfg. It does not contact the server; call
// Preflight for that.
func New(cfg Config) (*Backend, error) {
	u, host, err := backend.ParseServerURL(cfg.Host, DefaultHost, "ollama: bad host")
	if err != nil {
		return nil, err
	}
	if cfg.NumCtx < 0 {
		return nil, fmt.Errorf("ollama: num_ctx %d is negative", cfg.NumCtx)
	}
	if cfg.MaxReplyBytes < 0 {
		return nil, fmt.Errorf("ollama: max reply bytes %d is negative", cfg.MaxReplyBytes)
	}
	b := &Backend{
		host: host, numCtx: cfg.NumCtx, think: cfg.Think, setting: cmp.Or(cfg.Block, "backend") + ".ollama",
		limit: cfg.MaxReplyBytes, answerLimit: maxAnswerBytes, converted: map[string]convertedTool{},
		// As Ollama's own client: requests to ollama.com, or any with
		// OLLAMA_AUTH set, are signed.
		signed: envconfig.UseAuth() || u.Hostname() == "ollama.com",
	}
	if b.limit == 0 {
		b.limit = DefaultMaxReplyBytes
	}
	if cfg.KeepAlive != "" {
		d, err := time.ParseDuration(cfg.KeepAlive)
		if err != nil {
			return nil, fmt.Errorf("ollama: bad keep_alive %q: %v", cfg.KeepAlive, err)
		}
		b.keepAlive = &api.Duration{Duration: d}
	}
	b.http = backend.HTTPClient(cfg.HTTPClient)
	if b.signed {
		b.http = signing(b.http, u.Path)
	}
	b.win = ollamactx.New(b.http, b.host)
	return b, nil
}

// Host returns the server's base URL.
func (b *Backend) Host() string { return b.host }

// Preflight checks that the server is up, that every model is pulled and
// that each can call tools (unless ctx is backend.ToolFree). It returns the server version and the models'
// digests. Every problem it finds is a *backend.Error that says what to do.
func (b *Backend) Preflight(ctx context.Context, models []string) (*backend.Info, error) {
	var v struct {
		Version string `json:"version"`
	}
	err := b.call(ctx, http.MethodGet, "/api/version", nil, &v)
	version := v.Version
	if err != nil {
		if e := ctxError(ctx, err); e != nil {
			return nil, e
		}
		// Not being let in is not being unreachable.
		if errors.As(err, new(*signError)) || errors.As(err, new(api.AuthorizationError)) || errors.As(err, new(*answerTooLong)) {
			return nil, b.mapError(ctx, err, "asking its version", "")
		}
		return nil, &backend.Error{
			Kind: backend.KindUnavailable, Retryable: true, Err: err,
			Msg: fmt.Sprintf("cannot reach Ollama at %s; start it with `ollama serve`, or set %s.host in the config to where it runs", b.host, b.setting),
		}
	}
	var list api.ListResponse
	if err := b.call(ctx, http.MethodGet, "/api/tags", nil, &list); err != nil {
		return nil, b.mapError(ctx, err, "listing models", "")
	}
	have := make(map[string]api.ListModelResponse)
	names := []string{}
	for _, m := range list.Models {
		names = append(names, m.Name)
		have[canonical(m.Name)] = m
		if m.Model != "" {
			have[canonical(m.Model)] = m
		}
	}
	var missing []string
	for _, m := range models {
		if _, ok := have[canonical(m)]; !ok && !slices.Contains(missing, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		pull := ". Pull with:"
		for _, m := range missing {
			pull += fmt.Sprintf(" `ollama pull %s`", m)
		}
		return nil, backend.MissingModels("Ollama at "+b.host+" does not have", missing, names, "it has", "it has no models at all", pull)
	}
	info := &backend.Info{Server: fmt.Sprintf("ollama %s at %s", version, b.host), Digests: make(map[string]string, len(models))}
	for _, m := range models {
		if _, done := info.Digests[m]; done {
			continue
		}
		var show api.ShowResponse
		if err := b.call(ctx, http.MethodPost, "/api/show", &api.ShowRequest{Model: m}, &show); err != nil {
			return nil, b.mapError(ctx, err, "showing model "+m, m)
		}
		// An old server that reports no capabilities gets the benefit of
		// the doubt; the first chat will say if tools are unsupported.
		if caps := show.Capabilities; len(caps) > 0 && !slices.Contains(caps, "tools") && !backend.IsToolFree(ctx) {
			list := make([]string, len(caps))
			for i, c := range caps {
				list[i] = string(c)
			}
			return nil, &backend.Error{
				Kind: backend.KindNoTools,
				Msg:  fmt.Sprintf("model %s cannot call tools (its capabilities are: %s); choose a model with the \"tools\" capability", m, strings.Join(list, ", ")),
			}
		}
		if caps := show.Capabilities; b.think && len(caps) > 0 && !slices.Contains(caps, "thinking") {
			return nil, &backend.Error{
				Kind: backend.KindBadRequest,
				Msg:  fmt.Sprintf("model %s cannot think, but %s.think is true; set it to false or choose a thinking model", m, b.setting),
			}
		}
		info.Digests[m] = have[canonical(m)].Digest
	}
	return info, nil
}

// canonical adds the implicit ":latest" tag Ollama gives untagged names.
func canonical(name string) string { return ollamactx.Canonical(name) }

// Chat sends one streamed chat request and accumulates the reply. The
// stream is read through a pooled buffer (the api package's client
// allocates 8 MiB per request) and bounded by Config.MaxReplyBytes,
// signed or not.
func (b *Backend) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	creq, tools, err := b.request(req)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	r := &reply{ReplyBudget: backend.ReplyBudget{Limit: b.limit}}
	err = b.postChat(ctx, creq, tools, r)
	latency := time.Since(start)
	if tooLong(err) {
		return nil, b.truncated(req.Model, b.fit(ctx, req, creq, tools, 0, true), true)
	}
	if err != nil && !errors.Is(err, backend.ErrCut) {
		return nil, b.mapError(ctx, err, "chat with "+req.Model, req.Model)
	}
	resp := &backend.Response{
		Message: backend.Message{
			Role:      "assistant",
			Content:   r.content.String(),
			Thinking:  r.thinking.String(),
			ToolCalls: r.calls,
		},
		Latency: latency,
	}
	switch {
	case r.Cut:
		resp.DoneReason = DoneReplyLimit
	case r.final == nil:
		return nil, &backend.Error{Kind: backend.KindUnavailable, Retryable: true,
			Msg: fmt.Sprintf("ollama at %s: chat with %s: stream ended before the final chunk", b.host, req.Model)}
	default:
		resp.TokensIn, resp.TokensOut, resp.DoneReason = r.final.PromptEvalCount, r.final.EvalCount, r.final.DoneReason
		// A server that ignores truncate (before Ollama 0.12.4) cuts the
		// prompt; its count of prompt tokens then reaches the context.
		if f := b.fit(ctx, req, creq, tools, resp.TokensIn, false); f.Cut() {
			return nil, b.truncated(req.Model, f, false)
		}
		// The reply ran out of context: stopped there (done reason
		// "length"), or gone on past it by a server that shifts anyway.
		// The last token counted is never put in the context (at a
		// num_ctx one over the prompt Ollama ends a 2-token reply
		// normally), hence the one token of slack; and Ollama stops a
		// reply at the context exactly there, one over it, so "length"
		// at or under the context is num_predict's, not the context's.
		// A context guessed (no /api/ps entry) counts only when hit
		// exactly: by a reply stopped there, one over it.
		used, at := resp.TokensIn+resp.TokensOut, resp.TokensIn+resp.TokensOut
		if resp.DoneReason == "length" {
			at--
		}
		if limit, how := b.contextOf(ctx, creq, at, false); limit > 0 && (used > limit+1 || used > limit && resp.DoneReason == "length") {
			return nil, b.filled(req, resp.TokensIn, resp.TokensOut, limit, how)
		}
	}
	return resp, nil
}

// request builds the wire request, and the JSON encodings of its tools.
// Options go as a map so that a zero seed or temperature is sent rather
// than dropped; think is always sent.
func (b *Backend) request(req *backend.Request) (*api.ChatRequest, [][]byte, error) {
	tools, encs, err := b.convertTools(req.Tools)
	if err != nil {
		return nil, nil, err
	}
	msgs := make([]api.Message, len(req.Messages))
	for i, m := range req.Messages {
		am := api.Message{Role: m.Role, Content: m.Content, Thinking: m.Thinking, ToolName: m.ToolName}
		if len(m.ToolCalls) > 0 {
			am.ToolCalls = make([]api.ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				args := api.NewToolCallFunctionArguments()
				// Arguments that are not an object (a malformed call
				// from history) cannot be expressed; they go as {}.
				if len(tc.Arguments) > 0 {
					if err := args.UnmarshalJSON(tc.Arguments); err != nil {
						args = api.NewToolCallFunctionArguments()
					}
				}
				am.ToolCalls[j] = api.ToolCall{Function: api.ToolCallFunction{Index: j, Name: tc.Name, Arguments: args}}
			}
		}
		msgs[i] = am
	}
	opts := map[string]any{"seed": req.Seed, "temperature": req.Temperature}
	if b.numCtx > 0 {
		opts["num_ctx"] = b.numCtx
	}
	think := api.ThinkValue{Value: b.think}
	if o := req.Options; o != nil && o.Ollama != nil {
		cellOptions(opts, &think, o.Ollama)
	}
	stream, truncate, shift := true, false, false
	return &api.ChatRequest{
		Model:    req.Model,
		Messages: msgs,
		Stream:   &stream,
		Tools:    tools,
		Options:  opts,
		Think:    &think,
		// A prompt longer than the context is refused (tooLong) rather
		// than cut: by default Ollama drops a conversation's oldest
		// messages, or the prompt's middle, and answers what is left,
		// saying so nowhere but in its count of prompt tokens. And a
		// reply that fills the context ends there (done reason
		// "length") rather than going on over a prompt Ollama shifted
		// half out of the context.
		Truncate:  &truncate,
		Shift:     &shift,
		KeepAlive: b.keepAlive,
	}, encs, nil
}

// tooLong reports whether err is Ollama's refusal of a prompt longer
// than the context, which it answers to a request with truncate false
// (a 400; testdata/wire/truncation-messages.txt).
func tooLong(err error) bool {
	var se api.StatusError
	return errors.As(err, &se) && se.StatusCode == http.StatusBadRequest && strings.Contains(se.ErrorMessage, "input length exceeds the context length")
}

// convertedTool is one memoised conversion.
type convertedTool struct {
	tool api.Tool
	json []byte // tool, encoded
}

// convertTools is ConvertTools through the backend's memo; it also
// returns each tool's memoised JSON encoding. Converted tools and their
// encodings are shared between requests, which only read them.
func (b *Backend) convertTools(tools []backend.Tool) (api.Tools, [][]byte, error) {
	if len(tools) == 0 {
		return nil, nil, nil
	}
	out := make(api.Tools, len(tools))
	encs := make([][]byte, len(tools))
	var keyBuf [1024]byte
	key := keyBuf[:0]
	var missing []int
	b.mu.RLock()
	for i, t := range tools {
		key = toolKey(key[:0], t)
		if ct, ok := b.converted[string(key)]; ok {
			out[i], encs[i] = ct.tool, ct.json
		} else {
			missing = append(missing, i)
		}
	}
	b.mu.RUnlock()
	for _, i := range missing {
		ct, err := convertAndEncode(tools[i])
		if err != nil {
			return nil, nil, err
		}
		key = toolKey(key[:0], tools[i])
		b.mu.Lock()
		b.converted[string(key)] = ct
		b.mu.Unlock()
		out[i], encs[i] = ct.tool, ct.json
	}
	return out, encs, nil
}

func convertAndEncode(t backend.Tool) (convertedTool, error) {
	ot, err := ConvertTool(t)
	if err != nil {
		return convertedTool{}, err
	}
	enc, err := json.Marshal(ot)
	if err != nil {
		return convertedTool{}, &backend.Error{Kind: backend.KindBadRequest, Msg: fmt.Sprintf("ollama: encoding tool %s", t.Name), Err: err}
	}
	return convertedTool{tool: ot, json: enc}, nil
}

// toolKey appends to dst what ConvertTool's result depends on
// (backend.ToolKey).
func toolKey(dst []byte, t backend.Tool) []byte { return backend.ToolKey(dst, t) }

// ctxError reports a context that ended as a *backend.Error, or nil.
func ctxError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &backend.Error{Kind: backend.KindTimeout, Msg: "ollama: request timed out", Retryable: true, Err: context.DeadlineExceeded}
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return &backend.Error{Kind: backend.KindUnavailable, Msg: "ollama: request canceled", Err: context.Canceled}
	}
	return nil
}

// mapError turns a client error into a *backend.Error.
func (b *Backend) mapError(ctx context.Context, err error, doing, model string) error {
	if e := ctxError(ctx, err); e != nil {
		return e
	}
	where := fmt.Sprintf("ollama at %s: %s", b.host, doing)
	var sign *signError
	if errors.As(err, &sign) {
		return &backend.Error{Kind: backend.KindBadRequest, Msg: where + ": " + sign.Error(), Err: err}
	}
	var long *answerTooLong
	if errors.As(err, &long) {
		return &backend.Error{Kind: backend.KindUnavailable, Retryable: true, Msg: where + ": " + long.Error() + ", which is not an answer of Ollama's", Err: err}
	}
	var sf *backend.StreamFault
	if errors.As(err, &sf) {
		return &backend.Error{Kind: backend.KindUnavailable, Retryable: true, Msg: where + ": broken reply", Err: err}
	}
	var se api.StatusError
	if errors.As(err, &se) {
		msg := se.ErrorMessage
		switch {
		case se.StatusCode == http.StatusNotFound:
			return &backend.Error{Kind: backend.KindModelMissing, Msg: fmt.Sprintf("%s: model %s not found; pull it with `ollama pull %s`", where, model, model), Err: err}
		case se.StatusCode == http.StatusBadRequest && strings.Contains(msg, "does not support tools"):
			return &backend.Error{Kind: backend.KindNoTools, Msg: where + ": the model cannot call tools", Err: err}
		case se.StatusCode == http.StatusTooManyRequests:
			return &backend.Error{Kind: backend.KindThrottled, Retryable: true, Msg: where + ": rate limited", Err: err}
		case se.StatusCode >= 500 || se.StatusCode == 499:
			return &backend.Error{Kind: backend.KindUnavailable, Retryable: true, Msg: where, Err: err}
		default:
			return &backend.Error{Kind: backend.KindBadRequest, Msg: where, Err: err}
		}
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return &backend.Error{Kind: backend.KindBadRequest, Msg: where + ": not authorized", Err: err}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &backend.Error{Kind: backend.KindTimeout, Retryable: true, Msg: where + ": timed out", Err: err}
	}
	if errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &backend.Error{Kind: backend.KindUnavailable, Retryable: true, Msg: where + ": server unreachable (is `ollama serve` running?)", Err: err}
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return &backend.Error{Kind: backend.KindUnavailable, Retryable: true, Msg: where + ": garbled reply", Err: err}
	}
	// Anything else, notably an {"error": ...} line in the middle of a
	// stream, is a server-side failure a retry may get past.
	return &backend.Error{Kind: backend.KindUnavailable, Retryable: true, Msg: where, Err: err}
}

// cellOptions applies a cell's options set over the backend's settings:
// think replaces the configured one, the others go into options.
func cellOptions(opts map[string]any, think *api.ThinkValue, o *schema.OllamaOptions) {
	if o.Think != nil {
		think.Value = o.Think
	}
	for name, v := range map[string]*int{"num_ctx": o.NumCtx, "num_predict": o.NumPredict, "top_k": o.TopK} {
		if v != nil {
			opts[name] = *v
		}
	}
	for name, v := range map[string]*float64{"top_p": o.TopP, "min_p": o.MinP, "repeat_penalty": o.RepeatPenalty} {
		if v != nil {
			opts[name] = *v
		}
	}
}
