package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/mcpserver/sqlbox"
)

// Limits of both transports. HTTPOptions fields left zero take these.
const (
	// DefaultMaxBodyBytes caps one HTTP request body and one stdio line.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxSessions caps concurrent HTTP sessions. A request outside
	// a session (an initialize, or any request of a stateless 2026-07-28
	// client) counts as one while it runs. Each session owns a sandbox
	// whose query connection may hold up to sqlbox.MaxHeap, so the
	// sandboxes of all sessions stay under about
	// DefaultMaxSessions × SessionMemory (8 × 144 MiB ≈ 1.1 GiB).
	DefaultMaxSessions = 8
	// DefaultMaxStreams caps concurrently open GET event streams.
	DefaultMaxStreams = 16
	// DefaultMaxConns caps open connections; one over it is answered 503
	// and closed at once.
	DefaultMaxConns = 256
	// DefaultMaxRequests caps POST requests served at once, and so the
	// request bodies held once read (64 × DefaultMaxBodyBytes = 64 MiB).
	DefaultMaxRequests = 64
	// DefaultSessionIdleTTL ends HTTP sessions idle this long (checked
	// every half TTL, so a session goes between 1 and 1.5 TTL after its
	// last request).
	DefaultSessionIdleTTL = 30 * time.Minute
	// DefaultReadHeaderTimeout bounds how long a client may take to send
	// a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds how long a client may take to send a
	// request body, counted from the end of its headers.
	DefaultBodyTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds each write of a response (each event of
	// an event stream): a client that stops reading is cut off, while a
	// stream that is merely quiet stays open.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection idle this long.
	DefaultIdleTimeout = 60 * time.Second
)

// SessionMemory is a generous estimate of the memory one session's
// sandbox can hold: the SQLite heap limit of its query connection, plus
// its second connection, database image and WebAssembly instances, plus
// the text of its stored tickets and emails (MaxStoredBytes).
const SessionMemory = sqlbox.MaxHeap + 8<<20 + MaxStoredBytes

// ServeStdio serves one MCP session over in and out (newline-delimited
// JSON-RPC) until in ends or ctx is done. Transport errors are logged to
// errLog (nil: discarded). A last message without a trailing newline is
// served like any other; a line longer than DefaultMaxBodyBytes, a
// JSON-RPC batch, or a line nested deeper than MaxJSONDepth is answered
// with a JSON-RPC error that says which, and skipped.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out, errLog io.Writer) error {
	if errLog == nil {
		errLog = io.Discard
	}
	std := server.NewStdioServer(s.mcp)
	std.SetErrorLogger(log.New(errLog, "toolward serve: ", 0))
	d := &drain{ctx: ctx, pending: map[string]int{}, maxLine: DefaultMaxBodyBytes}
	d.cond = sync.NewCond(&d.mu)
	dw := &drainWriter{d: d, w: out}
	pr, pw := io.Pipe()
	go d.copyIn(in, pw, dw)
	err := std.Listen(ctx, pr, dw)
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// drainTimeout bounds how long stdio waits, after its input ends, for the
// answers to requests already read.
const drainTimeout = 30 * time.Second

// drain holds back the end of stdio input until every request read so
// far has been answered. mcp-go stops its workers as soon as input ends,
// which would drop the answers to the last requests of a client that
// writes its requests and closes stdin. Requests are matched to answers
// by id, so a stray answer (a parse error's, with a null id) cannot
// release the wait early.
type drain struct {
	ctx     context.Context
	maxLine int
	mu      sync.Mutex
	cond    *sync.Cond
	pending map[string]int // request id key → requests awaiting an answer
}

// copyIn copies client lines to w, recording requests, and closes w once
// input has ended and every recorded request is answered (or after
// drainTimeout, or when ctx is done). A last line without a newline gets
// one, so mcp-go reads it as a message instead of dropping it at EOF.
func (d *drain) copyIn(in io.Reader, w *io.PipeWriter, out *drainWriter) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, d.maxLine)
		switch {
		case tooLong:
			out.Write(tooLongAnswer(line, d.maxLine))
		case len(bytes.TrimSpace(line)) > 0:
			if msg := unservableBody(line, "on its own line"); msg != "" {
				out.Write(rpcError(nil, errInvalidRequest, msg))
				break
			}
			d.request(line)
			if line[len(line)-1] != '\n' {
				line = append(line, '\n')
			}
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			break
		}
	}
	d.wait()
	w.Close()
}

