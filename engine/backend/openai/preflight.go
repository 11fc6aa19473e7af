package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/toolward/toolward/engine/backend"
)

// ProbePrompt is the user message of the one-token request Preflight
// sends (backend.ProbeRequest).
const ProbePrompt = backend.ProbePrompt

// OllamaV1Drops is the preflight warning for Ollama's /v1: it takes no
// truncate, so a conversation longer than the context loses its oldest
// messages and is answered without a word (the native API is asked to
// refuse instead; see backend/ollama).
const OllamaV1Drops = "this is Ollama's /v1, which cannot be asked not to cut prompts: a conversation or tool loop that outgrows the context loses its oldest messages silently, and such a run is scored (a single prompt cut to the context is caught); for long conversations use backend: ollama, whose requests Ollama refuses instead, or start the server with an OLLAMA_CONTEXT_LENGTH with room"

// Preflight checks, before any run, that the server answers, accepts the
// API key, serves every model and accepts tools. It lists the models
// (GET /models) and sends each model one chat request asking for one
// token, offering one tool. A server without a model list is a warning,
// not a failure: the probe still finds a missing model. It returns the
// server's Server header and what its list says about each model.
func (b *Backend) Preflight(ctx context.Context, models []string) (*backend.Info, error) {
	info := &backend.Info{Server: b.where(), Models: map[string]backend.ModelInfo{}}
	listed, server, warn, err := b.list(ctx)
	if err != nil {
		return nil, err
	}
	if warn != nil {
		info.Warnings = append(info.Warnings, fmt.Sprintf("cannot list models (%v); checking each model with a chat request instead", warn))
	}
	if server != "" {
		info.Server += " (Server: " + server + ")"
	}
	if b.ollama(ctx) != nil {
		info.Warnings = append(info.Warnings, OllamaV1Drops)
	}
	var missing []string
	for _, m := range models {
		if _, done := info.Models[m]; done || slices.Contains(missing, m) {
			continue
		}
		mi, ok := find(listed, m)
		if err := b.probeRetrying(ctx, m); err != nil {
			var be *backend.Error
			if errors.As(err, &be) && be.Kind == backend.KindModelMissing {
				missing = append(missing, m)
				continue
			}
			return nil, err
		}
		if !ok {
			mi = backend.ModelInfo{ID: m}
			if listed != nil {
				info.Warnings = append(info.Warnings, fmt.Sprintf("%s does not list model %s but answers for it (a single-model server may answer to any name)", b.base, m))
			}
		}
		info.Models[m] = mi
	}
	if len(missing) > 0 {
		return nil, b.missing(missing, listed)
	}
	return info, nil
}

// missing says which models the server lacks and which it has.
func (b *Backend) missing(models []string, listed []backend.ModelInfo) error {
	var ids []string
	if listed != nil {
		ids = make([]string, len(listed))
		for i, m := range listed {
			ids[i] = m.ID
		}
	}
	return backend.MissingModels(b.where()+" does not serve", models, ids, "it lists", "it lists no models", ". Load the model on the server, or fix matrix.models")
}

// find looks a model up in the server's list: by exact id, or with
// Ollama's implicit ":latest" tag.
func find(listed []backend.ModelInfo, model string) (backend.ModelInfo, bool) {
	for _, m := range listed {
		if m.ID == model || m.ID == model+":latest" {
			return m, true
		}
	}
	return backend.ModelInfo{}, false
}

// list fetches GET /models. It returns the models (nil when there is no
// readable list), the Server header, why there is no list (a warning) and
// an error that stops the preflight: no server there, or a refused key.
func (b *Backend) list(ctx context.Context) (listed []backend.ModelInfo, server string, warn, err error) {
	var ml modelList
	lr := &backend.ListRequest{
		Client: b.client, Header: b.headers, URL: b.base + "/models", Where: b.where(), Limit: b.limit,
		Refused: func(resp *http.Response) *backend.Error { return b.statusError(resp, "listing models", "") },
		Said:    serverMessage,
		Unreachable: func(error) string {
			start := "start it"
			if strings.Contains(b.base, ":11434") {
				start = "start it (`ollama serve`)"
			}
			return fmt.Sprintf("cannot reach an OpenAI-compatible server at %s; %s, or set %s.openai.base_url in the config to where it listens", b.base, start, b.block)
		},
	}
	hdr, warn, err := lr.Get(ctx, &ml)
	server = hdr.Get("Server")
	if warn != nil || err != nil {
		return nil, server, warn, err
	}
	listed = make([]backend.ModelInfo, len(ml.Data))
	for i, m := range ml.Data {
		listed[i] = backend.ModelInfo{ID: m.ID, OwnedBy: m.OwnedBy, Created: m.Created}
	}
	return listed, server, nil, nil
}

// probeAttempts bounds the probes of one model when the server answers
// with a retryable error (a 429, a model still loading).
const probeAttempts = 3

// probeRetrying probes model, waiting out retryable failures as the
// server asks (Retry-After) or for a second, up to probeAttempts times.
func (b *Backend) probeRetrying(ctx context.Context, model string) error {
	for attempt := 1; ; attempt++ {
		err := b.probe(ctx, model)
		var be *backend.Error
		if err == nil || attempt == probeAttempts || !errors.As(err, &be) || !be.Retryable || be.Kind == backend.KindTimeout {
			return err
		}
		wait := be.RetryAfter
		if wait == 0 {
			wait = time.Second
		}
		if backend.Sleep(ctx, wait) != nil {
			return err
		}
	}
}

// probe sends model a one-token chat request offering one tool (none
// when ctx is backend.ToolFree).
func (b *Backend) probe(ctx context.Context, model string) error {
	body, err := b.encode(backend.ProbeRequest(ctx, model), true)
	if err != nil {
		return err
	}
	doing := "checking model " + model
	resp, err := b.post(ctx, body, false)
	if err != nil {
		return b.transportError(ctx, err, doing)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return b.statusError(resp, doing, model)
	}
	head := &headBuffer{max: 120}
	if err := readWhole(io.TeeReader(resp.Body, head), &accumulator{ReplyBudget: backend.ReplyBudget{Limit: b.limit}}); err != nil && !errors.Is(err, backend.ErrCut) {
		if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") || bytes.HasPrefix(bytes.TrimSpace(head.b), []byte("data:")) {
			return &backend.Error{Kind: backend.KindBadRequest, Err: err,
				Msg: fmt.Sprintf("%s: %s: the server answered with an event stream (Content-Type %q, starting %q) to a request that said stream: false; it does not honour stream: false (a proxy or server setting?)", b.where(), doing, ct, head.b)}
		}
		return &backend.Error{Kind: backend.KindBadRequest, Err: err,
			Msg: fmt.Sprintf("%s: %s: the reply is not a chat completion (it starts %q); is base_url (%s) an OpenAI-compatible API root, such as %s?", b.where(), doing, head.b, b.base, DefaultBaseURL)}
	}
	return nil
}

// headBuffer keeps the first max bytes written to it, to quote what a
// server sent.
type headBuffer struct {
	b   []byte
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if n := h.max - len(h.b); n > 0 {
		h.b = append(h.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}
