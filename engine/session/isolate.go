package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolward/toolward/schema"
)

// This file gives runs a world of their own (schema.Server.Isolation):
//
//   - "run", command servers: every run gets a fresh process started in a
//     fresh temporary directory (schema.RunDirVar in the command and
//     server.env values names it; server.seed's files are copied in
//     first, at most MaxSeedBytes of data, holes as holes), killed with
//     what it started (killGroup) and the directory removed when the
//     run's session closes. The runs' directories are made in one
//     directory of the job's (runDirs), which a later job removes if
//     this one was killed. A warm pool keeps Options.Warm processes started and
//     initialised ahead of the runs that take them, so a slow start (npx)
//     overlaps the runs before.
//   - "session", url servers: every run opens its own MCP session and
//     ends it after, for servers that keep state per session.
//   - server.reset: before each run, on its connection, one tool call or
//     one HTTP request.

// fresh reports whether every run gets a connection of its own that is
// closed after it, never reused.
func (s *Source) fresh() bool {
	srv := s.opts.Server
	return srv.Builtin != nil || srv.Isolation == schema.IsolationRun || srv.Isolation == schema.IsolationSession
}

// runWorld makes a run's directory in parent (seeded) and returns srv
// with schema.RunDirVar replaced by it in the command and server.env
// values.
func runWorld(srv schema.Server, parent string) (schema.Server, string, error) {
	dir, err := os.MkdirTemp(parent, "run-")
	if err != nil {
		return srv, "", err
	}
	if srv.Seed != "" {
		if err := copyTree(srv.Seed, dir); err != nil {
			os.RemoveAll(dir)
			return srv, "", fmt.Errorf("copying server.seed %s: %w", srv.Seed, err)
		}
	}
	out := srv
	out.Command = make([]string, len(srv.Command))
	for i, a := range srv.Command {
		out.Command[i] = strings.ReplaceAll(a, schema.RunDirVar, dir)
	}
	if srv.Env != nil {
		out.Env = make(map[string]string, len(srv.Env))
		for k, v := range srv.Env {
			out.Env[k] = strings.ReplaceAll(v, schema.RunDirVar, dir)
		}
	}
	return out, dir, nil
}

func removeRunDir(dir string) {
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// copyTree copies the regular files and directories under src into dst
// (symbolic links and other files are refused: a seed is data), holes
// of sparse files as holes (copyFile).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file or directory", p)
		}
		return copyFile(p, to)
	})
}

// warmPool keeps up to n processes started ahead of the runs: a slot is
// held by each process being started or ready and not yet taken; taking
// one frees its slot, and the filler starts the next.
type warmPool struct {
	s     *Source
	ready chan warmConn
	slots chan struct{}
	wg    sync.WaitGroup
	done  chan struct{}
	once  sync.Once

	mu     sync.Mutex
	starts map[*time.Time]bool // when each start in flight began
}

// warmConn is a started process, or why starting one failed (the run
// that takes it records the error and is retried).
type warmConn struct {
	c   *conn
	err error
}

// startWarm starts the warm pool of an isolation "run" source.
func (s *Source) startWarm() {
	if s.opts.Server.Isolation != schema.IsolationRun || len(s.opts.Server.Command) == 0 {
		return
	}
	n := max(s.opts.Warm, 1)
	p := &warmPool{s: s, ready: make(chan warmConn, n), slots: make(chan struct{}, n), done: make(chan struct{})}
	s.warm = p
	p.wg.Add(1)
	go p.fill()
}

// WarmStartTimeout bounds the start of a process of the warm pool, up to
// the end of its initialize handshake. It is longer than a later
// connection's HandshakeTimeout: a pool start is made ahead of the run
// that takes it, and an npx server on a loaded machine may take tens of
// seconds; a hung one still ends.
const WarmStartTimeout = 2 * time.Minute

// warmStart marks the context of a warm pool's dial.
type warmStart struct{}

// handshakeTimeout is the bound of a later connection's initialize
// handshake: Options.HandshakeTimeout, or WarmStartTimeout for a start
// of the warm pool.
func (s *Source) handshakeTimeout(ctx context.Context) time.Duration {
	if ctx.Value(warmStart{}) != nil {
		return max(WarmStartTimeout, s.opts.HandshakeTimeout)
	}
	return s.opts.HandshakeTimeout
}

