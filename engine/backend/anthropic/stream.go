package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/toolward/toolward/engine/backend"
)

// DoneReplyLimit is the DoneReason of a reply cut at Config.MaxReplyBytes,
// MaxReplyCalls or MaxReplyBlocks: the model produced more than toolward
// keeps. What was kept is in the reply; tool call input cut short is a
// malformed call.
const DoneReplyLimit = backend.DoneReplyLimit

// MaxReplyCalls bounds the tool_use blocks one reply may hold; a reply
// that starts more is cut there (DoneReplyLimit), keeping the first
// MaxReplyCalls.
const MaxReplyCalls = 1024

// MaxReplyBlocks bounds the content blocks of any type one reply may
// hold, so that a stream of empty blocks cannot grow a reply without
// bound.
const MaxReplyBlocks = 4 * MaxReplyCalls

var (
	// errBrokenStream is a stream that ended before message_stop.
	errBrokenStream = errors.New("stream ended before message_stop")
	// errJunk is a stream that sent more bytes carrying no reply (SSE
	// comments, blank lines, pings, events of unknown types) than the
	// reply limit: no model writes that, so it is the server's fault.
	errJunk = errors.New("the server sent more bytes that carry no reply than a whole reply may hold")
)

// accumulator builds one reply from streamed events, keeping at most
// limit bytes of text, thinking, signatures and tool input, at most
// MaxReplyCalls tool_use blocks and MaxReplyBlocks blocks.
type accumulator struct {
	blocks []blockAcc
	// byIndex maps an event's block index to its position in blocks.
	byIndex map[int]int
	calls   int
	stop    string
	usage   usage
	done    bool
	backend.ReplyBudget
	thinking bool // some block is thinking or redacted_thinking
}

type blockAcc struct {
	typ       string
	text      strings.Builder // text or thinking
	id, name  string
	input     []byte // joined input_json_delta fragments
	initial   json.RawMessage
	signature []byte
	data      string // redacted_thinking
	stopped   bool
}

// add folds one event in. It returns backend.ErrCut once the reply reached a
// limit, the server's *apiError for an error event, and reports in junk
// whether the event carried nothing for the reply (a ping, an unknown
// type).
func (a *accumulator) add(e *event) (junk bool, err error) {
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			a.usage = e.Message.Usage
		}
	case "content_block_start":
		if e.Index == nil || e.ContentBlock == nil {
			return false, errors.New("content_block_start without index or content_block")
		}
		a.start(*e.Index, e.ContentBlock)
	case "content_block_delta":
		b := a.find(e.Index)
		if b == nil || e.Delta == nil {
			break // a delta for a block cut away, or none
		}
		d := e.Delta
		switch d.Type {
		case "text_delta":
			b.text.WriteString(a.Keep(d.Text))
		case "thinking_delta":
			b.text.WriteString(a.Keep(d.Thinking))
		case "input_json_delta":
			b.input = append(b.input, a.Keep(d.PartialJSON)...)
		case "signature_delta":
			b.signature = append(b.signature, a.Keep(d.Signature)...)
		default:
			junk = true // citations and deltas of later API versions
		}
	case "content_block_stop":
		if b := a.find(e.Index); b != nil {
			b.stopped = true
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != nil {
			a.stop = *e.Delta.StopReason
		}
		if u := e.Usage; u != nil {
			a.usage.OutputTokens = u.OutputTokens
			if u.InputTokens > 0 {
				a.usage.InputTokens = u.InputTokens
			}
		}
	case "message_stop":
		a.done = true
	case "error":
		if e.Error == nil {
			return false, &apiError{Message: "error event without an error"}
		}
		return false, e.Error
	default:
		junk = true // ping, and event types of later API versions
	}
	if a.Cut {
		return junk, backend.ErrCut
	}
	return junk, nil
}

// start begins the block at index i, or marks the reply cut when it
// already holds as many blocks (or tool calls) as it may.
func (a *accumulator) start(i int, cb *block) {
	if len(a.blocks) >= MaxReplyBlocks || (cb.Type == "tool_use" && a.calls >= MaxReplyCalls) {
		a.Cut = true
		return
	}
	if a.byIndex == nil {
		a.byIndex = make(map[int]int)
	}
	a.byIndex[i] = len(a.blocks)
	a.blocks = append(a.blocks, blockAcc{typ: cb.Type})
	b := &a.blocks[len(a.blocks)-1]
	switch cb.Type {
	case "tool_use":
		a.calls++
		b.id = cb.ID
		b.name = a.Keep(cb.Name)
		b.initial = append(json.RawMessage(nil), cb.Input[:a.Room(len(cb.Input))]...)
	case "text":
		b.text.WriteString(a.Keep(cb.Text))
	case "thinking":
		a.thinking = true
		b.text.WriteString(a.Keep(cb.Thinking))
		b.signature = append(b.signature, a.Keep(cb.Signature)...)
	case "redacted_thinking":
		a.thinking = true
		b.data = a.Keep(cb.Data)
	}
}

func (a *accumulator) find(i *int) *blockAcc {
	if i == nil {
		return nil
	}
	if p, ok := a.byIndex[*i]; ok {
		return &a.blocks[p]
	}
	return nil
}

