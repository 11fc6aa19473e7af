package session

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// Confirm modes (defined with the confirm axis, in package schema/cell).
const (
	ConfirmAuto    = cell.ConfirmAuto
	ConfirmApprove = cell.ConfirmApprove
	ConfirmDeny    = cell.ConfirmDeny
)

// Confirm decisions recorded on a call (defined with the trace format,
// in package schema/record).
const (
	Approved = record.Approved
	Denied   = record.Denied
)

// Error is an infrastructure failure talking to the MCP server.
type Error struct {
	Kind      string // "mcp" or "timeout"
	Msg       string
	Retryable bool
	Err       error
	// Stderr, set when a command server failed to start (Open), quotes
	// the first lines of its stderr, where the cause usually is; Hint
	// then says what its environment lacked. Error appends both on lines
	// of their own.
	Stderr string
	Hint   string
}

func (e *Error) Error() string {
	msg := e.Msg
	if e.Err != nil {
		msg += ": " + undouble(e.Err.Error())
	}
	if e.Hint != "" {
		return msg + e.Stderr + "\n" + e.Hint
	}
	return msg + e.Stderr
}

func (e *Error) Unwrap() error { return e.Err }

// Options configure a Source. Exactly one of Server's fields is used;
// Builtin must be set when Server.Builtin is.
type Options struct {
	Server schema.Server
	// Builtin is the in-process server for Server.Builtin. Each Session
	// connects to it with its own in-process client.
	Builtin *server.MCPServer
	// Stderr receives a command server's stderr; nil discards it. The
	// server's environment is CommandEnv's.
	Stderr io.Writer
	// ClientVersion is sent as the MCP client version ("" means "dev").
	ClientVersion string
	// Warm is how many processes an isolation "run" command server keeps
	// started ahead of the runs (the engine passes server.warm, or its
	// number of workers); 0 means 1.
	Warm int
	// HandshakeTimeout bounds the initialize handshake of each connection
	// a Session opens (the engine passes limits.call_timeout), so that a
	// hung server costs that long per run rather than the run timeout;
	// 0 means none. Open's own connection is bounded by Open's context.
	HandshakeTimeout time.Duration
	// Limits bound what a command or url server may send (see MaxMessage
	// and the constants next to it); zero fields mean those values.
	Limits Limits
}

// Source is one MCP server for the length of a job. It is safe for
// concurrent use.
type Source struct {
	opts   Options
	info   Info
	listed []mcp.Tool
	dups   []string // names listed more than once
	// probeOnly are the tools kept from the model, for state probes
	// (schema.Server.ProbeOnly, or marked schema.ProbeOnlyMeta).
	probeOnly []mcp.Tool
	tools     []toolset.Tool
	gated     map[string]bool

	oauth  *oauthClient    // url servers with server.oauth, else nil
	life   context.Context // bounds subprocesses
	cancel context.CancelFunc

	warm *warmPool // isolation "run": processes started ahead of the runs
	runs *runDirs  // isolation "run": where the runs' directories are made

	mu     sync.Mutex
	idle   []*conn
	closed bool
}

type conn struct {
	c      *client.Client
	h      *elicitor
	hello  *mcp.InitializeResult // the server's answer to initialize
	stderr *stderrHead           // nil unless a command server
	cmd    *exec.Cmd             // the subprocess of a command server, else nil
	wire   *wire                 // nil for the builtin server
	runDir string                // the run's own directory (isolation "run"), removed on close
}

// close ends the connection. A broken one's command server is killed
// with its process group first: it may be hung, and a graceful close
// would wait for it (seconds) for nothing. Otherwise the server gets the
// graceful close (stdin closed, then signals) and whatever it started
// and left behind in its group is killed after.
func (c *conn) close(broken bool) error {
	if broken {
		killGroup(c.cmd)
	}
	err := c.c.Close() // for a command server: closes its stdin
	if c.cmd != nil {
		if werr := reap(c.cmd); err == nil {
			err = werr
		}
	}
	killGroup(c.cmd)
	if c.runDir != "" {
		os.RemoveAll(c.runDir)
	}
	return err
}

