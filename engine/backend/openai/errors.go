package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toolward/toolward/engine/backend"
)

// MaxRetryAfter caps the wait a server may ask for with Retry-After: a
// longer wait (a daily quota) would hold a worker for no purpose; the run
// is retried after MaxRetryAfter and, if the server still refuses, ends in
// an error that a later --resume runs again.
const MaxRetryAfter = time.Minute

// statusError maps a response with a non-2xx status to a *backend.Error
// that says what to do. It reads (a bounded part of) the body.
func (b *Backend) statusError(resp *http.Response, doing, model string) *backend.Error {
	said := serverMessage(backend.ErrorBody(resp.Body))
	where := fmt.Sprintf("%s: %s: %s", b.where(), doing, resp.Status)
	if said != "" {
		where += ": " + said
	}
	low := strings.ToLower(said)
	e := &backend.Error{Msg: where}
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		e.Kind = backend.KindBadRequest
		e.Msg += "; " + b.keyHint()
	case code == http.StatusNotFound && strings.Contains(low, "model"):
		e.Kind = backend.KindModelMissing
		e.Msg += fmt.Sprintf("; the server does not serve model %q: check matrix.models against GET %s/models", model, b.base)
	case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
		e.Kind = backend.KindBadRequest
		e.Msg += fmt.Sprintf("; no chat endpoint at %s/chat/completions: base_url must be the API root, e.g. %s", b.base, DefaultBaseURL)
	case toolsUnsupported(low) != "":
		e.Kind = backend.KindNoTools
		e.Msg += "; " + toolsUnsupported(low)
	case overflow(low, code):
		e.Kind = backend.KindContextOverflow
		e.Msg += "; the conversation does not fit the model's context window: give the server a larger context (or lower limits.max_iterations)"
	case code == http.StatusServiceUnavailable && retryAfter(resp.Header, time.Now()) > 0:
		// Overloaded, and saying when to come back: a rate limit.
		e.SetThrottled(resp.Header, MaxRetryAfter)
	default:
		e.SetStatus(code, resp.Header, MaxRetryAfter)
	}
	return e
}

// keyHint says what to do about a refused API key.
func (b *Backend) keyHint() string {
	if b.keyEnv == "" {
		return "the server wants an API key: put it in an environment variable and name that variable in " + b.block + ".openai.api_key_env"
	}
	return fmt.Sprintf("check that $%s (%s.openai.api_key_env) holds a key this server accepts", b.keyEnv, b.block)
}

// serverMessage extracts the message from an error body in any of the
// shapes servers use, or returns the body itself, abbreviated.
func serverMessage(body []byte) string {
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil {
		switch {
		case eb.Error != nil && eb.Error.Message != "":
			msg := eb.Error.Message
			if c := eb.Error.code(); c != "" && !strings.Contains(msg, c) {
				msg += " [" + c + "]"
			}
			return msg
		case eb.Message != "":
			return eb.Message
		case len(eb.Detail) > 0:
			var s string
			if json.Unmarshal(eb.Detail, &s) == nil {
				return s
			}
			return backend.Abbreviate(eb.Detail)
		}
	}
	return strings.TrimSpace(backend.Abbreviate(body))
}

// toolsUnsupported recognises servers that refuse tools, returning what
// to do ("" when the message is about something else).
func toolsUnsupported(low string) string {
	switch {
	case strings.Contains(low, "jinja"):
		return "llama-server accepts tools only when started with --jinja"
	case strings.Contains(low, "tool-call-parser") || strings.Contains(low, "enable-auto-tool-choice"):
		return "vLLM accepts tools only when started with --enable-auto-tool-choice --tool-call-parser <parser for the model>"
	case strings.Contains(low, "does not support tools") || strings.Contains(low, "tools are not supported"):
		return "the model cannot call tools; choose one that can"
	}
	return ""
}

// overflowWords are phrases servers use for a prompt longer than the
// context: OpenAI (context_length_exceeded), vLLM ("maximum context
// length"), llama-server ("exceeds the available context size",
// exceed_context_size_error), LM Studio and others ("context window",
// "context length").
var overflowWords = []string{"context_length_exceeded", "context length", "context size", "context window", "exceed_context_size", "maximum context", "too many tokens", "prompt is too long"}

func overflow(low string, code int) bool {
	if code != http.StatusBadRequest && code != http.StatusRequestEntityTooLarge && code != http.StatusUnprocessableEntity {
		return false
	}
	for _, w := range overflowWords {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// retryAfter is backend.RetryAfter capped at MaxRetryAfter.
func retryAfter(h http.Header, now time.Time) time.Duration {
	return backend.RetryAfter(h, now, MaxRetryAfter)
}

// transportError maps a failure to get a response (or to read one) to a
// *backend.Error.
func (b *Backend) transportError(ctx context.Context, err error, doing string) *backend.Error {
	return backend.TransportError(ctx, err, b.where()+": "+doing)
}
