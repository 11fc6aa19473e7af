package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/toolward/toolward/engine/backend"
)

// StatusOverloaded is the status the API answers when it is overloaded
// (overloaded_error).
const StatusOverloaded = 529

// MaxRetryAfter caps the wait a server may ask for with retry-after
// (backend.MaxThrottleWait).
const MaxRetryAfter = backend.MaxThrottleWait

// statusError maps a response with a non-2xx status to a *backend.Error
// that says what to do. It reads (a bounded part of) the body.
func (b *Backend) statusError(resp *http.Response, doing, model string) *backend.Error {
	said := serverMessage(backend.ErrorBody(resp.Body))
	e := &backend.Error{Msg: fmt.Sprintf("%s: %s: %s", b.where(), doing, resp.Status)}
	if said != "" {
		e.Msg += ": " + said
	}
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		e.Kind = backend.KindBadRequest
		e.Msg += "; " + b.keyHint()
	case code == http.StatusNotFound && model != "" && strings.Contains(strings.ToLower(said), "model"):
		e.Kind = backend.KindModelMissing
		e.Msg += fmt.Sprintf("; the API has no model %q: check matrix.models against GET %s/v1/models", model, b.base)
	case code == http.StatusNotFound:
		e.Kind = backend.KindBadRequest
		e.Msg += fmt.Sprintf("; no Messages API at %s/v1/messages: base_url must be the API root, e.g. %s", b.base, DefaultBaseURL)
	case tooLong(said, code):
		e.Kind = backend.KindContextOverflow
		e.Msg += "; the conversation does not fit the model's context window: offer fewer tools, or lower limits.max_iterations"
	case code == StatusOverloaded:
		e.SetThrottled(resp.Header, MaxRetryAfter)
	default:
		e.SetStatus(code, resp.Header, MaxRetryAfter)
	}
	return e
}

// keyHint says what to do about a refused API key.
func (b *Backend) keyHint() string {
	if b.keyEnv == "" {
		return "the API wants a key: put it in an environment variable and name that variable in backend.anthropic.api_key_env"
	}
	return fmt.Sprintf("check that $%s (backend.anthropic.api_key_env) holds an Anthropic API key that may use this model", b.keyEnv)
}

// tooLong recognises the API's answer to a prompt longer than the
// model's context window: 400 "prompt is too long: N tokens > M
// maximum", or 413 for a request too large to take at all.
func tooLong(said string, code int) bool {
	low := strings.ToLower(said)
	switch code {
	case http.StatusBadRequest:
		return strings.Contains(low, "prompt is too long") || strings.Contains(low, "context window")
	case http.StatusRequestEntityTooLarge:
		return true
	}
	return false
}

// serverMessage extracts the message from an error body
// ({"type": "error", "error": {"type", "message"}}), or returns the body
// itself, abbreviated.
func serverMessage(body []byte) string {
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error != nil && eb.Error.Message != "" {
		return eb.Error.Error()
	}
	return strings.TrimSpace(backend.Abbreviate(body))
}

// readError maps a failure while reading a reply.
func (b *Backend) readError(ctx context.Context, err error, doing string) error {
	var ae *apiError
	if errors.As(err, &ae) {
		e := &backend.Error{Kind: backend.KindUnavailable, Retryable: true, Msg: fmt.Sprintf("%s: %s: the API reported an error mid-reply: %s", b.where(), doing, ae.Error())}
		switch {
		case ae.Type == "overloaded_error" || ae.Type == "rate_limit_error":
			e.Kind = backend.KindThrottled // the same request, sent again after a wait, may pass
		case tooLong(ae.Message, http.StatusBadRequest):
			e.Kind, e.Retryable = backend.KindContextOverflow, false
		case ae.Type == "invalid_request_error" || ae.Type == "authentication_error" || ae.Type == "permission_error":
			e.Kind, e.Retryable = backend.KindBadRequest, false
		}
		return e
	}
	var g *backend.Garbled
	switch {
	case errors.Is(err, errJunk):
		return &backend.Error{Kind: backend.KindUnavailable, Retryable: true, Msg: fmt.Sprintf("%s: %s: no reply", b.where(), doing), Err: err}
	case errors.As(err, &g) || errors.Is(err, errBrokenStream) || errors.Is(err, io.ErrUnexpectedEOF):
		return &backend.Error{Kind: backend.KindUnavailable, Retryable: true, Msg: fmt.Sprintf("%s: %s: broken reply", b.where(), doing), Err: err}
	}
	return b.transportError(ctx, err, doing)
}

// transportError maps a failure to get a response (or to read one) to a
// *backend.Error.
func (b *Backend) transportError(ctx context.Context, err error, doing string) *backend.Error {
	return backend.TransportError(ctx, err, b.where()+": "+doing)
}