// request records line if it is a request (a method and an id).
func (d *drain) request(line []byte) {
	m, ok := parseHead(line)
	if !ok || m.Method == "" {
		return
	}
	if key, ok := idKey(m.ID); ok {
		d.mu.Lock()
		d.pending[key]++
		d.mu.Unlock()
	}
}

// answered records an answer to the request with this id.
func (d *drain) answered(id json.RawMessage) {
	key, ok := idKey(id)
	if !ok {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending[key] > 0 {
		d.pending[key]--
		if d.pending[key] == 0 {
			delete(d.pending, key)
		}
		d.cond.Broadcast()
	}
}

// wait blocks until no request is pending, drainTimeout has passed or
// ctx is done.
func (d *drain) wait() {
	giveUp := func() {
		d.mu.Lock()
		clear(d.pending)
		d.cond.Broadcast()
		d.mu.Unlock()
	}
	deadline := time.AfterFunc(drainTimeout, giveUp)
	defer deadline.Stop()
	defer context.AfterFunc(d.ctx, giveUp)()
	d.mu.Lock()
	for len(d.pending) > 0 {
		d.cond.Wait()
	}
	d.mu.Unlock()
}

// readLine reads one line, newline included if there is one. A line
// longer than max is consumed to its end and returned cut to max bytes
// with tooLong set. err is the read error that ended the input, if any.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, ferr := r.ReadSlice('\n')
		if !tooLong {
			if room := max - len(line); len(frag) > room {
				line = append(line, frag[:room]...)
				tooLong = true
			} else {
				line = append(line, frag...)
			}
		}
		if ferr != bufio.ErrBufferFull {
			return line, tooLong, ferr
		}
	}
}

// tooLongAnswer is the JSON-RPC error answering a line longer than max,
// addressed to the id the line's beginning names, if it names one.
func tooLongAnswer(prefix []byte, max int) []byte {
	return rpcError(leadingID(prefix), mcp.INVALID_REQUEST, fmt.Sprintf("message longer than %d bytes: not processed", max))
}

// errServerBusy is the JSON-RPC error code of a request refused for a
// limit on sessions (-32000 to -32099 are for implementations).
const errServerBusy = -32000

// rpcError is a JSON-RPC error answer, newline included. A nil id is
// sent as null.
func rpcError(id json.RawMessage, code int, msg string) []byte {
	type rpcErr struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcErr          `json:"error"`
	}{"2.0", id, rpcErr{code, msg}})
	return append(b, '\n')
}

// leadingID returns the "id" member of the JSON object prefix begins,
// if it comes before the cut, else nil.
func leadingID(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if t == "id" {
			if _, ok := idKey(v); ok {
				return v
			}
			return nil
		}
	}
	return nil
}

// rpcHead is what drain reads of a JSON-RPC message: a request has a
// method and an id, a notification a method only, an answer an id only.
type rpcHead struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
}

func parseHead(line []byte) (rpcHead, bool) {
	var m rpcHead
	err := json.Unmarshal(line, &m)
	return m, err == nil
}

// idKey canonicalizes a JSON-RPC id (a string or a number), so that a
// request's 1.0 and its answer's 1 match. Other ids (null, objects) are
// not ids a request can be answered under: ok is false.
func idKey(raw json.RawMessage) (key string, ok bool) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return "s" + v, true
	case float64:
		return "n" + strconv.FormatFloat(v, 'g', -1, 64), true
	}
	return "", false
}

// drainWriter passes server output through, one write at a time,
// recording answers.
type drainWriter struct {
	d  *drain
	mu sync.Mutex
	w  io.Writer
}

func (dw *drainWriter) Write(p []byte) (int, error) {
	dw.mu.Lock()
	n, err := dw.w.Write(p)
	dw.mu.Unlock()
	for _, line := range bytes.Split(p, []byte("\n")) {
		if m, ok := parseHead(line); ok && m.Method == "" {
			dw.d.answered(m.ID)
		}
	}
	return n, err
}

