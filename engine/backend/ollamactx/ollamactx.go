// Package ollamactx learns the context window an Ollama server gives a
// model, for the two backends that talk to Ollama (its native /api/chat
// and its OpenAI-compatible /v1). Ollama cuts a prompt longer than the
// context silently: it answers 200, and the only trace in the reply is a
// prompt token count equal to the limit. Knowing the limit lets a backend
// call such a reply what it is.
//
// The limit of a request without num_ctx is the context_length of the
// model's running instance (GET /api/ps); when the server does not say,
// it is the model's own context length (POST /api/show, model_info
// "<arch>.context_length") capped by DefaultContext, a guess. Every
// answer is kept per model, so a server is asked at most once.
package ollamactx

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultContext is the smallest context Ollama gives a model when the
// request sets no num_ctx and the server no OLLAMA_CONTEXT_LENGTH (its
// default is 4k, 32k or 256k depending on the GPU's memory).
const DefaultContext = 4096

// MinContext is the smallest context Limit is asked about: a reply that
// counted fewer prompt tokens cannot have been cut to a server's default
// context, unless the server was started with an OLLAMA_CONTEXT_LENGTH
// below it.
const MinContext = 1024

// lookupTimeout bounds one question to the server.
const lookupTimeout = 10 * time.Second

// maxBody bounds what is read of one answer of /api/ps or /api/show.
const maxBody = 4 << 20

// Client asks one Ollama server about contexts. It is safe for
// concurrent use.
type Client struct {
	http *http.Client
	root string // the server's base URL, without /v1 and without a trailing slash

	mu      sync.Mutex
	loaded  map[string]int // model -> context_length of its running instance (0: not listed)
	trained map[string]int // model -> its own context length (0: unknown)
}

// New returns a client for the server at root (e.g.
// http://127.0.0.1:11434); nil hc means http.DefaultClient.
func New(hc *http.Client, root string) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{http: hc, root: strings.TrimRight(root, "/"), loaded: map[string]int{}, trained: map[string]int{}}
}

// Root returns the server's base URL.
func (c *Client) Root() string { return c.root }

// Canonical adds the implicit ":latest" tag Ollama gives untagged names.
func Canonical(name string) string {
	if i := strings.LastIndexByte(name, ':'); i < 0 || strings.Contains(name[i:], "/") {
		return name + ":latest"
	}
	return name
}

// Limit returns the context a request for model without num_ctx gets:
// its running instance's (guessed false), else its own capped by
// DefaultContext (guessed true), else 0 when the server says neither.
// Call it after a chat with model, when the model is loaded.
func (c *Client) Limit(ctx context.Context, model string) (limit int, guessed bool) {
	if n := c.Loaded(ctx, model); n > 0 {
		return n, false
	}
	if n := c.Trained(ctx, model); n > 0 {
		return min(n, DefaultContext), true
	}
	return 0, false
}

// Loaded returns the context_length of model's running instance from GET
// /api/ps, 0 when it is not running or the server does not say. The
// first answer for a model is kept.
func (c *Client) Loaded(ctx context.Context, model string) int {
	key := Canonical(model)
	return c.kept(c.loaded, key, func() (int, bool) {
		var ps struct {
			Models []struct {
				Name          string `json:"name"`
				Model         string `json:"model"`
				ContextLength int    `json:"context_length"`
			} `json:"models"`
		}
		if err := c.get(ctx, http.MethodGet, "/api/ps", nil, &ps); err != nil && ctx.Err() != nil {
			return 0, false
		}
		for _, m := range ps.Models {
			if Canonical(m.Name) == key || Canonical(m.Model) == key {
				return m.ContextLength, true
			}
		}
		return 0, true
	})
}

// Trained returns the model's own context length from POST /api/show
// (model_info "<architecture>.context_length"), 0 when unknown. The first
// answer for a model is kept.
func (c *Client) Trained(ctx context.Context, model string) int {
	return c.kept(c.trained, Canonical(model), func() (int, bool) {
		var show struct {
			ModelInfo map[string]any `json:"model_info"`
		}
		body, _ := json.Marshal(map[string]string{"model": model})
		if err := c.get(ctx, http.MethodPost, "/api/show", body, &show); err != nil && ctx.Err() != nil {
			return 0, false
		}
		return TrainedContext(show.ModelInfo), true
	})
}

