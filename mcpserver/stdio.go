package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

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