// HTTPOptions configure the streamable HTTP transport. Zero fields take
// the Default constants above.
type HTTPOptions struct {
	// Token, if set, must be sent as "Authorization: Bearer <token>";
	// requests without it get 401.
	Token string
	// MaxBodyBytes caps a request body (413 when exceeded).
	MaxBodyBytes int64
	// SessionIdleTTL ends sessions (and drops their sandboxes) idle this
	// long.
	SessionIdleTTL time.Duration
	// MaxSessions caps concurrent sessions, counting a request outside a
	// session as one while it runs (503 when reached).
	MaxSessions int
	// MaxStreams caps concurrently open GET event streams (503 when
	// reached).
	MaxStreams int
	// MaxRequests caps POST requests served at once (503 when reached).
	MaxRequests int
	// MaxConns caps open connections (ListenAndServeHTTP only): one over
	// the cap gets 503 and is closed.
	MaxConns int
	// ReadHeaderTimeout, IdleTimeout: see DefaultReadHeaderTimeout and
	// DefaultIdleTimeout. Only ListenAndServeHTTP applies them: they
	// belong to the http.Server.
	ReadHeaderTimeout, IdleTimeout time.Duration
	// BodyTimeout bounds the time to receive a request body (408 when
	// exceeded).
	BodyTimeout time.Duration
	// WriteTimeout bounds each write of a response or event stream.
	WriteTimeout time.Duration
	// AllowRemote permits ListenAndServeHTTP to bind a non-loopback
	// address. Without it only loopback addresses are accepted.
	AllowRemote bool
}

// withDefaults returns o with its zero limits set to the defaults.
func (o HTTPOptions) withDefaults() HTTPOptions {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	def(&o.SessionIdleTTL, DefaultSessionIdleTTL)
	def(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&o.IdleTimeout, DefaultIdleTimeout)
	def(&o.BodyTimeout, DefaultBodyTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	return o
}

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// HTTPHandler returns the streamable HTTP transport at Path, wrapped in
// the checks below, in this order, all made on the request's headers
// before its body is read:
//
//  1. The Host header must parse (400); a request that arrived on a
//     loopback address must name a loopback Host (and Origin, if any),
//     else 403: DNS-rebinding protection.
//  2. Bearer token, if HTTPOptions.Token is set, compared in constant
//     time, else 401.
//  3. A POST body must arrive within BodyTimeout (408) and fit
//     MaxBodyBytes (413), and be neither a JSON-RPC batch nor nested
//     deeper than MaxJSONDepth (400 with a JSON-RPC error, -32600, that
//     says which); then a request (not an answer to the server)
//     must find one of MaxRequests free (503). A POST outside a live session takes a session
//     slot while it runs, and keeps it if it creates a session; with
//     MaxSessions taken the answer is 503 with a JSON-RPC error.
//  4. A GET (event stream) must name a live session (400 without one, 404
//     for an unknown one) and find one of MaxStreams free (503). The
//     stream ends when its session does.
//
// A refused request is answered at once, and its connection closed after
// at most 1 s more (refuseDrainTimeout) of reading what is left of its
// body, however slowly the client goes on sending it. Every write of a
// response must complete within WriteTimeout.
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	return s.httpTransport(opts)
}

func (s *Server) httpTransport(opts HTTPOptions) *httpTransport {
	opts = opts.withDefaults()
	t := &httpTransport{
		s:        s,
		opts:     opts,
		token:    []byte("Bearer " + opts.Token),
		ids:      &sessionIDs{},
		sessions: &slots{max: opts.MaxSessions, live: s.Sessions},
		streams:  &slots{max: opts.MaxStreams},
		requests: &slots{max: opts.MaxRequests},
	}
	t.mcp = server.NewStreamableHTTPServer(s.mcp,
		server.WithEndpointPath(Path),
		server.WithSessionIdManager(t.ids),
		server.WithSessionIdleTTL(opts.SessionIdleTTL),
	)
	return t
}

// httpTransport is the handler HTTPHandler returns.
type httpTransport struct {
	s        *Server
	opts     HTTPOptions
	token    []byte
	ids      *sessionIDs
	mcp      *server.StreamableHTTPServer
	sessions *slots
	streams  *slots
	requests *slots
}

