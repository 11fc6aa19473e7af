package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
)

// DefaultMaxReplyBytes bounds one reply's content, thinking and tool call
// arguments together when Config.MaxReplyBytes is 0. It is the OpenAI
// backend's bound too, and stays below what one record keeps
// (schema/record.MaxRecordBytes).
const DefaultMaxReplyBytes = 4 << 20

// DoneReplyLimit is the DoneReason of a reply cut at Config.MaxReplyBytes:
// the model produced more than toolward keeps. What was kept is in the
// reply; tool call arguments cut short are malformed calls. The OpenAI
// backend uses the same value.
const DoneReplyLimit = backend.DoneReplyLimit

// MaxReplyCalls bounds the tool calls one reply may hold: a reply with
// more keeps the first MaxReplyCalls and is cut there (DoneReplyLimit).
// The OpenAI backend has the same bound; the agent executes fewer still
// (engine/agent.DefaultMaxCallsPerTurn).
const MaxReplyCalls = 1024

const (
	// drainBytes and drainGrace bound what is read of a stream after its
	// final chunk, so that a server that keeps the reply open after done
	// costs at most drainGrace per turn, while one that ends it (as
	// Ollama does) leaves its connection reusable.
	drainBytes = 64 << 10
	drainGrace = time.Second
	// readBufSize is the pooled read buffer of a chat stream: a chunk
	// line of Ollama's is a few hundred bytes.
	readBufSize = 16 << 10
	// pooledCap is the largest long-line buffer a pooled reader keeps;
	// one grown past it for a long line is dropped, not pooled.
	pooledCap = 64 << 10
	// lineSlack is how far past the reply's remaining room one line may
	// run: the JSON around the text (model, created_at, escaping).
	lineSlack = 64 << 10
	// maxErrorBody is how much of an error reply is read: what every
	// HTTP backend reads (backend.MaxErrorBody).
	maxErrorBody = backend.MaxErrorBody
)

var userAgent = fmt.Sprintf("toolward (%s %s) Go/%s", runtime.GOARCH, runtime.GOOS, runtime.Version())

// reply accumulates one streamed chat reply, keeping at most limit bytes
// of content, thinking, tool names and arguments.
type reply struct {
	content, thinking strings.Builder
	calls             []backend.ToolCall
	final             *api.ChatResponse
	backend.ReplyBudget
}

// add folds one chunk into r. It returns backend.ErrCut once the reply is full,
// and an error for arguments that cannot be encoded.
func (r *reply) add(c *api.ChatResponse) error {
	r.text(&r.content, c.Message.Content)
	r.text(&r.thinking, c.Message.Thinking)
	for _, tc := range c.Message.ToolCalls {
		if len(r.calls) >= MaxReplyCalls {
			r.Cut = true
		}
		if r.Cut {
			break // nothing more fits, not even a name
		}
		args, err := tc.Function.Arguments.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encoding arguments of %s: %w", tc.Function.Name, err)
		}
		name := tc.Function.Name
		name = r.Keep(name)
		r.calls = append(r.calls, backend.ToolCall{Name: name, Arguments: args[:r.Room(len(args))]})
	}
	if c.Done {
		f := *c
		f.Message = api.Message{}
		r.final = &f
	}
	if r.Cut {
		return backend.ErrCut
	}
	return nil
}

// text appends what fits of s to b, cut on a UTF-8 boundary.
func (r *reply) text(b *strings.Builder, s string) {
	if s == "" {
		return
	}
	n := r.Room(len(s))
	for back := 0; n < len(s) && n > 0 && back < utf8.UTFMax-1 && !utf8.RuneStart(s[n]); back++ {
		n-- // at most the start of one rune back: invalid UTF-8 cuts anywhere
	}
	b.WriteString(s[:n])
}

// lineReader reads NDJSON lines. Readers are pooled, so a request
// allocates no read buffer.
type lineReader struct {
	lines backend.Lines
}

var lineReaders = sync.Pool{New: func() any { return &lineReader{lines: backend.NewLines(readBufSize)} }}

func getLineReader(r io.Reader) *lineReader {
	l := lineReaders.Get().(*lineReader)
	l.lines.Reset(r, pooledCap)
	return l
}

func putLineReader(l *lineReader) {
	l.lines.Reset(nil, pooledCap)
	lineReaders.Put(l)
}

// next reads one line (backend.Lines.Next), backend.ErrCut for a line longer
// than limit, which it does not hold in memory whole.
func (l *lineReader) next(limit int) ([]byte, error) {
	line, err := l.lines.Next(limit)
	if errors.Is(err, backend.ErrLineTooLong) {
		return nil, backend.ErrCut
	}
	return line, err
}

// chatLine is one line of a chat stream: a chunk, or {"error": …}.
type chatLine struct {
	api.ChatResponse
	Error string `json:"error"`
}

