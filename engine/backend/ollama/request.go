package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ollama/ollama/auth"
)

// maxAnswerBytes bounds one answer to the small requests (/api/version,
// /api/tags, /api/show); a chat reply has its own bound (MaxReplyBytes).
const maxAnswerBytes = 4 << 20

// send makes one request to the server, path being under its base URL,
// and returns a response whose status is under 400; the body of a higher
// one is read (at most maxErrorBody) into statusError's error. Every
// request of the backend goes through here, signed ones too (signer).
func (b *Backend) send(ctx context.Context, method, path string, body []byte, accept string) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, b.host+path, r)
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", accept)
	hreq.Header.Set("User-Agent", userAgent)
	resp, err := b.http.Do(hreq)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= http.StatusBadRequest {
		defer resp.Body.Close()
		return nil, statusError(resp)
	}
	return resp, nil
}

// call sends in as JSON (nil: no body) and decodes the answer into out,
// reading at most b.answerLimit bytes of it.
func (b *Backend) call(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	resp, err := b.send(ctx, method, path, body, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(b.answerLimit)+1))
	if err != nil {
		return err
	}
	if len(data) > b.answerLimit {
		return &answerTooLong{path: path, limit: b.answerLimit}
	}
	return json.Unmarshal(data, out)
}

// answerTooLong is call's error for an answer over its bound.
type answerTooLong struct {
	path  string
	limit int
}

func (e *answerTooLong) Error() string {
	return fmt.Sprintf("the answer to %s is longer than %d bytes", e.path, e.limit)
}

// signer signs every request as Ollama's own client does for ollama.com
// (or with OLLAMA_AUTH set): a ts query parameter, and an Authorization
// header holding "METHOD,PATH?ts=TS" signed with the user's key
// (~/.ollama/id_ed25519, made by `ollama signin`), PATH being the
// request's path under the base URL. It is the only difference between
// a signed host and a local one: reading the answers is the same.
type signer struct {
	base     http.RoundTripper
	basePath string // the base URL's path, "" for most hosts
}

func (s *signer) RoundTrip(req *http.Request) (*http.Response, error) {
	now := strconv.FormatInt(time.Now().Unix(), 10)
	path := strings.TrimPrefix(req.URL.Path, s.basePath)
	token, err := auth.Sign(req.Context(), []byte(req.Method+","+path+"?ts="+now))
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &signError{host: req.URL.Host, err: err}
	}
	r := req.Clone(req.Context())
	q := r.URL.Query()
	q.Set("ts", now)
	r.URL.RawQuery = q.Encode()
	r.Header.Set("Authorization", token)
	return s.base.RoundTrip(r)
}

// signError is a request that could not be signed (no key).
type signError struct {
	host string
	err  error
}

func (e *signError) Error() string {
	return fmt.Sprintf("cannot sign requests to %s: %v (sign in with `ollama signin`, which makes ~/.ollama/id_ed25519)", e.host, e.err)
}

func (e *signError) Unwrap() error { return e.err }

// signing returns c with its transport under a signer for base.
func signing(c *http.Client, basePath string) *http.Client {
	s := *c
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	s.Transport = &signer{base: rt, basePath: strings.TrimRight(basePath, "/")}
	return &s
}
