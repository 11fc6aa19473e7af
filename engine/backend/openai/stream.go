package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/toolward/toolward/engine/backend"
)

// DoneReplyLimit is the DoneReason of a reply cut at Config.MaxReplyBytes:
// the model produced more text than toolward keeps. What was kept is in
// the reply; tool call arguments cut short are malformed calls.
const DoneReplyLimit = backend.DoneReplyLimit

// MaxReplyCalls bounds the tool calls one reply may hold. A reply that
// starts more is cut there, as at Config.MaxReplyBytes: its DoneReason is
// DoneReplyLimit and it keeps the first MaxReplyCalls calls. The agent
// executes fewer still (see engine/agent.DefaultMaxCallsPerTurn); this
// bound keeps the memory and time one reply costs small before the agent
// sees it.
const MaxReplyCalls = 1024

// errBrokenStream is a stream that ended before its end.
var errBrokenStream = errors.New("stream ended before the final event")

// readBufSize is the SSE reader's read buffer, and pooledCap the slack
// an event (or a whole reply) may have beyond the reply limit for the
// JSON around what the model wrote.
const (
	readBufSize = backend.SSEReadBuffer
	pooledCap   = backend.SSEPooledCap
)

// nextEvent returns the data of the next event of r (backend.SSE.Next),
// valid until the next call. It returns io.EOF at the end of the stream,
// backend.ErrCut for an event longer than maxEvent cut inside what the model
// writes, and a *backend.StreamFault for one cut elsewhere, for a line
// longer than maxEvent that is not data, or for more than
// backend.MaxNoiseBytes of lines that carry no data (comments, other
// fields, blank lines, bytes that are not events) before the event.
func nextEvent(r *backend.SSE, maxEvent int) ([]byte, error) {
	noise := 0
	data, err := r.Next(maxEvent, func(_, line []byte) error {
		// Comments (": keep-alive"), event:, id:, retry:, blank lines
		// and lines that are no SSE at all.
		if noise += len(line) + 1; noise > backend.MaxNoiseBytes {
			return backend.NoiseFault("lines that are not event data")
		}
		return nil
	})
	switch {
	case errors.Is(err, backend.ErrFieldTooLong):
		return nil, &backend.StreamFault{What: fmt.Sprintf("a line of more than %d bytes that is not event data", maxEvent)}
	case errors.Is(err, backend.ErrEventTooLong):
		return nil, cut(r.Data(), maxEvent)
	}
	return data, err
}

// modelParts are where a chunk holds what the model writes.
var modelParts = []backend.ModelPart{
	{Path: []string{"choices", "[]", "*", "content"}, String: true},
	{Path: []string{"choices", "[]", "*", "reasoning_content"}, String: true},
	{Path: []string{"choices", "[]", "*", "reasoning"}, String: true},
	{Path: []string{"choices", "[]", "*", "tool_calls"}},
}

// cut judges an event whose data (its beginning) ran past maxEvent:
// backend.ErrCut when it is cut inside what the model writes, else a
// *backend.StreamFault.
func cut(data []byte, maxEvent int) error {
	if backend.CutInside(data, modelParts...) {
		return backend.ErrCut
	}
	return &backend.StreamFault{What: fmt.Sprintf("an event of more than %d bytes, cut outside the reply's text and tool calls", maxEvent)}
}

// accumulator builds one reply from streamed deltas (or from one whole
// message), keeping at most limit bytes of text and arguments and at
// most MaxReplyCalls calls.
type accumulator struct {
	content, thinking strings.Builder
	calls             []callAcc
	// byIndex holds, for each index, the position in calls of the last
	// call with it, so that a fragment finds its call in constant time.
	byIndex map[int]int
	finish  string
	usage   *usage
	model   string
	backend.ReplyBudget
}

type callAcc struct {
	id   string
	name string
	args []byte
}

// add folds one chunk in. It returns backend.ErrCut once the reply reached the
// limit, and a *backend.Error for an error the server reported inside the
// stream.
func (a *accumulator) add(c *chunk) error {
	if c.Error != nil {
		return c.Error
	}
	if c.Model != "" {
		a.model = c.Model
	}
	if c.Usage != nil {
		a.usage = c.Usage
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // toolward asks for one choice
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
		}
		d := ch.Delta
		if d == nil {
			d = ch.Message
		}
		if d == nil {
			continue
		}
		a.text(&a.content, d.Content)
		a.text(&a.thinking, d.ReasoningContent)
		a.text(&a.thinking, d.Reasoning)
		for j := range d.ToolCalls {
			if err := a.call(&d.ToolCalls[j]); err != nil {
				return err
			}
		}
		if a.Cut {
			return backend.ErrCut
		}
	}
	return nil
}