// Graceful close of a command server: after its stdin closes it has
// gracefulExit to exit, then SIGTERM and termExit more, then SIGKILL.
const (
	gracefulExit = 2 * time.Second
	termExit     = 3 * time.Second
)

// reap waits for a command server to exit, ending it if it does not.
func reap(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(gracefulExit):
	}
	terminate(cmd)
	select {
	case err := <-done:
		return err
	case <-time.After(termExit):
	}
	killGroup(cmd)
	_ = cmd.Process.Kill()
	return <-done
}

// Info is what a server says about itself in the initialize handshake.
type Info struct {
	Name            string // serverInfo.name
	Version         string // serverInfo.version
	ProtocolVersion string // the protocol version it chose
}

// Open connects to the server, lists its tools and keeps them. When a
// command server fails to start, the *Error quotes the first lines of its
// stderr.
func Open(ctx context.Context, opts Options) (*Source, error) {
	switch n := countSet(opts.Server); {
	case n != 1:
		return nil, fmt.Errorf("session: server must set exactly one of builtin, command, url (got %d)", n)
	case opts.Server.Builtin != nil && opts.Builtin == nil:
		return nil, errors.New("session: builtin server requested but none given")
	}
	s := &Source{opts: opts}
	if srv := opts.Server; srv.Isolation == schema.IsolationRun && len(srv.Command) > 0 {
		if srv.Seed != "" {
			if err := checkSeed(srv.Seed, opts.Limits.withDefaults().SeedBytes); err != nil {
				return nil, &Error{Kind: "mcp", Msg: "preparing the runs' directories for " + s.describe(), Err: err}
			}
		}
		var err error
		if s.runs, err = openRunDirs(); err != nil {
			return nil, &Error{Kind: "mcp", Msg: "making the runs' directory for " + s.describe(), Err: err}
		}
	}
	if o := opts.Server.OAuth; o != nil && opts.Server.URL != "" {
		s.oauth = newOAuthClient(*o, opts.Server.URL, http.DefaultTransport)
	}
	s.life, s.cancel = context.WithCancel(context.Background())
	c, err := s.dial(ctx, true)
	if err != nil {
		s.cancel()
		s.runs.close()
		return nil, err
	}
	s.info = Info{Name: c.hello.ServerInfo.Name, Version: c.hello.ServerInfo.Version, ProtocolVersion: c.hello.ProtocolVersion}
	if err := s.list(ctx, c); err != nil {
		c.close(false)
		s.cancel()
		s.runs.close()
		return nil, withStderr(err, c.stderr)
	}
	s.startWarm()
	s.put(c, false)
	return s, nil
}

// withStderr adds the quoted beginning of a command server's stderr to a
// start-up error. Call it after closing the connection, so that the
// stream is complete.
func withStderr(err error, h *stderrHead) error {
	var se *Error
	if q := h.quote(); q != "" && errors.As(err, &se) {
		se.Stderr = q
	}
	return err
}

// list fills the source's tools from the server's listing.
func (s *Source) list(ctx context.Context, c *conn) error {
	all, err := s.listPages(ctx, c)
	if err != nil {
		if f := c.wire.fault(); f != nil {
			err = f
		}
		return &Error{Kind: "mcp", Msg: "listing tools of " + s.describe(), Err: err}
	}
	// TODO: the input schema is what mcp-go's client decoded: its
	// ToolArgumentsSchema keeps only type, properties (in order),
	// required, additionalProperties and $defs (draft-07 definitions
	// renamed), and nested objects come back with sorted keys. Passing
	// the server's own JSON needs the raw tools/list result, e.g. from a
	// transport wrapper embedding *transport.Stdio or
	// *transport.StreamableHTTP (which keeps their optional interfaces)
	// that records it; the Ollama conversion would then have to carry
	// draft-07 definitions too.
	s.listed, s.dups = firstOfEachName(all)
	s.listed, s.probeOnly = splitProbeOnly(s.listed, s.opts.Server.ProbeOnly)
	s.gated = make(map[string]bool, len(s.listed))
	for _, t := range s.listed {
		schema := t.RawInputSchema
		if schema == nil {
			b, err := json.Marshal(t.InputSchema)
			if err != nil {
				return fmt.Errorf("session: input schema of tool %s: %w", t.Name, err)
			}
			schema = b
		}
		g := Gated(t.Annotations)
		s.gated[t.Name] = g
		s.tools = append(s.tools, toolset.Tool{Name: t.Name, Description: t.Description, InputSchema: schema, Gated: g})
	}
	return nil
}