// kept returns the answer m keeps for key, asking (ask) when it keeps
// none. An answer ask gives up on (false: the caller gave up, the server
// did not answer) is 0 and not kept.
func (c *Client) kept(m map[string]int, key string, ask func() (int, bool)) int {
	c.mu.Lock()
	n, ok := m[key]
	c.mu.Unlock()
	if ok {
		return n
	}
	if n, ok = ask(); !ok {
		return 0
	}
	c.mu.Lock()
	m[key] = n
	c.mu.Unlock()
	return n
}

// TrainedContext reads "<general.architecture>.context_length" from an
// /api/show model_info, or any "*.context_length" when the architecture
// is not named; 0 when there is none.
func TrainedContext(info map[string]any) int {
	num := func(v any) int {
		if f, ok := v.(float64); ok && f > 0 {
			return int(f)
		}
		return 0
	}
	if arch, ok := info["general.architecture"].(string); ok {
		if n := num(info[arch+".context_length"]); n > 0 {
			return n
		}
	}
	for k, v := range info {
		if strings.HasSuffix(k, ".context_length") {
			if n := num(v); n > 0 {
				return n
			}
		}
	}
	return 0
}

// Measure sends a native /api/chat request (body: a JSON object with
// model, messages and tools) not streamed, asking for one output token
// with a context of numCtx, and returns the prompt tokens the server
// counted. It is how a prompt's full size is learned: with a context
// larger than the prompt nothing is cut.
func (c *Client) Measure(ctx context.Context, body map[string]any, numCtx int) (int, error) {
	req := make(map[string]any, len(body)+2)
	for k, v := range body {
		req[k] = v
	}
	opts := map[string]any{}
	if o, ok := body["options"].(map[string]any); ok {
		for k, v := range o {
			opts[k] = v
		}
	}
	opts["num_ctx"], opts["num_predict"] = numCtx, 1
	req["options"], req["stream"] = opts, false
	enc, err := json.Marshal(req)
	if err != nil {
		return 0, err
	}
	var out struct {
		PromptEvalCount int    `json:"prompt_eval_count"`
		Error           string `json:"error"`
	}
	if err := c.get(ctx, http.MethodPost, "/api/chat", enc, &out); err != nil {
		return 0, err
	}
	if out.Error != "" {
		return 0, fmt.Errorf("ollama at %s: %s", c.root, out.Error)
	}
	return out.PromptEvalCount, nil
}

// MaxMeasure is the largest context FullSize measures a prompt with.
const MaxMeasure = 131072

// FullSize learns the full size of a prompt cut at limit tokens: count
// sends it with a context of n and returns the prompt tokens counted. It
// tries contexts four times larger each time, from 4×limit, up to
// MaxMeasure and the model's own context own (Ollama caps num_ctx there;
// 0: unknown), and returns the size once a try is not cut, or else the
// largest context it was cut at (floor: the prompt is longer) and need 0.
func FullSize(limit, own int, count func(numCtx int) (int, error)) (need, floor int) {
	floor = limit
	top := MaxMeasure
	if own > 0 {
		top = min(top, own)
	}
	for n := min(max(4*limit, 2048), top); n > floor; n = min(4*n, top) {
		got, err := count(n)
		if err != nil || got <= floor {
			return 0, floor // no answer, or one that says nothing more
		}
		if got < n {
			return got, floor
		}
		floor = n
	}
	return 0, floor
}

// IsOllama reports whether the server answers GET /api/version as Ollama
// does ({"version": "…"}).
func (c *Client) IsOllama(ctx context.Context) bool {
	var v struct {
		Version *string `json:"version"`
	}
	return c.get(ctx, http.MethodGet, "/api/version", nil, &v) == nil && v.Version != nil
}

func (c *Client) get(ctx context.Context, method, path string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.root+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("ollama at %s: %s %s: %s", c.root, method, path, resp.Status)
	}
	return json.Unmarshal(data, out)
}