func (a *accumulator) text(b *strings.Builder, s string) {
	if s == "" {
		return
	}
	b.WriteString(a.Keep(s))
}

// call joins a tool call fragment to its call: the last call with its
// index, when the server sends one, unless the fragment carries a
// different id (Ollama's model parsers give every call index 0, each
// whole and with its own id); without an index, a fragment with an id
// starts a new call and one without continues the last. A fragment that
// would start call MaxReplyCalls+1 is dropped and the reply marked cut.
func (a *accumulator) call(d *deltaCall) error {
	c := a.find(d)
	if c == nil {
		if c = a.start(d); c == nil {
			return nil
		}
	}
	if d.ID != "" {
		c.id = d.ID
	}
	// A name is sent once, in the first fragment; a server that repeats
	// it whole is not taken to mean a longer name.
	if n := d.Function.Name; n != "" && n != c.name {
		c.name += a.Keep(n)
	}
	frag, err := argText(d.Function.Arguments)
	if err != nil {
		return err
	}
	c.args = append(c.args, frag[:a.Room(len(frag))]...)
	return nil
}

// find returns the call fragment d continues, or nil when it starts one.
func (a *accumulator) find(d *deltaCall) *callAcc {
	switch {
	case d.Index != nil:
		i, ok := a.byIndex[*d.Index]
		if ok && (d.ID == "" || a.calls[i].id == "" || a.calls[i].id == d.ID) {
			return &a.calls[i]
		}
	case d.ID == "" && len(a.calls) > 0:
		return &a.calls[len(a.calls)-1]
	}
	return nil
}

// start appends a new call for fragment d, or marks the reply cut and
// returns nil when it already holds MaxReplyCalls calls.
func (a *accumulator) start(d *deltaCall) *callAcc {
	if len(a.calls) >= MaxReplyCalls {
		a.Cut = true
		return nil
	}
	idx := len(a.calls)
	if d.Index != nil {
		idx = *d.Index
	}
	if a.byIndex == nil {
		a.byIndex = make(map[int]int)
	}
	a.byIndex[idx] = len(a.calls)
	a.calls = append(a.calls, callAcc{})
	return &a.calls[len(a.calls)-1]
}

// argText returns an arguments fragment as text: a JSON string is
// unquoted, an object (sent by a few servers instead of a string) is kept
// as it is.
func argText(raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '"' {
		return raw, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// message returns the accumulated assistant message. Arguments are kept
// verbatim, even when they are not valid JSON: the agent records such a
// call as malformed (the model's fault).
func (a *accumulator) message() backend.Message {
	m := backend.Message{Role: "assistant", Content: a.content.String(), Thinking: a.thinking.String()}
	if len(a.calls) > 0 {
		m.ToolCalls = make([]backend.ToolCall, len(a.calls))
		for i, c := range a.calls {
			m.ToolCalls[i] = backend.ToolCall{ID: c.id, Name: c.name, Arguments: json.RawMessage(c.args)}
		}
	}
	return m
}

func (a *accumulator) doneReason() string {
	if a.Cut {
		return DoneReplyLimit
	}
	return a.finish
}

// readStream reads a server-sent event stream into a. It returns nil at
// data: [DONE] (or at the end of a stream that gave its finish reason),
// backend.ErrCut when the reply reached the limit, errBrokenStream when the stream
// ended early, and the server's *apiError for an error event.
func readStream(body io.Reader, a *accumulator) error {
	r := backend.GetSSE(body)
	defer backend.PutSSE(r)
	maxEvent := a.Limit + pooledCap
	var c chunk
	for {
		data, err := nextEvent(r, maxEvent)
		switch {
		case errors.Is(err, io.EOF):
			if a.finish != "" {
				return nil
			}
			return errBrokenStream
		case errors.Is(err, backend.ErrCut):
			a.Cut = true // one event longer than the whole reply may be
			return err
		case err != nil:
			return err
		}
		data = bytes.TrimSpace(data)
		if len(data) == 0 {
			continue // an event without data is no event
		}
		if bytes.Equal(data, []byte("[DONE]")) {
			return nil
		}
		c = chunk{}
		if err := json.Unmarshal(data, &c); err != nil {
			return backend.NewGarbled(data, err)
		}
		if err := a.add(&c); err != nil {
			return err
		}
	}
}

// garbled is an event (or a whole reply) whose data is not the JSON of a
// chunk.
type garbled = backend.Garbled

// Error makes an error reported inside a stream an error value.
func (e *apiError) Error() string {
	if e.Type != "" {
		return e.Message + " (" + e.Type + ")"
	}
	return e.Message
}