// listPages follows tools/list pagination cursors within Limits: pages,
// tools and bytes in all; a cursor seen before is a loop.
func (s *Source) listPages(ctx context.Context, c *conn) ([]mcp.Tool, error) {
	lim := s.opts.Limits.withDefaults()
	var start int64
	if c.wire != nil {
		start = c.wire.read.Load()
		c.wire.listing.Store(true)
		defer c.wire.listing.Store(false)
	}
	seen := map[[sha256.Size]byte]bool{}
	var all []mcp.Tool
	req := mcp.ListToolsRequest{}
	for page := 1; ; page++ {
		if page > lim.ListPages {
			return nil, &LimitError{What: "tools/list pages", Limit: int64(lim.ListPages), Name: "session.MaxListPages"}
		}
		lt, err := c.c.ListToolsByPage(ctx, req)
		if err != nil {
			return nil, err
		}
		all = append(all, lt.Tools...)
		if len(all) > lim.ListTools {
			return nil, &LimitError{What: "tools listed", Limit: int64(lim.ListTools), Name: "session.MaxListTools"}
		}
		if c.wire != nil && c.wire.read.Load()-start > lim.ListBytes {
			return nil, &LimitError{What: "one tools/list", Limit: lim.ListBytes, Name: "session.MaxListBytes"}
		}
		if lt.NextCursor == "" {
			return all, nil
		}
		h := sha256.Sum256([]byte(lt.NextCursor))
		if seen[h] {
			return nil, fmt.Errorf("tools/list: the server repeated cursor %q (a pagination loop)", cut(printable(string(lt.NextCursor)), quoteLen))
		}
		seen[h] = true
		req.Params.Cursor = lt.NextCursor
	}
}

// firstOfEachName keeps the first tool of each name, in order, and
// returns the names listed more than once, in order of first listing.
func firstOfEachName(tools []mcp.Tool) (kept []mcp.Tool, dups []string) {
	seen := make(map[string]int, len(tools)) // listings per name
	for _, t := range tools {
		seen[t.Name]++
		switch seen[t.Name] {
		case 1:
			kept = append(kept, t)
		case 2:
			dups = append(dups, t.Name)
		}
	}
	return kept, dups
}

func countSet(s schema.Server) int {
	n := 0
	if s.Builtin != nil {
		n++
	}
	if len(s.Command) > 0 {
		n++
	}
	if s.URL != "" {
		n++
	}
	return n
}

// Gated reports whether confirm modes gate a tool with these annotations:
// unless it is marked read-only or explicitly non-destructive (the MCP
// defaults are readOnlyHint false, destructiveHint true).
func Gated(a mcp.ToolAnnotation) bool {
	if a.ReadOnlyHint != nil && *a.ReadOnlyHint {
		return false
	}
	if a.DestructiveHint != nil && !*a.DestructiveHint {
		return false
	}
	return true
}

// Tools returns the server's tools in listing order. Callers must not
// modify the slice.
func (s *Source) Tools() []toolset.Tool { return s.tools }

// Listed returns the tools as the server listed them, with annotations,
// titles and output schemas, as mcp-go's client decoded them (see Tools
// for the input schema), in the order of Tools. Callers must not modify
// the slice.
func (s *Source) Listed() []mcp.Tool { return s.listed }

// Duplicates returns the tool names the server listed more than once, in
// order of first listing; Tools and Listed offer only the first tool of
// each name. Callers must not modify the slice.
func (s *Source) Duplicates() []string { return s.dups }

// Info returns what the server said about itself when Open connected.
func (s *Source) Info() Info { return s.info }

// describe names the server for messages.
func (s *Source) describe() string {
	switch {
	case s.opts.Server.Builtin != nil:
		return "builtin server"
	case len(s.opts.Server.Command) > 0:
		return "server command " + strings.Join(s.opts.Server.Command, " ")
	default:
		return "server " + s.opts.Server.URL
	}
}