func (t *httpTransport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		// The body must arrive in time, whether the request is served
		// (readBody) or refused (net/http reads what is left of it before
		// reusing or closing the connection).
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(t.opts.BodyTimeout))
	}
	if r.URL.Path != Path {
		refuse(w, http.StatusNotFound, "not found: the MCP endpoint is "+Path)
		return
	}
	if status, msg := checkHost(r); status != 0 {
		refuse(w, status, msg)
		return
	}
	if t.opts.Token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), t.token) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolward"`)
		refuse(w, http.StatusUnauthorized, "missing or wrong bearer token")
		return
	}
	switch r.Method {
	case http.MethodPost:
		t.post(w, r)
	case http.MethodGet:
		t.get(w, r)
	default:
		t.forward(w, r)
	}
}

// refuseDrainTimeout bounds how long net/http may go on reading the
// body of a refused request after the answer, before it closes the
// connection.
const refuseDrainTimeout = time.Second

// refuse answers with a plain-text error and closes the connection
// afterwards (see closeAfterAnswer).
func refuse(w http.ResponseWriter, status int, msg string) {
	closeAfterAnswer(w)
	http.Error(w, msg, status)
}

// closeAfterAnswer makes the connection close once the handler has
// answered. "Connection: close" sends the answer at once: without it
// net/http would first read what is left of the body, to reuse the
// connection. After answering, net/http still reads up to 256 KiB of the
// body, so that a client still sending sees the answer rather than a
// reset; the read deadline set here bounds that to refuseDrainTimeout,
// so a client that keeps trickling its body after a refusal (a 408
// included, whose body deadline has passed) cannot keep the connection
// open.
func closeAfterAnswer(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(refuseDrainTimeout))
}

// post reads the body within the limits, takes a request slot unless
// the body answers a server request, takes a session slot if the request
// is not served by a live session, and forwards it.
//
// The request slot is taken once the body is in: a client trickling its
// body holds no slot, so slow clients cannot lock out the others.
// Answers (to elicitation/create, say) need none, since the requests
// holding the slots may be waiting for them.
func (t *httpTransport) post(w http.ResponseWriter, r *http.Request) {
	body, status, msg := t.readBody(w, r)
	if status != 0 {
		refuse(w, status, msg)
		return
	}
	if msg := unservableBody(body, "in its own POST"); msg != "" {
		invalidRequest(w, msg)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	// One decode of what the limits below look at; mcp-go decodes the
	// whole message again when it serves it.
	var head postHead
	parsed := json.Unmarshal(body, &head) == nil
	if !parsed || head.Method != "" {
		done, ok := t.requests.acquire()
		if !ok {
			busy(w, head.ID, fmt.Sprintf("server busy: %d requests in progress, the limit (retry, or raise --max-requests)", t.opts.MaxRequests))
			return
		}
		defer done()
	}
	if !t.inSession(r.Header, head, parsed) {
		release, ok := t.sessions.acquire()
		if !ok {
			busy(w, head.ID, fmt.Sprintf("server busy: %d MCP sessions are open, the limit (end one with DELETE %s, let it idle out after %v, or raise --max-sessions)", t.opts.MaxSessions, Path, t.opts.SessionIdleTTL))
			return
		}
		defer release()
	}
	t.forward(w, r)
}

// MaxJSONDepth is the deepest nesting of arrays and objects a request
// body may have: encoding/json, under mcp-go, refuses deeper ones.
const MaxJSONDepth = 10000

// errInvalidRequest is the JSON-RPC error code of a request that is valid
// JSON but not a request the server can serve.
const errInvalidRequest = -32600

// unservableBody says why body (an HTTP body or a stdio line), though
// perhaps valid JSON, cannot be served, or returns "". mcp-go would
// answer both cases as a parse error ("request body is not valid json",
// "Parse error"), which misleads: a JSON-RPC batch (an array; the MCP
// revision 2025-06-18 removed batching), and JSON nested deeper than
// MaxJSONDepth. where says how to send requests one by one.
func unservableBody(body []byte, where string) string {
	if i := bytes.IndexFunc(body, func(r rune) bool { return !isJSONSpace(r) }); i >= 0 && body[i] == '[' {
		return "JSON-RPC batch requests are not supported (MCP 2025-06-18 removed batching): send each request " + where
	}
	if jsonDeeperThan(body, MaxJSONDepth) {
		return fmt.Sprintf("request body nested too deeply: more than %d levels of arrays and objects", MaxJSONDepth)
	}
	return ""
}

func isJSONSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// jsonDeeperThan reports whether the JSON text b opens more than max
// arrays and objects at once. It scans bytes, skipping strings, without
// validating b (the JSON decoder does that afterwards).
func jsonDeeperThan(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > max {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// invalidRequest answers 400 with a JSON-RPC Invalid Request error (id
// null), as mcp-go answers a body it cannot parse.
func invalidRequest(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(rpcError(nil, errInvalidRequest, msg))
}

// readBody reads r's body within BodyTimeout and MaxBodyBytes. On
// failure status and msg say why.
func (t *httpTransport) readBody(w http.ResponseWriter, r *http.Request) (body []byte, status int, msg string) {
	tooLarge := fmt.Sprintf("request body larger than %d bytes", t.opts.MaxBodyBytes)
	if r.ContentLength > t.opts.MaxBodyBytes {
		return nil, http.StatusRequestEntityTooLarge, tooLarge
	}
	// ServeHTTP set the deadline. None once the body is read: the
	// server's background read, which notices a client going away, must
	// not time out.
	defer http.NewResponseController(w).SetReadDeadline(time.Time{})
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, t.opts.MaxBodyBytes))
	var maxErr *http.MaxBytesError
	var netErr net.Error
	switch {
	case err == nil:
		return body, 0, ""
	case errors.As(err, &maxErr):
		return nil, http.StatusRequestEntityTooLarge, tooLarge
	case errors.As(err, &netErr) && netErr.Timeout():
		return nil, http.StatusRequestTimeout, fmt.Sprintf("request body not received within %v", t.opts.BodyTimeout)
	default:
		return nil, http.StatusBadRequest, fmt.Sprintf("reading request body: %v", err)
	}
}

// inSession reports whether a POST needs no session slot: it is served
// by a live session of the 2025 protocols, which owns its sandbox, or
// refused for naming no session. Anything else (an initialize, a
// stateless 2026-07-28 request) may create a session or a throwaway
// sandbox.
func (t *httpTransport) inSession(h http.Header, msg postHead, parsed bool) bool {
	if !parsed {
		return false
	}
	if msg.Method == string(mcp.MethodInitialize) || mcp.IsModernProtocol(h.Get(mcp.HeaderProtocolVersion)) || mcp.IsModernProtocol(msg.Params.Meta.ProtocolVersion()) {
		return false
	}
	id := h.Get(server.HeaderKeySessionID)
	// An id never issued, or ended, gets 404 from mcp-go: no sandbox.
	// An id issued but not yet registered (its initialize still being
	// answered) would get a throwaway one.
	return t.s.hasSession(id) || !t.ids.known(id)
}

// postHead is what post's limits read of a message: its method, id and
// the protocol version its _meta may name.
type postHead struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
	Params struct {
		Meta *mcp.Meta `json:"_meta"`
	} `json:"params"`
}

