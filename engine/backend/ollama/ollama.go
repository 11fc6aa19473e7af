package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
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
	// timeout (requests are bounded by their context).
	HTTPClient *http.Client
}

// Backend talks to an Ollama server. It is safe for concurrent use.
type Backend struct {
	client    *api.Client
	host      string
	numCtx    int
	think     bool
	keepAlive *api.Duration

	// converted memoises ConvertTool by the tool's name, description and
	// schema (see toolKey): every turn of every run offers tools, and a
	// schema is costly to convert but one of few.
	mu        sync.RWMutex
	converted map[string]api.Tool
}

var (
	_ backend.Backend     = (*Backend)(nil)
	_ backend.Preflighter = (*Backend)(nil)
)

// New returns a backend for cfg. It does not contact the server; call
// Preflight for that.
func New(cfg Config) (*Backend, error) {
	host := cfg.Host
	if host == "" {
		host = DefaultHost
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("ollama: bad host %q: want a URL such as %s", cfg.Host, DefaultHost)
	}
	if cfg.NumCtx < 0 {
		return nil, fmt.Errorf("ollama: num_ctx %d is negative", cfg.NumCtx)
	}
	b := &Backend{host: strings.TrimRight(u.String(), "/"), numCtx: cfg.NumCtx, think: cfg.Think, converted: map[string]api.Tool{}}
	if cfg.KeepAlive != "" {
		d, err := time.ParseDuration(cfg.KeepAlive)
		if err != nil {
			return nil, fmt.Errorf("ollama: bad keep_alive %q: %v", cfg.KeepAlive, err)
		}
		b.keepAlive = &api.Duration{Duration: d}
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	b.client = api.NewClient(u, hc)
	return b, nil
}

// Host returns the server's base URL.
func (b *Backend) Host() string { return b.host }

// Preflight checks that the server is up, that every model is pulled and
// that each can call tools. It returns the server version and the models'
// digests. Every problem it finds is a *backend.Error that says what to do.
func (b *Backend) Preflight(ctx context.Context, models []string) (*backend.Info, error) {
	version, err := b.client.Version(ctx)
	if err != nil {
		if e := ctxError(ctx, err); e != nil {
			return nil, e
		}
		return nil, &backend.Error{
			Kind: backend.KindUnavailable, Retryable: true, Err: err,
			Msg: fmt.Sprintf("cannot reach Ollama at %s; start it with `ollama serve`, or set backend.ollama.host in the config to where it runs", b.host),
		}
	}
	list, err := b.client.List(ctx)
	if err != nil {
		return nil, b.mapError(ctx, err, "listing models", "")
	}
	have := make(map[string]api.ListModelResponse)
	var names []string
	for _, m := range list.Models {
		names = append(names, m.Name)
		have[canonical(m.Name)] = m
		if m.Model != "" {
			have[canonical(m.Model)] = m
		}
	}
	sort.Strings(names)
	var missing []string
	for _, m := range models {
		if _, ok := have[canonical(m)]; !ok && !slices.Contains(missing, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		var msg strings.Builder
		fmt.Fprintf(&msg, "Ollama at %s does not have %s %s", b.host, plural(len(missing), "model", "models"), strings.Join(missing, ", "))
		if len(names) == 0 {
			msg.WriteString("; it has no models at all")
		} else {
			fmt.Fprintf(&msg, "; it has: %s", strings.Join(names, ", "))
		}
		msg.WriteString(". Pull with:")
		for _, m := range missing {
			fmt.Fprintf(&msg, " `ollama pull %s`", m)
		}
		return nil, &backend.Error{Kind: backend.KindModelMissing, Msg: msg.String()}
	}
	info := &backend.Info{Server: fmt.Sprintf("ollama %s at %s", version, b.host), Digests: make(map[string]string, len(models))}
	for _, m := range models {
		if _, done := info.Digests[m]; done {
			continue
		}
		show, err := b.client.Show(ctx, &api.ShowRequest{Model: m})
		if err != nil {
			return nil, b.mapError(ctx, err, "showing model "+m, m)
		}
		// An old server that reports no capabilities gets the benefit of
		// the doubt; the first chat will say if tools are unsupported.
		if caps := show.Capabilities; len(caps) > 0 && !slices.Contains(caps, "tools") {
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
				Msg:  fmt.Sprintf("model %s cannot think, but backend.ollama.think is true; set it to false or choose a thinking model", m),
			}
		}
		info.Digests[m] = have[canonical(m)].Digest
	}
	return info, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// canonical adds the implicit ":latest" tag Ollama gives untagged names.
func canonical(name string) string {
	if i := strings.LastIndexByte(name, ':'); i < 0 || strings.Contains(name[i:], "/") {
		return name + ":latest"
	}
	return name
}

// Chat sends one streamed chat request and accumulates the reply.
func (b *Backend) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	creq, err := b.request(req)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var (
		content, thinking strings.Builder
		calls             []backend.ToolCall
		final             *api.ChatResponse
	)
	err = b.client.Chat(ctx, creq, func(r api.ChatResponse) error {
		content.WriteString(r.Message.Content)
		thinking.WriteString(r.Message.Thinking)
		for _, tc := range r.Message.ToolCalls {
			args, err := tc.Function.Arguments.MarshalJSON()
			if err != nil {
				return fmt.Errorf("encoding arguments of %s: %w", tc.Function.Name, err)
			}
			calls = append(calls, backend.ToolCall{Name: tc.Function.Name, Arguments: args})
		}
		if r.Done {
			final = &r
		}
		return nil
	})
	latency := time.Since(start)
	if err != nil {
		return nil, b.mapError(ctx, err, "chat with "+req.Model, req.Model)
	}
	if final == nil {
		return nil, &backend.Error{Kind: backend.KindUnavailable, Retryable: true,
			Msg: fmt.Sprintf("ollama at %s: chat with %s: stream ended before the final chunk", b.host, req.Model)}
	}
	return &backend.Response{
		Message: backend.Message{
			Role:      "assistant",
			Content:   content.String(),
			Thinking:  thinking.String(),
			ToolCalls: calls,
		},
		TokensIn:   final.PromptEvalCount,
		TokensOut:  final.EvalCount,
		Latency:    latency,
		DoneReason: final.DoneReason,
	}, nil
}

// request builds the wire request. Options go as a map so that a zero
// seed or temperature is sent rather than dropped; think is always sent.
func (b *Backend) request(req *backend.Request) (*api.ChatRequest, error) {
	tools, err := b.convertTools(req.Tools)
	if err != nil {
		return nil, err
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
	stream := true
	return &api.ChatRequest{
		Model:     req.Model,
		Messages:  msgs,
		Stream:    &stream,
		Tools:     tools,
		Options:   opts,
		Think:     &api.ThinkValue{Value: b.think},
		KeepAlive: b.keepAlive,
	}, nil
}

// convertTools is ConvertTools through the backend's memo. Converted tools
// are shared between requests, which only read them.
func (b *Backend) convertTools(tools []backend.Tool) (api.Tools, error) {
	out := make(api.Tools, len(tools))
	var key []byte
	for i, t := range tools {
		key = toolKey(key[:0], t)
		b.mu.RLock()
		ot, ok := b.converted[string(key)]
		b.mu.RUnlock()
		if !ok {
			var err error
			if ot, err = ConvertTool(t); err != nil {
				return nil, err
			}
			b.mu.Lock()
			b.converted[string(key)] = ot
			b.mu.Unlock()
		}
		out[i] = ot
	}
	return out, nil
}

// toolKey appends to dst what ConvertTool's result depends on: the
// tool's name, description and input schema, length-prefixed so that no
// two tools share a key.
func toolKey(dst []byte, t backend.Tool) []byte {
	dst = appendField(dst, t.Name)
	dst = appendField(dst, t.Description)
	return appendField(dst, t.InputSchema)
}

func appendField[T string | json.RawMessage](dst []byte, s T) []byte {
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, ':')
	return append(dst, s...)
}

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
	var se api.StatusError
	if errors.As(err, &se) {
		msg := se.ErrorMessage
		switch {
		case se.StatusCode == http.StatusNotFound:
			return &backend.Error{Kind: backend.KindModelMissing, Msg: fmt.Sprintf("%s: model %s not found; pull it with `ollama pull %s`", where, model, model), Err: err}
		case se.StatusCode == http.StatusBadRequest && strings.Contains(msg, "does not support tools"):
			return &backend.Error{Kind: backend.KindNoTools, Msg: where + ": the model cannot call tools", Err: err}
		case se.StatusCode >= 500 || se.StatusCode == http.StatusTooManyRequests || se.StatusCode == 499:
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