// dial opens a new connection and initialises it. With startup (the
// first connection, from Open), a command server's error quotes the
// beginning of its stderr; later connections' errors become run records,
// which keep to one line, and the stderr log has the rest.
func (s *Source) dial(ctx context.Context, startup bool) (*conn, error) {
	h := &elicitor{}
	opt := client.WithElicitationHandler(h)
	var c *client.Client
	var err error
	var head *stderrHead
	var cmd *exec.Cmd
	var w *wire
	var runDir string
	srv := s.opts.Server
	switch {
	case srv.Builtin != nil:
		// In process, the initialize handshake is cheaper than the
		// stateless protocol's per-request metadata, and nothing is lost:
		// the bundled server's elicitation works the same.
		c, err = client.NewInProcessClientWithOptions(s.opts.Builtin, opt, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	case len(srv.Command) > 0:
		if srv.Isolation == schema.IsolationRun {
			if srv, runDir, err = runWorld(srv, s.runs.dir); err != nil {
				return nil, &Error{Kind: "mcp", Msg: "making the run's directory for " + s.describe(), Err: err}
			}
		}
		head = newStderrHead(s.opts.Stderr)
		w = newWire(s.opts.Limits)
		var t *transport.Stdio
		if t, cmd, err = startCommand(s.life, srv, head, w); err != nil {
			removeRunDir(runDir)
			return nil, s.startErr(&Error{Kind: "mcp", Msg: "starting " + s.describe(), Retryable: true, Err: err}, startup, head, false)
		}
		c = client.NewClient(&stdioConn{t}, opt)
	default:
		w = newWire(s.opts.Limits)
		topts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(srv.Headers),
			transport.WithHTTPBasicClient(&http.Client{Transport: &roundTripper{w: w, base: http.DefaultTransport}}),
			transport.WithHTTPLogger(quietLog), transport.WithContinuousListening()}
		if s.oauth != nil {
			if _, err := s.oauth.Token(ctx); err != nil {
				return nil, &Error{Kind: "mcp", Msg: "authorizing with " + s.describe(), Retryable: true, Err: err}
			}
			topts = append(topts, transport.WithHTTPHeaderFunc(s.oauth.headers))
		}
		var t *transport.StreamableHTTP
		t, err = transport.NewStreamableHTTP(srv.URL, topts...)
		if err == nil {
			c = client.NewClient(t, opt)
		}
	}
	if err != nil {
		return nil, &Error{Kind: "mcp", Msg: "connecting to " + s.describe(), Retryable: true, Err: err}
	}
	// The transport lives as long as the source (for command: the
	// subprocess); the request below is bounded by ctx.
	if err := c.Start(s.life); err != nil {
		(&conn{c: c, cmd: cmd, runDir: runDir}).close(true)
		return nil, s.startErr(&Error{Kind: "mcp", Msg: "starting " + s.describe(), Retryable: true, Err: err}, startup, head, false)
	}
	hello, err := s.initialize(ctx, c, startup, w)
	if err != nil {
		// Closing waits for the subprocess, so its stderr is complete; a
		// server that did not answer in time (the handshake's bound, or
		// the caller's: the start-up bound, an interrupt) is killed, not
		// waited for.
		var se *Error
		(&conn{c: c, cmd: cmd, runDir: runDir}).close(ctx.Err() != nil || errors.As(err, &se) && se.Kind == "timeout")
		return nil, s.startErr(err, startup, head, true)
	}
	return &conn{c: c, h: h, hello: hello, stderr: head, cmd: cmd, wire: w, runDir: runDir}, nil
}

// sendFailed is the prefix mcp-go's HTTP transport puts on a request it
// could not send, at two levels of wrapping.
const sendFailed = "failed to send request: "

// undouble says once what mcp-go's wrapping says twice.
func undouble(msg string) string {
	for strings.Contains(msg, sendFailed+sendFailed) {
		msg = strings.ReplaceAll(msg, sendFailed+sendFailed, sendFailed)
	}
	return msg
}