// busy answers 503 with a JSON-RPC error addressed to the request's id.
func busy(w http.ResponseWriter, id json.RawMessage, msg string) {
	if _, ok := idKey(id); !ok {
		id = nil
	}
	closeAfterAnswer(w)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write(rpcError(id, errServerBusy, msg))
}

// get opens a session's event stream, within MaxStreams, and ends it when
// the session ends.
func (t *httpTransport) get(w http.ResponseWriter, r *http.Request) {
	if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		t.forward(w, r) // mcp-go explains that 2026-07-28 has no GET stream
		return
	}
	id := r.Header.Get(server.HeaderKeySessionID)
	if id == "" {
		refuse(w, http.StatusBadRequest, "GET "+Path+" opens the event stream of a session: send the "+server.HeaderKeySessionID+" header its initialize answer carried")
		return
	}
	if !t.s.hasSession(id) {
		refuse(w, http.StatusNotFound, "unknown or ended MCP session: initialize a new one")
		return
	}
	release, ok := t.streams.acquire()
	if !ok {
		refuse(w, http.StatusServiceUnavailable, fmt.Sprintf("server busy: %d event streams are open, the limit (close one, or raise --max-streams)", t.opts.MaxStreams))
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer t.s.streams.add(id, cancel)()
	t.forward(w, r.WithContext(ctx))
}

// forward hands r to mcp-go, bounding each write by WriteTimeout.
func (t *httpTransport) forward(w http.ResponseWriter, r *http.Request) {
	dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: t.opts.WriteTimeout}
	t.mcp.ServeHTTP(dw, r)
	dw.arm() // for what net/http flushes after the handler returns
}

