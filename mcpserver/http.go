package mcpserver

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

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
	// MaxStreams caps concurrently open GET event streams (405 when
	// reached: see HTTPHandler).
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
	o.MaxBodyBytes = positiveOr(o.MaxBodyBytes, DefaultMaxBodyBytes)
	o.MaxSessions = positiveOr(o.MaxSessions, DefaultMaxSessions)
	o.MaxStreams = positiveOr(o.MaxStreams, DefaultMaxStreams)
	o.MaxRequests = positiveOr(o.MaxRequests, DefaultMaxRequests)
	o.MaxConns = positiveOr(o.MaxConns, DefaultMaxConns)
	o.SessionIdleTTL = positiveOr(o.SessionIdleTTL, DefaultSessionIdleTTL)
	o.ReadHeaderTimeout = positiveOr(o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	o.IdleTimeout = positiveOr(o.IdleTimeout, DefaultIdleTimeout)
	o.BodyTimeout = positiveOr(o.BodyTimeout, DefaultBodyTimeout)
	o.WriteTimeout = positiveOr(o.WriteTimeout, DefaultWriteTimeout)
	return o
}

// positiveOr is v, or d when v is not positive.
func positiveOr[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
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
//     for an unknown one) and find one of MaxStreams free. Past the
//     limit the answer is 405 Method Not Allowed, the MCP specification's
//     way for a server to say it offers no GET stream: a client stops
//     asking (mcp-go's does), where it would retry a 503 every second
//     for as long as it lives. The session works on without the stream,
//     its server-to-client requests riding on the POST streams. The
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
		// 405, not 503: see HTTPHandler.
		w.Header().Set("Allow", "POST, DELETE")
		refuse(w, http.StatusMethodNotAllowed, fmt.Sprintf("no event stream for this session: %d event streams are open, the limit (the session works without one; close a stream, or raise --max-streams)", t.opts.MaxStreams))
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
