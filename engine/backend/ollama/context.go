package ollama

import (
	"context"
	"fmt"
	"maps"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/ollamactx"
)

// MeasurePrompt sends req asking for one output token and reports its
// prompt's size against the context it gets; a prompt that was cut is
// measured again with larger contexts, to learn its full size.
func (b *Backend) MeasurePrompt(ctx context.Context, req *backend.Request) (*backend.PromptFit, error) {
	creq, tools, err := b.request(req)
	if err != nil {
		return nil, err
	}
	n, err := b.countPrompt(ctx, creq, tools, 0)
	if err != nil && !tooLong(err) {
		return nil, b.mapError(ctx, err, "measuring a prompt for "+req.Model, req.Model)
	}
	return b.fit(ctx, req, creq, tools, n, err != nil), nil
}

// countPrompt sends creq asking for one token (with num_ctx numCtx when
// positive) and returns the prompt tokens the server counted. A prompt
// longer than numCtx counts as numCtx (Ollama refused it: tooLong); with
// numCtx 0 that refusal is the error.
func (b *Backend) countPrompt(ctx context.Context, creq *api.ChatRequest, tools [][]byte, numCtx int) (int, error) {
	c := *creq
	c.Options = maps.Clone(creq.Options)
	c.Options["num_predict"] = 1
	if numCtx > 0 {
		c.Options["num_ctx"] = numCtx
	}
	r := &reply{ReplyBudget: backend.ReplyBudget{Limit: b.limit}}
	err := b.postChat(ctx, &c, tools, r)
	if tooLong(err) && numCtx > 0 {
		return numCtx, nil
	}
	if err != nil && err != backend.ErrCut {
		return 0, err
	}
	if r.final == nil {
		return 0, fmt.Errorf("ollama at %s: the reply had no final chunk", b.host)
	}
	return r.final.PromptEvalCount, nil
}

// fit is the prompt of creq (req on the wire), counted as tokens prompt
// tokens, against its context: num_ctx when the request sets it, else the
// one the server gave the model. refused says Ollama refused the prompt
// as longer than the context (tooLong): it is cut by definition, tokens
// unknown. A prompt that reached the context is measured again with
// larger contexts (ollamactx.FullSize) to learn its full size.
func (b *Backend) fit(ctx context.Context, req *backend.Request, creq *api.ChatRequest, tools [][]byte, tokens int, refused bool) *backend.PromptFit {
	f := &backend.PromptFit{Tokens: tokens}
	f.Limit, f.Context = b.contextOf(ctx, creq, tokens, refused)
	if refused {
		f.Tokens = f.Limit
		if f.Limit == 0 {
			// The server did not say what context it gives: the prompt
			// is longer, by how much is unknown.
			f.Tokens, f.Limit, f.Context = 1, 1, "the context Ollama gives "+creq.Model+" is unknown"
			f.Fix = "set " + b.ctxSetting(req) + ".num_ctx"
			return f
		}
	}
	if !f.Cut() {
		return f
	}
	own := b.win.Trained(ctx, creq.Model)
	setting := b.ctxSetting(req)
	f.Need, f.Floor = ollamactx.FullSize(f.Limit, own, func(n int) (int, error) { return b.countPrompt(ctx, creq, tools, n) })
	switch {
	case f.Need > 0 && own > 0 && backend.SuggestContext(f.Need) > own:
		f.Fix = fmt.Sprintf("set %s.num_ctx to %d (the model's own context, the most Ollama gives it)", setting, own)
	case f.Need > 0:
		f.Fix = fmt.Sprintf("set %s.num_ctx to at least %d", setting, backend.SuggestContext(f.Need))
	case own > 0 && f.Floor >= own:
		f.Fix = fmt.Sprintf("the model's own context is %s tokens, the most Ollama gives it: offer fewer tools or a shorter prompt", backend.Thousands(own))
	default:
		f.Fix = "offer fewer tools or a shorter prompt"
	}
	return f
}