// deadlineWriter sets a fresh write deadline before every write and
// flush. A single deadline for the whole response (http.Server's
// WriteTimeout) would cut off event streams that are merely long-lived;
// this one only cuts off a client that stops reading.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (dw *deadlineWriter) arm() { dw.rc.SetWriteDeadline(time.Now().Add(dw.timeout)) }

func (dw *deadlineWriter) Write(p []byte) (int, error) {
	dw.arm()
	return dw.ResponseWriter.Write(p)
}

// Flush implements http.Flusher, which mcp-go needs to stream.
func (dw *deadlineWriter) Flush() {
	dw.arm()
	dw.rc.Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (dw *deadlineWriter) Unwrap() http.ResponseWriter { return dw.ResponseWriter }

// slots is a counting limit: acquire succeeds while live() plus the
// slots held stays below max.
type slots struct {
	max  int
	live func() int // nil: nothing but the held slots counts

	mu   sync.Mutex
	held int
}

// acquire takes a slot, reporting false if none is free. release gives
// it back; call it once.
func (sl *slots) acquire() (release func(), ok bool) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	n := sl.held
	if sl.live != nil {
		n += sl.live()
	}
	if n >= sl.max {
		return nil, false
	}
	sl.held++
	return sync.OnceFunc(func() {
		sl.mu.Lock()
		sl.held--
		sl.mu.Unlock()
	}), true
}

// sessionIDs issues and checks HTTP session ids. Unlike mcp-go's
// InsecureStatefulSessionIdManager it forgets an id once the session
// ends, so its memory follows the live sessions, not all that ever were.
// Ids issued to an initialize that never became a session are forgotten
// by mcp-go's idle sweeper, which terminates them.
type sessionIDs struct {
	ids sync.Map // id → struct{}
}

const sessionIDPrefix = "mcp-session-"

// Generate implements server.SessionIdManager.
func (m *sessionIDs) Generate() string {
	id := sessionIDPrefix + rand.Text()
	m.ids.Store(id, struct{}{})
	return id
}

// Validate implements server.SessionIdManager: an unknown id (never
// issued, or ended) is an error, which mcp-go answers with 404.
func (m *sessionIDs) Validate(id string) (isTerminated bool, err error) {
	if !m.known(id) {
		return false, fmt.Errorf("unknown or ended session %q", id)
	}
	return false, nil
}

// known reports whether id was issued and has not ended.
func (m *sessionIDs) known(id string) bool {
	_, ok := m.ids.Load(id)
	return ok
}

// Terminate implements server.SessionIdManager.
func (m *sessionIDs) Terminate(id string) (isNotAllowed bool, err error) {
	m.ids.Delete(id)
	return false, nil
}

// streamSet holds the cancel functions of open event streams by session
// id, so that a session's end ends its streams.
type streamSet struct {
	mu   sync.Mutex
	seq  uint64
	byID map[string]map[uint64]context.CancelFunc
}

// add registers a stream of session id; remove unregisters it.
func (ss *streamSet) add(id string, cancel context.CancelFunc) (remove func()) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID == nil {
		ss.byID = map[string]map[uint64]context.CancelFunc{}
	}
	if ss.byID[id] == nil {
		ss.byID[id] = map[uint64]context.CancelFunc{}
	}
	ss.seq++
	n := ss.seq
	ss.byID[id][n] = cancel
	return func() {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		delete(ss.byID[id], n)
		if len(ss.byID[id]) == 0 {
			delete(ss.byID, id)
		}
	}
}

// end cancels every stream of session id.
func (ss *streamSet) end(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, cancel := range ss.byID[id] {
		cancel()
	}
}