// pathHint says what to try when a URL server answered the initialize
// POST with a 4xx: most often the URL lacks the endpoint's path.
func pathHint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/mcp"
		return fmt.Sprintf("hint: the URL has no path, and streamable HTTP servers usually serve at /mcp: try %s", u)
	}
	return fmt.Sprintf("hint: check the URL's path %s (streamable HTTP servers usually serve at /mcp); a server speaking only the legacy SSE transport is not supported", u.Path)
}

// initialize makes the initialize handshake, within HandshakeTimeout
// unless startup (Open's caller bounds the first connection).
func (s *Source) initialize(ctx context.Context, c *client.Client, startup bool, w *wire) (*mcp.InitializeResult, error) {
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "toolward", Version: cmp.Or(s.opts.ClientVersion, "dev")}
	hctx := ctx
	if d := s.handshakeTimeout(ctx); d > 0 && !startup {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	hello, err := c.Initialize(hctx, req)
	if f := w.fault(); err != nil && f != nil {
		return nil, &Error{Kind: "mcp", Msg: "initializing " + s.describe(), Retryable: true, Err: f}
	}
	switch {
	case err == nil:
		return hello, nil
	case ctx.Err() == nil && hctx.Err() != nil:
		bound := "limits.call_timeout"
		if ctx.Value(warmStart{}) != nil {
			bound = "the warm pool's start-up bound"
		}
		return nil, &Error{Kind: "timeout", Msg: fmt.Sprintf("%s did not answer the initialize handshake within %s (%s)", s.describe(), s.handshakeTimeout(ctx), bound), Retryable: true, Err: err}
	default:
		e := &Error{Kind: "mcp", Msg: "initializing " + s.describe(), Retryable: true, Err: err}
		if s.opts.Server.URL != "" && errors.Is(err, transport.ErrLegacySSEServer) {
			e.Hint = pathHint(s.opts.Server.URL)
		}
		return nil, e
	}
}

// envHint reminds that a command server did not get toolward's whole
// environment, the likely cause when it needs a token or a proxy.
const envHint = "note: the server gets only PATH, HOME and a few more of toolward's environment variables; name the ones it needs in server.env, or set server.inherit_env: true"

// startErr adds the server's stderr to err when dialling from Open, and
// envHint when a command server without inherit_env started (ran) and
// then failed.
func (s *Source) startErr(err error, startup bool, head *stderrHead, ran bool) error {
	if !startup {
		return err
	}
	var se *Error
	if ran && head != nil && !s.opts.Server.InheritEnv && errors.As(err, &se) {
		se.Hint = envHint
	}
	return withStderr(err, head)
}

// put returns a connection after use. Builtin connections are never
// reused (each run gets a fresh session); broken ones are closed.
func (s *Source) put(c *conn, broken bool) {
	s.mu.Lock()
	if broken || s.closed || s.fresh() {
		s.mu.Unlock()
		// A run's own process has nothing left to keep: killed at once,
		// rather than given the graceful close's seconds.
		c.close(broken || s.opts.Server.Isolation == schema.IsolationRun)
		return
	}
	s.idle = append(s.idle, c)
	s.mu.Unlock()
}

// Session opens (or, for command and url, borrows) a connection for one
// run under confirm mode mode.
func (s *Source) Session(ctx context.Context, mode cell.ConfirmMode) (*Session, error) {
	switch mode {
	case ConfirmAuto, ConfirmApprove, ConfirmDeny:
	default:
		return nil, fmt.Errorf("session: unknown confirm mode %q", mode)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("session: source closed")
	}
	var c *conn
	if n := len(s.idle); n > 0 {
		c = s.idle[n-1]
		s.idle = s.idle[:n-1]
	}
	s.mu.Unlock()
	var err error
	switch {
	case c != nil:
	case s.warm != nil:
		c, err = s.warm.take(ctx)
	default:
		c, err = s.dial(ctx, false)
	}
	if err != nil {
		return nil, err
	}
	if err := s.reset(ctx, c); err != nil {
		c.close(true)
		return nil, err
	}
	c.h.reset(mode)
	return &Session{src: s, c: c, mode: mode}, nil
}

