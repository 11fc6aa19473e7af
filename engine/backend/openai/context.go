package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/ollamactx"
)

// ollama returns a client for the Ollama server behind base_url when
// base_url is Ollama's /v1 (its root answers /api/version as Ollama),
// else nil. Ollama's /v1 cuts a prompt longer than the context silently,
// so its replies are checked against the context; other servers refuse
// such a prompt (context_overflow). It asks once.
func (b *Backend) ollama(ctx context.Context) *ollamactx.Client {
	b.winOnce.Do(func() {
		root, ok := strings.CutSuffix(b.base, "/v1")
		if !ok {
			return
		}
		w := ollamactx.New(b.client, root)
		if w.IsOllama(ctx) {
			b.win = w
		}
	})
	return b.win
}

// MeasurePrompt sends req asking for one output token and reports its
// prompt's size against the context the server gives it. Only Ollama's
// /v1 is measured (other servers refuse a prompt that does not fit, and
// the run says so); for others the fit has no limit and nothing is sent.
func (b *Backend) MeasurePrompt(ctx context.Context, req *backend.Request) (*backend.PromptFit, error) {
	if b.ollama(ctx) == nil {
		return &backend.PromptFit{}, nil
	}
	body, err := b.encode(req, true)
	if err != nil {
		return nil, err
	}
	a, err := b.exchange(ctx, body, false, "measuring a prompt for "+req.Model, req.Model)
	if err != nil {
		return nil, err
	}
	f := &backend.PromptFit{}
	if a.usage != nil {
		f.Tokens = a.usage.PromptTokens
	}
	return b.fit(ctx, req, f), nil
}

// fit completes f, the prompt of req as the server counted it, when the
// server is Ollama's /v1: the context it gave the model, and for a prompt
// that reached it, the prompt's full size (measured through Ollama's
// native API with the model's own context) and what to do.
func (b *Backend) fit(ctx context.Context, req *backend.Request, f *backend.PromptFit) *backend.PromptFit {
	if f.Tokens < ollamactx.MinContext {
		return f
	}
	w := b.ollama(ctx)
	if w == nil {
		return f
	}
	limit, guessed := w.Limit(ctx, req.Model)
	if guessed && f.Tokens != limit {
		return f
	}
	f.Limit = limit
	f.Context = fmt.Sprintf("the server's context for %s is %s, and Ollama's /v1 takes no num_ctx", req.Model, backend.Thousands(limit))
	if !f.Cut() {
		return f
	}
	own := w.Trained(ctx, req.Model)
	f.Need, f.Floor = ollamactx.FullSize(f.Limit, own, func(n int) (int, error) { return w.Measure(ctx, b.nativeBody(req), n) })
	switch {
	case f.Need > 0:
		size := backend.SuggestContext(f.Need)
		if own > 0 {
			size = min(size, own)
		}
		f.Fix = fmt.Sprintf("start the Ollama server with OLLAMA_CONTEXT_LENGTH=%d, or use %s.ollama (host %s) with num_ctx: %d", size, b.block, w.Root(), size)
	case own > 0 && f.Floor >= own:
		f.Fix = fmt.Sprintf("the model's own context is %s tokens, the most Ollama gives it: offer fewer tools or a shorter prompt", backend.Thousands(own))
	default:
		f.Fix = "offer fewer tools or a shorter prompt"
	}
	return f
}

// nativeBody is req as Ollama's native /api/chat takes it, for
// measuring: tool call arguments as objects, tool results by tool name.
func (b *Backend) nativeBody(req *backend.Request) map[string]any {
	type call struct {
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	type message struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []call `json:"tool_calls,omitempty"`
		ToolName  string `json:"tool_name,omitempty"`
	}
	msgs := make([]message, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = message{Role: m.Role, Content: m.Content, ToolName: m.ToolName}
		for _, tc := range m.ToolCalls {
			var c call
			c.Function.Name, c.Function.Arguments = tc.Name, tc.Arguments
			if !json.Valid(c.Function.Arguments) || len(c.Function.Arguments) == 0 || c.Function.Arguments[0] != '{' {
				c.Function.Arguments = json.RawMessage("{}")
			}
			msgs[i].ToolCalls = append(msgs[i].ToolCalls, c)
		}
	}
	tools, _ := b.tools.Encode(req.Tools, encodeTool)
	body := map[string]any{"model": req.Model, "messages": msgs}
	if len(tools) > 0 {
		body["tools"] = tools
	}
	return body
}

// truncated is the error for a reply to a prompt the server cut.
func (b *Backend) truncated(model string, f *backend.PromptFit) *backend.Error {
	return &backend.Error{
		Kind: backend.KindContextTruncated,
		Msg: fmt.Sprintf("%s: chat with %s: the prompt needs %s tokens and Ollama cut it to %s (%s) without saying so; the reply is not scored: %s",
			b.where(), model, f.Needs(), backend.Thousands(f.Tokens), f.Context, f.Fix),
	}
}