// args returns a tool_use block's input as the model sent it: the joined
// fragments, or the input of its start when no fragment came.
func (b *blockAcc) args() json.RawMessage {
	if len(b.input) > 0 {
		return json.RawMessage(b.input)
	}
	if t := bytes.TrimSpace(b.initial); len(t) > 0 && string(t) != "{}" {
		return json.RawMessage(t)
	}
	return json.RawMessage("{}")
}

// message returns the accumulated assistant message. Tool input is kept
// verbatim, even when it is not valid JSON: the agent records such a call
// as malformed (the model's fault). A reply with thinking keeps its
// blocks (Message.Blocks) to be sent back as they came.
func (a *accumulator) message() backend.Message {
	m := backend.Message{Role: "assistant"}
	var content, thought strings.Builder
	for i := range a.blocks {
		b := &a.blocks[i]
		switch b.typ {
		case "text":
			content.WriteString(b.text.String())
		case "thinking":
			thought.WriteString(b.text.String())
		case "tool_use":
			m.ToolCalls = append(m.ToolCalls, backend.ToolCall{ID: b.id, Name: b.name, Arguments: b.args()})
		}
	}
	m.Content, m.Thinking = content.String(), thought.String()
	if a.thinking {
		m.Blocks = a.wireBlocks()
	}
	return m
}

// wireBlocks encodes the reply's blocks as a request sends them back:
// thinking and redacted_thinking blocks unchanged, text, and tool_use
// blocks whose input is the call's if it is a JSON object, else {} (the
// API takes only objects; the tool result tells the model what was
// wrong).
func (a *accumulator) wireBlocks() json.RawMessage {
	out := make([]block, 0, len(a.blocks))
	for i := range a.blocks {
		b := &a.blocks[i]
		switch b.typ {
		case "text":
			if b.text.Len() > 0 {
				out = append(out, block{Type: "text", Text: b.text.String()})
			}
		case "thinking":
			out = append(out, block{Type: "thinking", Thinking: b.text.String(), Signature: string(b.signature)})
		case "redacted_thinking":
			out = append(out, block{Type: "redacted_thinking", Data: b.data})
		case "tool_use":
			out = append(out, block{Type: "tool_use", ID: b.id, Name: b.name, Input: objectOrEmpty(b.args())})
		}
	}
	raw, _ := json.Marshal(out)
	return raw
}

// objectOrEmpty returns raw when it is one JSON object, else {}.
func objectOrEmpty(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t
	}
	return json.RawMessage("{}")
}

// doneReason maps the API's stop reason to the done reasons the other
// backends report: end_turn and stop_sequence are "stop", tool_use is
// "tool_calls", max_tokens is "length" (also when it cut a call short,
// which is then malformed); refusal and pause_turn stay as they are. A
// reply cut by toolward's limits is DoneReplyLimit.
func (a *accumulator) doneReason() string {
	if a.Cut {
		return DoneReplyLimit
	}
	switch a.stop {
	case "end_turn", "stop_sequence":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	}
	return a.stop
}

// tokens returns the input tokens (cache writes and reads included) and
// the output tokens.
func (a *accumulator) tokens() (in, out int) {
	u := a.usage
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens, u.OutputTokens
}

// readStream reads a Messages API event stream into a. It returns nil at
// message_stop (or at the end of a stream that gave its stop reason),
// backend.ErrCut when the reply reached a limit, errBrokenStream when the stream
// ended early, errJunk for a stream of bytes that carry no reply, and the
// server's *apiError for an error event.
func readStream(body io.Reader, a *accumulator) error {
	r := backend.GetSSE(body)
	defer backend.PutSSE(r)
	maxEvent, maxJunk := a.Limit+backend.SSEPooledCap, a.Limit
	// junk counts the bytes read that carried no reply: comments, blank
	// lines that end no event, the event:, id: and retry: lines of events
	// without data, pings and events of unknown types. (The event's type
	// is in its data, so event: lines are not read further.) fields
	// counts the current event's lines other than data.
	junk, fields := 0, 0
	addJunk := func(n int) error {
		if junk += n; junk > maxJunk {
			return errJunk
		}
		return nil
	}
	skip := func(field, line []byte) error {
		switch {
		case len(line) == 0: // a blank line that ends no event
			n := fields + 1
			fields = 0
			return addJunk(n)
		case string(field) == "event" || string(field) == "id" || string(field) == "retry":
			if fields += len(line) + 1; fields > maxEvent {
				return backend.ErrCut
			}
			return nil
		default: // comments (": keep-alive") and unknown fields
			return addJunk(len(line) + 1)
		}
	}
	var e event
	for !a.done {
		fields = 0
		data, err := r.Next(maxEvent, skip)
		switch {
		case errors.Is(err, io.EOF):
			if a.stop != "" {
				return nil
			}
			return errBrokenStream
		case errors.Is(err, backend.ErrCut) || errors.Is(err, backend.ErrEventTooLong) || errors.Is(err, backend.ErrFieldTooLong):
			a.Cut = true // one event longer than the whole reply may be
			return backend.ErrCut
		case err != nil:
			return err
		}
		data = bytes.TrimSpace(data)
		if len(data) == 0 {
			if err := addJunk(1); err != nil {
				return err
			}
			continue
		}
		e = event{}
		if err := json.Unmarshal(data, &e); err != nil {
			return backend.NewGarbled(data, err)
		}
		empty, err := a.add(&e)
		if err != nil {
			return err
		}
		if empty {
			if err := addJunk(len(data)); err != nil {
				return err
			}
		}
	}
	return nil
}