// Close closes every idle connection and ends subprocesses.
func (s *Source) Close() error {
	s.mu.Lock()
	s.closed = true
	idle := s.idle
	s.idle = nil
	s.mu.Unlock()
	var first error
	for _, c := range idle {
		if err := c.close(false); err != nil && first == nil {
			first = err
		}
	}
	s.cancel()
	if s.warm != nil {
		s.warm.stop()
	}
	s.runs.close()
	return first
}

// Session is one run's use of a connection. It is not safe for concurrent
// use: the agent loop makes one call at a time.
type Session struct {
	src    *Source
	c      *conn
	mode   cell.ConfirmMode
	broken bool
	done   bool
	probed int // bytes the session's probes got (Limits.ProbeBytes)
}

// Result is the outcome of one tool call as the model will see it.
type Result struct {
	Text       string // what goes back to the model
	Structured any    // structuredContent, decoded as plain JSON values
	IsError    bool
	// Confirm is "" (no gate), Approved or Denied.
	Confirm      string
	Elicitations []string // "accept" | "decline" | "cancel", in order
	Latency      time.Duration
	// held is the size of the answer as it came: its text and its
	// structured content's JSON (Limits.ProbeBytes counts it).
	held int
}

// Call runs tool name with args, applying the confirm gate. A non-nil
// error is an infrastructure failure (*Error); everything the model should
// see, including tool errors, is in the Result.
func (s *Session) Call(ctx context.Context, name string, args map[string]any, timeout time.Duration) (*Result, error) {
	return s.call(ctx, name, args, timeout, true)
}