// fill starts a process whenever a slot is free, until stop.
func (p *warmPool) fill() {
	defer p.wg.Done()
	for {
		select {
		case <-p.done:
			return
		case p.slots <- struct{}{}:
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			began := time.Now()
			p.mu.Lock()
			if p.starts == nil {
				p.starts = map[*time.Time]bool{}
			}
			p.starts[&began] = true
			p.mu.Unlock()
			c, err := p.s.dial(context.WithValue(p.s.life, warmStart{}, true), false)
			p.mu.Lock()
			delete(p.starts, &began)
			p.mu.Unlock()
			select {
			case <-p.done:
				if c != nil {
					c.close(true)
				}
			default:
				p.ready <- warmConn{c, err} // never blocks: one slot per entry
			}
		}()
	}
}

// take returns a started process for one run, waiting for one if none is
// ready yet.
func (p *warmPool) take(ctx context.Context) (*conn, error) {
	select {
	case w := <-p.ready:
		<-p.slots
		return w.c, w.err
	case <-p.done:
		return nil, errors.New("session: source closed")
	case <-ctx.Done():
		return nil, p.waitErr(ctx)
	}
}

// waitErr says why a run that waited for a started process got none:
// while the run's context ran out, the pool's starts were still in their
// initialize handshake (a server that never finishes it), for how long,
// and what the pool gives a start.
func (p *warmPool) waitErr(ctx context.Context) error {
	p.mu.Lock()
	var oldest time.Time
	for t := range p.starts {
		if oldest.IsZero() || t.Before(oldest) {
			oldest = *t
		}
	}
	p.mu.Unlock()
	if oldest.IsZero() {
		return ctx.Err()
	}
	bound := p.s.handshakeTimeout(context.WithValue(ctx, warmStart{}, true))
	return &Error{Kind: "timeout", Retryable: true, Err: ctx.Err(), Msg: fmt.Sprintf(
		"%s never finished its initialize handshake: the warm pool had started it %s before the run's limits.run_timeout ended the wait (a warm start is given %s; a server that slow to start needs a longer run_timeout)",
		p.s.describe(), time.Since(oldest).Round(time.Millisecond), bound)}
}

// stop ends the filler, waits for the starts in flight and kills the
// processes no run took.
func (p *warmPool) stop() {
	p.once.Do(func() { close(p.done) })
	p.wg.Wait()
	for {
		select {
		case w := <-p.ready:
			if w.c != nil {
				w.c.close(true)
			}
		default:
			return
		}
	}
}

// resetTimeout bounds an HTTP reset request.
const resetTimeout = 30 * time.Second

// reset does server.reset on c before a run: the tool call (an isError
// result fails it) or the HTTP request (any 2xx answer succeeds).
func (s *Source) reset(ctx context.Context, c *conn) error {
	r := s.opts.Server.Reset
	if r == nil || s.opts.Server.Isolation == schema.IsolationRun {
		return nil
	}
	fail := func(err error) error {
		return &Error{Kind: "mcp", Msg: "resetting " + s.describe() + " before the run (server.reset)", Retryable: true, Err: err}
	}
	if r.Tool != "" {
		req := mcp.CallToolRequest{}
		req.Params.Name = r.Tool
		args := r.Args
		if args == nil {
			args = map[string]any{}
		}
		req.Params.Arguments = args
		out, err := c.c.CallTool(ctx, req)
		if err != nil {
			return fail(err)
		}
		if out.IsError {
			return fail(fmt.Errorf("tool %s answered with an error: %s", r.Tool, contentText(out.Content)))
		}
		return nil
	}
	method := r.Method
	if method == "" {
		method = http.MethodPost
	}
	rctx, cancel := context.WithTimeout(ctx, resetTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, r.HTTP, nil)
	if err != nil {
		return fail(err)
	}
	for k, v := range s.opts.Server.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fail(err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fail(fmt.Errorf("%s %s answered %s", method, r.HTTP, resp.Status))
	}
	return nil
}
