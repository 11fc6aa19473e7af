package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// What the HTTP backends (ollama, openai, anthropic) share: their default
// client, their request headers and API key, and how a failed request
// becomes a *Error.

// transport is Go's default transport keeping up to 64 idle connections
// per host (the default keeps 2, so a job's workers would reconnect on
// most requests).
var transport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return t
}()

// HTTPClient returns c, or for nil a client with no timeout (requests are
// bounded by their context) on a transport the backends share, which
// keeps up to 64 idle connections per host.
func HTTPClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Transport: transport}
}

// APIKey reads the API key from the environment variable env; "" names
// none and returns no key. A named variable that is unset (or empty) is
// an error: setting (e.g. "openai: backend.openai.api_key_env") names
// $env, which is not set; hint says what to do.
func APIKey(env, setting, hint string) (string, error) {
	if env == "" {
		return "", nil
	}
	key := os.Getenv(env)
	if key == "" {
		return "", fmt.Errorf("%s names $%s, which is not set; %s", setting, env, hint)
	}
	return key, nil
}

// Headers returns the headers of every request of a backend: the
// configured ones, then Content-Type: application/json and set (pairs of
// name and value; a pair with an empty value is left out), which take
// precedence.
func Headers(configured map[string]string, set ...string) http.Header {
	h := http.Header{}
	for k, v := range configured {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(set); i += 2 {
		if set[i+1] != "" {
			h.Set(set[i], set[i+1])
		}
	}
	return h
}

// ListRequest is a preflight's GET of a server's model list: URL with
// the backend's Header (but Content-Type), at most Limit bytes read.
// Refused maps a 401 or 403 answer (a refused key) to its error, Said is
// what the server said in an error body, Unreachable the message for a
// server that cannot be reached; Where names the server.
type ListRequest struct {
	Client      *http.Client
	Header      http.Header
	URL, Where  string
	Limit       int
	Refused     func(*http.Response) *Error
	Said        func([]byte) string
	Unreachable func(err error) string
}

// Get sends the request and decodes the list into dst. It returns the
// answer's headers (nil without an answer); warn when there is no readable
// list (a status other than 2xx, 401 and 403, or an answer that is not a
// list); and err when the request failed (TransportError's, its message
// Unreachable's when no server answered) or the key was refused.
func (l *ListRequest) Get(ctx context.Context, dst any) (hdr http.Header, warn, err error) {
	shown, _, _ := strings.Cut(l.URL, "?")
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, l.URL, nil)
	if err != nil {
		return nil, nil, err
	}
	hr.Header = l.Header.Clone()
	hr.Header.Del("Content-Type")
	resp, err := l.Client.Do(hr)
	if err != nil {
		e := TransportError(ctx, err, l.Where+": listing models")
		if e.Kind == KindUnavailable && e.Retryable {
			e.Msg = l.Unreachable(err)
		}
		return nil, nil, e
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return resp.Header, nil, l.Refused(resp)
	case code/100 != 2:
		warn := fmt.Errorf("GET %s answered %s", shown, resp.Status)
		if said := l.Said(ErrorBody(resp.Body)); said != "" {
			warn = fmt.Errorf("%w: %s", warn, said)
		}
		return resp.Header, warn, nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, int64(l.Limit))).Decode(dst); err != nil {
		return resp.Header, fmt.Errorf("%s: not a model list: %v", shown, err), nil
	}
	return resp.Header, nil, nil
}

// MaxErrorBody bounds how much of an error response is read.
const MaxErrorBody = 64 << 10

// ErrorBody reads at most MaxErrorBody bytes of an error response's body.
func ErrorBody(r io.Reader) []byte {
	body, _ := io.ReadAll(io.LimitReader(r, MaxErrorBody))
	return body
}

// SetThrottled makes e a throttled answer (KindThrottled, retryable)
// carrying the wait h asks for (RetryAfter, at most limit), which its
// message says when there is one.
func (e *Error) SetThrottled(h http.Header, limit time.Duration) {
	e.Kind, e.Retryable = KindThrottled, true
	e.RetryAfter = RetryAfter(h, time.Now(), limit)
	if e.RetryAfter > 0 {
		e.Msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
}

// SetStatus gives e the kind of the statuses every HTTP API means alike,
// for a backend that has mapped those it reads its own way: 408 and 504
// time out, 429 is throttled (SetThrottled), any other 5xx is
// unavailable (with the wait Retry-After asks for, at most limit), all
// else is a bad request. Only timeouts, throttling and 5xx are
// retryable.
func (e *Error) SetStatus(code int, h http.Header, limit time.Duration) {
	switch {
	case code == http.StatusRequestTimeout || code == http.StatusGatewayTimeout:
		e.Kind, e.Retryable = KindTimeout, true
	case code == http.StatusTooManyRequests:
		e.SetThrottled(h, limit)
	case code >= 500:
		e.Kind, e.Retryable = KindUnavailable, true
		e.RetryAfter = RetryAfter(h, time.Now(), limit)
	default:
		e.Kind = KindBadRequest
	}
}

// TransportError maps a failure to get a response (or to read one) from
// where (e.g. "openai-compatible server at …: chat with m") to a *Error:
// a deadline, the context's or the connection's, is a retryable timeout;
// a canceled context is not retryable; anything else is a retryable
// KindUnavailable.
func TransportError(ctx context.Context, err error, where string) *Error {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Retryable: true, Msg: where + ": timed out", Err: context.DeadlineExceeded}
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return &Error{Kind: KindUnavailable, Msg: where + ": canceled", Err: context.Canceled}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: KindTimeout, Retryable: true, Msg: where + ": timed out", Err: err}
	}
	return &Error{Kind: KindUnavailable, Retryable: true, Msg: where, Err: err}
}