// call is Call; without ask, the server's elicitations are cancelled
// (nobody is asked) rather than answered by the confirm mode.
func (s *Session) call(ctx context.Context, name string, args map[string]any, timeout time.Duration, ask bool) (*Result, error) {
	var err error
	res := &Result{}
	if s.mode != ConfirmAuto && s.src.gated[name] {
		if s.mode == ConfirmDeny {
			res.Confirm = Denied
			res.IsError = true
			res.Text = "The user declined to run " + name + "."
			return res, nil
		}
		res.Confirm = Approved
	}
	cctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	if ask {
		s.c.h.begin(&res.Elicitations)
	}
	start := time.Now()
	// The call runs apart so that it is over at the timeout whatever it
	// is doing then, decoding a long answer included; the connection is
	// then broken and closed, and the call's goroutine ends with it.
	type answer struct {
		out *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	afterCall := testAfterCall // read here: the call may outlive the test that set it
	go func() {
		out, err := s.c.c.CallTool(cctx, req)
		if afterCall != nil {
			afterCall()
		}
		done <- answer{out, err}
	}()
	var out *mcp.CallToolResult
	select {
	case a := <-done:
		out, err = a.out, a.err
	case <-cctx.Done():
		err = cctx.Err()
	}
	res.Latency = time.Since(start)
	if ask {
		s.c.h.end()
	}
	if err == nil && cctx.Err() != nil {
		err = cctx.Err() // answered, but after the timeout
	}
	if err != nil {
		f := s.c.wire.fault()
		switch {
		case f != nil:
			s.broken = true
			return nil, &Error{Kind: "mcp", Msg: "calling tool " + name + " on " + s.src.describe(), Retryable: true, Err: f}
		case errors.Is(err, mcp.ErrInvalidParams):
			// The server rejected the model's arguments: the model's
			// mistake, shown to it like a tool error.
			res.IsError = true
			res.Text = "Invalid arguments for " + name + ": " + err.Error()
			return res, nil
		case ctx.Err() != nil:
			s.broken = true
			return nil, ctx.Err()
		case cctx.Err() != nil:
			s.broken = true
			return nil, &Error{Kind: "timeout", Msg: fmt.Sprintf("tool %s did not answer within %s", name, timeout), Retryable: true, Err: err}
		case errors.Is(err, transport.ErrTransportClosed):
			// The stdio reader saw EOF: the server exited or closed its
			// stdout, and no answer can come.
			s.broken = true
			return nil, &Error{Kind: "mcp", Msg: "the connection to " + s.src.describe() + " closed during tool " + name + " (the server exited or closed its stdout)", Retryable: true, Err: err}
		default:
			s.broken = true
			return nil, &Error{Kind: "mcp", Msg: "calling tool " + name + " on " + s.src.describe(), Retryable: true, Err: err}
		}
	}
	res.IsError = out.IsError
	res.Text = contentText(out.Content)
	if len(out.RawStructuredContent) > 0 {
		var v any
		if json.Unmarshal(out.RawStructuredContent, &v) == nil {
			res.Structured = v
		}
	} else if out.StructuredContent != nil {
		res.Structured = plainJSON(out.StructuredContent)
	}
	res.held = len(res.Text) + len(out.RawStructuredContent)
	if res.Text == "" && res.Structured != nil {
		b, _ := json.Marshal(res.Structured)
		res.Text = string(b)
	}
	return res, nil
}

// testAfterCall, when set (by tests), runs after each tool call returns
// and before its answer is taken, standing for slow decoding.
var testAfterCall func()

// Close ends the session: a builtin session's connection is closed (its
// sandbox goes with it); a pooled one goes back unless it failed.
func (s *Session) Close() {
	if s.done {
		return
	}
	s.done = true
	s.src.put(s.c, s.broken)
}

// contentText joins text content with newlines; other content kinds are
// named in brackets, since the model cannot see them.
func contentText(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		switch v := c.(type) {
		case mcp.TextContent:
			parts = append(parts, v.Text)
		case *mcp.TextContent:
			parts = append(parts, v.Text)
		case mcp.EmbeddedResource:
			parts = append(parts, resourceText(v.Resource))
		case *mcp.EmbeddedResource:
			parts = append(parts, resourceText(v.Resource))
		case mcp.ImageContent:
			parts = append(parts, "[image "+v.MIMEType+"]")
		case *mcp.ImageContent:
			parts = append(parts, "[image "+v.MIMEType+"]")
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	return strings.Join(parts, "\n")
}

func resourceText(r mcp.ResourceContents) string {
	switch v := r.(type) {
	case mcp.TextResourceContents:
		return v.Text
	case *mcp.TextResourceContents:
		return v.Text
	}
	return "[binary resource]"
}

// plainJSON converts a Go value (an in-process server may hand over
// structs) to the plain values encoding/json decodes into.
func plainJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// elicitor answers a connection's elicitation requests for the run using
// it, recording each answer on the call in progress.
type elicitor struct {
	mu   sync.Mutex
	mode cell.ConfirmMode
	rec  *[]string
}

func (h *elicitor) reset(mode cell.ConfirmMode) {
	h.mu.Lock()
	h.mode, h.rec = mode, nil
	h.mu.Unlock()
}

func (h *elicitor) begin(rec *[]string) {
	h.mu.Lock()
	h.rec = rec
	h.mu.Unlock()
}

func (h *elicitor) end() {
	h.mu.Lock()
	h.rec = nil
	h.mu.Unlock()
}

// Elicit implements client.ElicitationHandler.
func (h *elicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	res := &mcp.ElicitationResult{}
	switch {
	case h.rec == nil:
		// Not during a call of ours: nobody to ask.
		res.Action = mcp.ElicitationResponseActionCancel
	case h.mode == ConfirmDeny:
		res.Action = mcp.ElicitationResponseActionDecline
	default:
		res.Action = mcp.ElicitationResponseActionAccept
		if req.Params.Mode != mcp.ElicitationModeURL {
			res.Content = Fill(req.Params.RequestedSchema)
		}
	}
	if h.rec != nil {
		*h.rec = append(*h.rec, string(res.Action))
	}
	return res, nil
}

// Fill builds the content an agreeable user submits for a requested form
// schema: each property's default, else true for booleans, the first enum
// value, "yes" for strings, 1 for numbers.
func Fill(requested any) map[string]any {
	m, _ := plainJSON(requested).(map[string]any)
	props, _ := m["properties"].(map[string]any)
	out := make(map[string]any, len(props))
	for k, v := range props {
		p, _ := v.(map[string]any)
		if d, ok := p["default"]; ok {
			out[k] = d
			continue
		}
		if e, ok := p["enum"].([]any); ok && len(e) > 0 {
			out[k] = e[0]
			continue
		}
		switch p["type"] {
		case "boolean":
			out[k] = true
		case "number", "integer":
			out[k] = 1
		default:
			out[k] = "yes"
		}
	}
	return out
}