// checkHost returns why r must be refused, as a status and a message, or
// 0. A Host that does not parse is refused everywhere (400). Only
// requests that arrived on a loopback address are checked further, as a
// possible DNS-rebinding attack: their Host and Origin must be loopback
// names (403).
func checkHost(r *http.Request) (int, string) {
	host, ok := hostOf(r.Host)
	if !ok {
		return http.StatusBadRequest, fmt.Sprintf("bad request: malformed Host %q", r.Host)
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopback(local.String()) {
		return 0, ""
	}
	if !isLoopbackHost(host) {
		return http.StatusForbidden, fmt.Sprintf("forbidden: Host %q is not a loopback name", r.Host)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !isLoopback(u.Host) {
			return http.StatusForbidden, fmt.Sprintf("forbidden: Origin %q is not a loopback origin", o)
		}
	}
	return 0, ""
}

// hostOf returns the host of hostport, a Host header value ("name",
// "name:port", "1.2.3.4:port", "[::1]:port"; the port optional), or
// false if it is malformed: an unclosed bracket, a bare IPv6 address, a
// port that is not a number up to 65535.
func hostOf(hostport string) (string, bool) {
	host, port := hostport, ""
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", false
		}
		host, port = hostport[1:end], hostport[end+1:]
		if ip, err := netip.ParseAddr(host); err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", false
		}
		if port != "" {
			if port[0] != ':' || len(port) == 1 {
				return "", false
			}
			port = port[1:]
		}
	} else {
		if h, p, found := strings.Cut(hostport, ":"); found {
			host, port = h, p
			if port == "" {
				return "", false
			}
		}
		if host == "" || strings.ContainsAny(host, "[]") {
			return "", false
		}
	}
	if port != "" {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil || len(port) > 5 {
			return "", false
		}
	}
	return host, true
}

// isLoopback reports whether a host:port, or a host (a Host header
// value), names the loopback interface.
func isLoopback(hostport string) bool {
	host, ok := hostOf(hostport)
	return ok && isLoopbackHost(host)
}

// isLoopbackHost reports whether a bare host (a name or an IP address,
// IPv6 without brackets) is loopback.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// CheckListenAddr refuses a non-loopback listen address unless
// allowRemote is set. An empty host (":8765") means every interface and
// is refused too.
func CheckListenAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %v (want host:port, e.g. 127.0.0.1:8765)", addr, err)
	}
	if allowRemote {
		return nil
	}
	if host == "" || !isLoopbackHost(host) {
		return fmt.Errorf("refusing to listen on %q: not a loopback address (use 127.0.0.1, or allow remote access explicitly)", addr)
	}
	return nil
}

// ListenAndServeHTTP serves HTTPHandler(opts) on addr until ctx is done.
// ready, if not nil, is called with the bound address once listening
// (useful with port 0).
func (s *Server) ListenAndServeHTTP(ctx context.Context, addr string, opts HTTPOptions, ready func(net.Addr)) error {
	if err := CheckListenAddr(addr, opts.AllowRemote); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ln = limitConns(ln, opts.withDefaults().MaxConns)
	srv, t := s.httpServer(opts)
	// Shutdown waits for connections to go idle; an event stream never
	// does until its session ends.
	srv.RegisterOnShutdown(func() { t.mcp.Shutdown(context.Background()) })
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
		return nil
	}
}

// httpServer is the http.Server ListenAndServeHTTP runs, and its handler. It has no
// ReadTimeout or WriteTimeout: those would cut off long-lived event
// streams. HTTPHandler bounds bodies and writes per request instead.
func (s *Server) httpServer(opts HTTPOptions) (*http.Server, *httpTransport) {
	opts = opts.withDefaults()
	t := s.httpTransport(opts)
	return &http.Server{
		Handler:           t,
		ReadHeaderTimeout: opts.ReadHeaderTimeout,
		IdleTimeout:       opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}, t
}

// limitConns returns ln accepting at most max connections at a time.
// A connection over the cap is answered 503 and closed, rather than left
// waiting in the backlog for a slot.
func limitConns(ln net.Listener, max int) net.Listener {
	return &connLimit{Listener: ln, max: max, slots: make(chan struct{}, max)}
}

type connLimit struct {
	net.Listener
	max   int
	slots chan struct{}
}

// Accept implements net.Listener.
func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
		default:
			l.refuse(c)
		}
	}
}

// refuse answers c with 503 and closes it. The answer fits in the empty
// send buffer of a new connection; the deadline is a safeguard.
func (l *connLimit) refuse(c net.Conn) {
	msg := fmt.Sprintf("server busy: %d connections are open, the limit\n", l.max)
	c.SetWriteDeadline(time.Now().Add(time.Second))
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(msg), msg)
	c.Close()
}

// limitedConn gives its slot back when closed.
type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	c.release()
	return c.Conn.Close()
}
