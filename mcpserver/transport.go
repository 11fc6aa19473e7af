package mcpserver

import (
	"bufio"
	"bytes"
	"context"
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
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves one MCP session over in and out (newline-delimited
// JSON-RPC) until in ends or ctx is done. Transport errors are logged to
// errLog (nil: discarded).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out, errLog io.Writer) error {
	if errLog == nil {
		errLog = io.Discard
	}
	std := server.NewStdioServer(s.mcp)
	std.SetErrorLogger(log.New(errLog, "toolward serve: ", 0))
	d := &drain{ctx: ctx}
	d.cond = sync.NewCond(&d.mu)
	pr, pw := io.Pipe()
	go d.copyIn(in, pw)
	err := std.Listen(ctx, pr, &drainWriter{d: d, w: out})
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
// writes its requests and closes stdin.
type drain struct {
	ctx     context.Context
	mu      sync.Mutex
	cond    *sync.Cond
	pending int
}

// copyIn copies client lines to w, counting requests (messages with a
// method and an id), and closes w once input has ended and the count is
// back to zero.
func (d *drain) copyIn(in io.Reader, w *io.PipeWriter) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if m, ok := parseHead(line); ok && m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" {
				d.mu.Lock()
				d.pending++
				d.mu.Unlock()
			}
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			break
		}
	}
	giveUp := func() {
		d.mu.Lock()
		d.pending = 0
		d.cond.Broadcast()
		d.mu.Unlock()
	}
	deadline := time.AfterFunc(drainTimeout, giveUp)
	defer deadline.Stop()
	defer context.AfterFunc(d.ctx, giveUp)()
	d.mu.Lock()
	for d.pending > 0 {
		d.cond.Wait()
	}
	d.mu.Unlock()
	w.Close()
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

// drainWriter passes server output through, counting answers.
type drainWriter struct {
	d *drain
	w io.Writer
}

func (dw *drainWriter) Write(p []byte) (int, error) {
	n, err := dw.w.Write(p)
	for _, line := range bytes.Split(p, []byte("\n")) {
		if m, ok := parseHead(line); ok && m.Method == "" && len(m.ID) > 0 {
			dw.d.mu.Lock()
			if dw.d.pending > 0 {
				dw.d.pending--
			}
			dw.d.cond.Broadcast()
			dw.d.mu.Unlock()
		}
	}
	return n, err
}

// HTTPOptions configure the streamable HTTP transport.
type HTTPOptions struct {
	// Token, if set, must be sent as "Authorization: Bearer <token>";
	// requests without it get 401.
	Token string
	// MaxBodyBytes caps a request body; 0 means 1 MiB.
	MaxBodyBytes int64
	// SessionIdleTTL drops sessions (and their sandboxes) idle this long;
	// 0 means 30 minutes.
	SessionIdleTTL time.Duration
	// AllowRemote permits ListenAndServeHTTP to bind a non-loopback
	// address. Without it only loopback addresses are accepted.
	AllowRemote bool
}

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// HTTPHandler returns the streamable HTTP transport at Path, wrapped in
// the checks below, in this order:
//
//  1. DNS-rebinding protection: a request that arrived on a loopback
//     address must name a loopback Host (and Origin, if any), else 403.
//  2. Bearer token, if HTTPOptions.Token is set, compared in constant
//     time, else 401.
//  3. Request bodies are capped at MaxBodyBytes (413 when exceeded).
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.SessionIdleTTL <= 0 {
		opts.SessionIdleTTL = 30 * time.Minute
	}
	mcpHandler := server.NewStreamableHTTPServer(s.mcp,
		server.WithEndpointPath(Path),
		server.WithStateful(true),
		server.WithSessionIdleTTL(opts.SessionIdleTTL),
	)
	mux := http.NewServeMux()
	mux.Handle(Path, mcpHandler)
	want := []byte("Bearer " + opts.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := rebinding(r); msg != "" {
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		if opts.Token != "" {
			got := []byte(r.Header.Get("Authorization"))
			if subtle.ConstantTimeCompare(got, want) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="toolward"`)
				http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
				return
			}
		}
		if r.ContentLength > opts.MaxBodyBytes {
			http.Error(w, fmt.Sprintf("request body larger than %d bytes", opts.MaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, opts.MaxBodyBytes)
		}
		mux.ServeHTTP(w, r)
	})
}

// rebinding returns why r must be refused as a possible DNS-rebinding
// attack, or "". Only requests that arrived on a loopback address are
// checked: those are what a rebinding attack reaches.
func rebinding(r *http.Request) string {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopback(local.String()) {
		return ""
	}
	if !isLoopback(r.Host) {
		return fmt.Sprintf("forbidden: Host %q is not a loopback name", r.Host)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !isLoopback(u.Host) {
			return fmt.Sprintf("forbidden: Origin %q is not a loopback origin", o)
		}
	}
	return ""
}

// isLoopback reports whether a host or host:port names the loopback
// interface.
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
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
	if host == "" || !isLoopback(host) {
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
	srv := &http.Server{
		Handler:           s.HTTPHandler(opts),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
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
