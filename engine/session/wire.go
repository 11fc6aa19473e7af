package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// wire sits under mcp-go's transport on one connection to a command or
// url server and holds the server to Limits while it reads: a message
// over Limits.Message, a message that is not JSON, or too many
// unanswered server-to-client requests stop the reading (mcp-go then
// fails the request in flight), and the first such fault is kept for the
// error the call returns.
type wire struct {
	lim     Limits
	read    atomic.Int64 // bytes read from the server
	pending atomic.Int64 // server-to-client requests not yet answered (stdio)
	// listing is set while tools/list is read: its pages are bounded by
	// Limits.Message and ListBytes, not Limits.Held.
	listing atomic.Bool

	mu  sync.Mutex
	err error
}

func newWire(lim Limits) *wire { return &wire{lim: lim.withDefaults()} }

// fail records err as the connection's fault unless one is recorded,
// and returns the recorded one.
func (w *wire) fail(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
	return w.err
}

// fault returns the recorded fault, or nil.
func (w *wire) fault() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *wire) tooLong() error {
	return w.fail(&LimitError{What: "one message", Limit: int64(w.lim.Message), Name: "session.MaxMessage"})
}

// heldWhat names Limits.Held in its LimitError.
const heldWhat = "one message with its strings clipped"

// held fails when n bytes of one clipped message are more than toolward
// holds (Limits.Held), outside a tools/list.
func (w *wire) held(n int) error {
	if n <= w.lim.Held || w.listing.Load() {
		return nil
	}
	return w.fail(&LimitError{What: heldWhat, Limit: int64(w.lim.Held), Name: "session.MaxHeld"})
}

// keepBuf is the largest buffer a reader keeps for its next message; a
// longer one (a long answer's) is let go once passed on.
const keepBuf = 1 << 20

func reuse(b []byte) []byte {
	if cap(b) > keepBuf {
		return nil
	}
	return b[:0]
}

// quoteLen is how much of a bad message an error quotes.
const quoteLen = 200

func quote(b []byte) string {
	return cut(printable(string(bytes.ToValidUTF8(b[:min(len(b), quoteLen+4)], []byte("\uFFFD")))), quoteLen)
}

// checkMessage fails unless msg is one JSON-RPC message: a JSON object
// that Go's decoder accepts (which includes nesting at most 10,000
// levels deep). A server-to-client request counts as pending.
func (w *wire) checkMessage(msg []byte) error {
	if err := w.checkEvent(msg); err != nil {
		return err
	}
	return w.countRequest(msg)
}

// countRequest counts msg, a checked message, as pending when it is a
// server-to-client request, failing past Limits.Pending.
func (w *wire) countRequest(msg []byte) error {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) == nil && m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" {
		if w.pending.Add(1) > int64(w.lim.Pending) {
			return w.fail(&LimitError{What: "server-to-client requests not yet answered (a server that does not take toolward's answers)", Limit: int64(w.lim.Pending), Name: "session.MaxPending"})
		}
	}
	return nil
}

// answered counts one answer to a server-to-client request as taken.
func (w *wire) answered() {
	if w.pending.Add(-1) < 0 {
		w.pending.Store(0)
	}
}