// readChat reads an NDJSON chat stream into r up to its final chunk
// (done: true) or its end, whichever comes first: what a server sends
// after the final chunk is not read here. It returns backend.ErrCut when the
// reply is full, an error carrying the message of an {"error": …} line,
// and a garbled-line error wrapping the JSON error.
func readChat(body io.Reader, r *reply) error {
	lr := getLineReader(body)
	defer putLineReader(lr)
	var c chatLine
	noise := 0 // bytes of blank lines since the last chunk
	for {
		room := r.Limit - r.Size + lineSlack
		line, err := lr.next(room)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, backend.ErrCut):
			// A line longer than what the reply may still hold: the
			// model's if it is cut inside what a model writes.
			if !backend.CutInside(lr.lines.Partial(), modelParts...) {
				return &backend.StreamFault{What: fmt.Sprintf("a line of more than %d bytes, cut outside the reply's text and tool calls", room)}
			}
			salvageCalls(lr.lines.Partial(), r)
			r.Cut = true
			return backend.ErrCut
		case err != nil:
			return err
		}
		raw := len(line) + 1
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			if noise += raw; noise > backend.MaxNoiseBytes {
				return backend.NoiseFault("blank lines")
			}
			continue
		}
		noise = 0
		c = chatLine{}
		if err := json.Unmarshal(line, &c); err != nil {
			return fmt.Errorf("garbled line %s: %w", abbreviate(line), err)
		}
		if c.Error != "" {
			return errors.New(c.Error)
		}
		if err := r.add(&c.ChatResponse); err != nil {
			return err
		}
		if r.final != nil {
			return nil
		}
	}
}

// modelParts are where a chunk holds what the model writes.
var modelParts = []backend.ModelPart{
	{Path: []string{"message", "content"}, String: true},
	{Path: []string{"message", "thinking"}, String: true},
	{Path: []string{"message", "tool_calls"}},
}

// salvageCalls adds to r the tool calls that prefix, the beginning of a
// chunk line cut inside its tool calls, holds whole: a reply with more
// calls than fit keeps the first ones (and stays cut), rather than none.
func salvageCalls(prefix []byte, r *reply) {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if !enter(dec, "message") || !enter(dec, "tool_calls") {
		return
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return
	}
	var c api.ChatResponse
	for dec.More() && len(r.calls) < MaxReplyCalls {
		var tc api.ToolCall
		if dec.Decode(&tc) != nil {
			break
		}
		c.Message.ToolCalls = append(c.Message.ToolCalls, tc)
	}
	r.add(&c)
	r.Cut = true
}

// enter moves dec, at the start of an object, to the value of its member
// key, skipping the members before it.
func enter(dec *json.Decoder, key string) bool {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		if t == key {
			return true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// drain reads what is left of a reply body, at most drainBytes and for at
// most drainGrace (cancel ends the request), so that a server that ends
// its stream leaves the connection reusable and one that keeps it open
// cannot hold the turn.
func drain(body io.Reader, cancel context.CancelFunc) {
	t := time.AfterFunc(drainGrace, cancel)
	defer t.Stop()
	io.Copy(io.Discard, io.LimitReader(body, drainBytes))
}

// postChat sends creq, with tools (the JSON encodings of creq.Tools) in
// their place, to /api/chat and streams the reply into r. A reply with
// status 400 or more is an api.StatusError (api.AuthorizationError for
// 401), as the api package's client returns.
func (b *Backend) postChat(ctx context.Context, creq *api.ChatRequest, tools [][]byte, r *reply) error {
	body, err := encodeChat(creq, tools)
	if err != nil {
		return &backend.Error{Kind: backend.KindBadRequest, Msg: fmt.Sprintf("ollama: encoding the chat request for %s", creq.Model), Err: err}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := b.send(ctx, http.MethodPost, "/api/chat", body, "application/x-ndjson")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := readChat(resp.Body, r); err != nil {
		return err
	}
	drain(resp.Body, cancel)
	return nil
}

// encodeChat encodes creq with tools, the encodings of its tools, as its
// "tools" member: the members json.Marshal(creq) has, without encoding
// every tool's schema again for every request.
func encodeChat(creq *api.ChatRequest, tools [][]byte) ([]byte, error) {
	c := *creq
	c.Tools = nil
	body, err := json.Marshal(&c)
	if err != nil || len(tools) == 0 {
		return body, err
	}
	// body is an object with at least "model"; "tools" goes last.
	size := len(body) + len(`,"tools":[]`) + len(tools)
	for _, t := range tools {
		size += len(t)
	}
	out := make([]byte, 0, size)
	out = append(out, body[:len(body)-1]...)
	out = append(out, `,"tools":`...)
	for i, t := range tools {
		sep := byte(',')
		if i == 0 {
			sep = '['
		}
		out = append(append(out, sep), t...)
	}
	return append(out, ']', '}'), nil
}

// statusError reads an error reply ({"error": …}, or any text) into the
// api package's error types.
func statusError(resp *http.Response) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil && len(raw) == 0 {
		return err
	}
	var body struct {
		Error     string `json:"error"`
		SigninURL string `json:"signin_url"`
	}
	msg := strings.TrimSpace(string(raw))
	if json.Unmarshal(raw, &body) == nil {
		msg = body.Error
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return api.AuthorizationError{StatusCode: resp.StatusCode, Status: resp.Status, SigninURL: body.SigninURL}
	}
	return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: msg}
}