// contextOf is the context creq gets, and how, for messages: its
// num_ctx (capped by the model's own), else the one the server gives the
// model; 0 when unknown. tokens is what the server counted (prompt, or
// prompt and reply), sure says it is over the context whatever the count
// (a refusal): a server's context is asked about only for a count that
// could have reached one, and a guessed one counts only when hit exactly.
func (b *Backend) contextOf(ctx context.Context, creq *api.ChatRequest, tokens int, sure bool) (int, string) {
	if n := intOption(creq.Options["num_ctx"]); n > 0 {
		limit, how := n, fmt.Sprintf("num_ctx is %d", n)
		// Ollama gives no model more than its own context.
		if own := b.win.Trained(ctx, creq.Model); own > 0 && own < n {
			limit = own
			how += fmt.Sprintf(", which Ollama caps at the model's own context of %s", backend.Thousands(own))
		}
		return limit, how
	}
	if tokens < ollamactx.MinContext && !sure {
		return 0, ""
	}
	limit, guessed := b.win.Limit(ctx, creq.Model)
	if guessed && tokens != limit && !sure {
		return 0, ""
	}
	return limit, fmt.Sprintf("num_ctx is not set, and Ollama gives %s a context of %s", creq.Model, backend.Thousands(limit))
}

// filled is the error for a reply that ran out of context: the prompt
// (in tokens) fit, but prompt and reply (out) reached the context, so
// Ollama stopped the reply (shift false; done reason "length"), or a
// server that ignores shift dropped part of the prompt to go on.
func (b *Backend) filled(req *backend.Request, in, out, limit int, how string) *backend.Error {
	what := "Ollama would drop part of the prompt to go on without saying so, and stopped the reply as asked (shift false)"
	if in+out > limit+1 {
		what = "the server went on past it, dropping part of the prompt without saying so (it ignores shift false)"
	}
	return &backend.Error{
		Kind: backend.KindContextTruncated,
		Msg: fmt.Sprintf("ollama at %s: chat with %s: the prompt (%s tokens) and the reply (%s so far) filled the context (%s); %s; nothing is scored: set %s.num_ctx to at least %d",
			b.host, req.Model, backend.Thousands(in), backend.Thousands(out), how, what, b.ctxSetting(req), backend.SuggestContext(in+out)),
	}
}

// ctxSetting is where the run config sets the num_ctx req is sent with:
// its options set's when the set has one, else the backend's.
func (b *Backend) ctxSetting(req *backend.Request) string {
	if o := req.Options; o != nil && o.Ollama != nil && o.Ollama.NumCtx != nil && req.OptionsName != "" {
		return "options_sets." + req.OptionsName + ".ollama"
	}
	return b.setting
}

// truncated is the error for a prompt longer than its context: one the
// server cut and answered (refused false), or refused (tooLong). Both
// are KindContextTruncated, so a run's record does not depend on the
// server's version.
func (b *Backend) truncated(model string, f *backend.PromptFit, refused bool) *backend.Error {
	if refused {
		return &backend.Error{
			Kind: backend.KindContextTruncated,
			Msg: fmt.Sprintf("ollama at %s: chat with %s: the prompt needs %s tokens, more than its context (%s); Ollama would cut it without saying so, and refused it as asked (truncate false); nothing is scored: %s",
				b.host, model, f.Needs(), f.Context, f.Fix),
		}
	}
	return &backend.Error{
		Kind: backend.KindContextTruncated,
		Msg: fmt.Sprintf("ollama at %s: chat with %s: the prompt needs %s tokens and Ollama cut it to %s (%s) without saying so; the reply is not scored: %s",
			b.host, model, f.Needs(), backend.Thousands(f.Tokens), f.Context, f.Fix),
	}
}

// intOption reads an integer option as a request's options map holds it.
func intOption(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}