// nestedTooDeep reports whether b opens more than 10,000 arrays or
// objects at once, outside strings.
func nestedTooDeep(b []byte) bool {
	depth, inStr, esc := 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case inStr:
			switch c {
			case '\\':
				esc = true
			case '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			if depth++; depth > 10_000 {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// readLine reads one line of at most max bytes (its newline included)
// from br, appending it to buf with its strings clipped by c (within
// Limits.Held). At the end of the stream it returns what it has with
// io.EOF.
func (w *wire) readLine(br *bufio.Reader, buf []byte, max int, c *clipper) ([]byte, error) {
	c.reset()
	for {
		chunk, err := br.ReadSlice('\n')
		w.read.Add(int64(len(chunk)))
		if c.read+len(chunk) > max {
			return buf, w.tooLong()
		}
		buf = c.add(buf, chunk)
		if err := w.held(len(buf)); err != nil {
			return buf, err
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return buf, err
	}
}

// unitReader serves a stream one checked unit (a line, an event) at a
// time: next produces the next unit or an error, which ends the stream.
type unitReader struct {
	next func() ([]byte, error)
	out  []byte
	off  int
	err  error
}

func (u *unitReader) Read(p []byte) (int, error) {
	for u.off == len(u.out) {
		if u.err != nil {
			return 0, u.err
		}
		u.out, u.err = u.next()
		u.off = 0
	}
	n := copy(p, u.out[u.off:])
	u.off += n
	return n, nil
}

// stdout wraps a stdio server's stdout: each line is checked as it
// completes (blank lines pass). A fault ends the stream with io.EOF, so
// that mcp-go closes the transport (failing the call in flight at once)
// without logging; the fault is in w.
func (w *wire) stdout(r io.Reader) io.Reader {
	br := bufio.NewReaderSize(r, 64<<10)
	c := newClipper(w.lim.String)
	var line []byte
	return &unitReader{next: func() ([]byte, error) {
		var err error
		line, err = w.readLine(br, reuse(line), w.lim.Message, c)
		if err != nil && !errors.Is(err, io.EOF) {
			if w.fault() == nil {
				return nil, err
			}
			return nil, io.EOF
		}
		if t := bytes.TrimSpace(line); len(t) > 0 && err == nil {
			if w.checkMessage(t) != nil {
				return nil, io.EOF
			}
		}
		return line, err
	}}
}

// stdin wraps a stdio server's stdin, counting the answers toolward
// writes to server-to-client requests. mcp-go writes one message per
// Write.
type stdinWriter struct {
	w   *wire
	dst io.WriteCloser
}

func (s *stdinWriter) Write(p []byte) (int, error) {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	n, err := s.dst.Write(p)
	if json.Unmarshal(p, &m) != nil || m.Method != "" || len(m.ID) == 0 {
		return n, err
	}
	s.w.answered()
	// An answer that cannot be written is lost with the connection, which
	// is over; mcp-go would only log the error.
	return len(p), nil
}

func (s *stdinWriter) Close() error { return s.dst.Close() }

// roundTripper bounds the bodies of a url server's answers: an event
// stream event by event (sseBody), anything else as one message; and
// it bounds how often the GET event stream is asked for (listenAnswer).
// There is one per connection.
type roundTripper struct {
	w    *wire
	base http.RoundTripper
	// refusals counts the GET event stream's refusals in a row.
	refusals atomic.Int32
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if isAnswer(req) {
		// An answer to a server-to-client request is pending until the
		// server has taken it (its POST is over).
		defer t.w.answered()
	}
	resp, err := t.base.RoundTrip(req)
	if isListen(req) {
		resp, err = t.listenAnswer(req, resp, err)
	}
	if err != nil {
		return nil, err
	}
	body := &limitedBody{w: t.w, rc: resp.Body}
	switch mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); {
	case mt == "text/event-stream":
		resp.Body = t.w.sseBody(resp.Body)
	case mt == "application/json" && resp.StatusCode == http.StatusOK:
		resp.Body = t.w.checkedBody(body)
	default:
		resp.Body = body
	}
	return resp, nil
}

// isListen reports whether req asks for the GET event stream, where
// the server sends what it has outside any request (a GET with
// Last-Event-ID resumes a POST's stream instead).
func isListen(req *http.Request) bool {
	return req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") == ""
}

// listenAnswer passes on the server's answer to a GET for the event
// stream, counting it as a refusal unless it opens a stream (or is a 404,
// which mcp-go takes for the session's end). Past Limits.StreamRefusals
// refusals in a row, or at once for a refusal that will not change
// (finalRefusal), the answer becomes a 405 Method Not Allowed: the MCP
// specification's "no GET stream here", on which mcp-go stops asking.
func (t *roundTripper) listenAnswer(req *http.Request, resp *http.Response, err error) (*http.Response, error) {
	if err != nil && req.Context().Err() != nil {
		return resp, err // the connection is closing
	}
	if err == nil {
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		switch {
		case resp.StatusCode == http.StatusNotFound:
			return resp, nil
		case (resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted) && mt == "text/event-stream":
			t.refusals.Store(0)
			return resp, nil
		}
	}
	if n := t.refusals.Add(1); n < int32(t.w.lim.StreamRefusals) && !finalRefusal(resp) {
		return resp, err
	}
	if resp != nil {
		resp.Body.Close()
	}
	const msg = "toolward stops asking for the event stream: the server refused it (see session.MaxStreamRefusals)"
	return &http.Response{
		Status:     "405 Method Not Allowed",
		StatusCode: http.StatusMethodNotAllowed,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
		Body:          io.NopCloser(strings.NewReader(msg)),
		ContentLength: int64(len(msg)),
		Request:       req,
	}, nil
}

// finalRefusal reports whether resp refuses the event stream for good:
// a 4xx that asking again cannot change (not 401: a new token may help;
// not 408 or 429: they say "later"), or a success that is not a stream.
func finalRefusal(resp *http.Response) bool {
	if resp == nil {
		return false
	}
	switch c := resp.StatusCode; {
	case c == http.StatusUnauthorized, c == http.StatusRequestTimeout, c == http.StatusTooManyRequests:
		return false
	case c >= 400 && c < 500, c >= 200 && c < 300:
		return true
	}
	return false
}

// isAnswer reports whether req POSTs toolward's answer to a request of
// the server's (mcp-go's bodies can be read again through GetBody).
func isAnswer(req *http.Request) bool {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return false
	}
	rc, err := req.GetBody()
	if err != nil {
		return false
	}
	defer rc.Close()
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	return json.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(&m) == nil && m.Method == "" && len(m.ID) > 0
}

// checkedBody reads a JSON answer whole (within Limits.Message), its
// strings clipped as they come (within Limits.Held), and checks it as
// one message before passing it on.
func (w *wire) checkedBody(b *limitedBody) io.ReadCloser {
	done := false
	u := &unitReader{next: func() ([]byte, error) {
		if done {
			return nil, io.EOF
		}
		done = true
		msg, err := w.readClipped(b)
		if err != nil {
			return nil, err
		}
		if t := bytes.TrimSpace(msg); len(t) > 0 {
			if err := w.checkEvent(t); err != nil {
				return nil, err
			}
		}
		return msg, io.EOF
	}}
	return struct {
		io.Reader
		io.Closer
	}{u, b}
}

// readClipped reads r to its end, clipping its strings as they come.
func (w *wire) readClipped(r io.Reader) ([]byte, error) {
	c := newClipper(w.lim.String)
	chunk := make([]byte, 32<<10)
	var msg []byte
	for {
		n, err := r.Read(chunk)
		msg = c.add(msg, chunk[:n])
		if herr := w.held(len(msg)); herr != nil {
			return nil, herr
		}
		switch {
		case errors.Is(err, io.EOF):
			return msg, nil
		case err != nil:
			return nil, err
		}
	}
}

// limitedBody fails once more than Limits.Message bytes were read.
type limitedBody struct {
	w  *wire
	rc io.ReadCloser
	n  int
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if room := b.w.lim.Message + 1 - b.n; len(p) > room {
		p = p[:room]
	}
	n, err := b.rc.Read(p)
	b.n += n
	b.w.read.Add(int64(n))
	if b.n > b.w.lim.Message {
		return 0, b.w.tooLong()
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// sseBody wraps an event stream. It passes each event on once it is
// complete (its blank line read) and checked: at most Limits.Message
// bytes of fields, data that is one JSON-RPC message. Comment lines are
// dropped as they come (each bounded as a line), so a stream of comments
// costs no memory. A fault fails the read with the fault itself (the
// stream's end would make mcp-go resume it).
func (w *wire) sseBody(rc io.ReadCloser) io.ReadCloser {
	br := bufio.NewReaderSize(rc, 64<<10)
	c := newClipper(w.lim.String)
	var event, data, line []byte
	hasData := false
	u := &unitReader{next: func() ([]byte, error) {
		event, data, hasData = reuse(event), reuse(data), false
		for sent := 0; ; { // sent: the event's bytes as the server sent them
			var err error
			line, err = w.readLine(br, reuse(line), w.lim.Message, c)
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			eof := err != nil
			t := bytes.TrimRight(line, "\r\n")
			if len(t) > 0 && t[0] != ':' { // a field; comments are dropped
				if sent += c.read; sent > w.lim.Message {
					return nil, w.tooLong()
				}
				if err := w.held(len(event) + len(t) + 1); err != nil {
					return nil, err
				}
				event = append(append(event, t...), '\n')
				if v, ok := bytes.CutPrefix(t, []byte("data:")); ok {
					if hasData {
						data = append(data, '\n')
					}
					hasData = true
					data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
				}
			}
			blank := len(t) == 0 && len(line) > 0
			if !blank && !eof {
				continue
			}
			if len(event) == 0 {
				if eof {
					return nil, io.EOF
				}
				continue // a blank line with no event
			}
			if hasData && len(bytes.TrimSpace(data)) > 0 {
				if err := w.checkEvent(data); err != nil {
					return nil, err
				}
				if err := w.countRequest(data); err != nil {
					return nil, err
				}
			}
			if eof {
				return append(event, '\n'), io.EOF
			}
			return append(event, '\n'), nil
		}
	}}
	return struct {
		io.Reader
		io.Closer
	}{u, rc}
}

// checkEvent checks an event's data or a JSON body as one message.
func (w *wire) checkEvent(data []byte) error {
	t := bytes.TrimSpace(data)
	if !json.Valid(t) {
		what := "a message that is not JSON"
		if nestedTooDeep(t) {
			what = "a message nested deeper than the 10,000 levels Go's JSON decoder allows"
		}
		return w.fail(&ProtocolError{Msg: what, Quote: quote(t)})
	}
	if t[0] != '{' {
		return w.fail(&ProtocolError{Msg: "a JSON value that is not a JSON-RPC message (an object)", Quote: quote(t)})
	}
	return nil
}
