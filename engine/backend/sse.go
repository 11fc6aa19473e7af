package backend

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// SSE reads a server-sent event stream (the OpenAI and Anthropic
// replies) event by event, within a length limit. What a line that
// carries no data means (filler to bound, a field to count) is the
// caller's: Next hands each one to a skip function. Readers are pooled
// (GetSSE, PutSSE), so a request allocates no read buffer.
type SSE struct {
	lines Lines
	data  []byte // the current event's data, lines joined by \n
}

const (
	// SSEReadBuffer is an SSE reader's read buffer.
	SSEReadBuffer = 16 << 10
	// SSEPooledCap is the largest event buffer a pooled reader keeps; one
	// that grew past it for a long event is dropped rather than kept.
	SSEPooledCap = 64 << 10
)

var (
	// ErrEventTooLong is Next's error for an event whose data runs past
	// the limit; Data holds its beginning.
	ErrEventTooLong = errors.New("event longer than its limit")
	// ErrFieldTooLong is Next's error for a line longer than the limit
	// that is not event data.
	ErrFieldTooLong = errors.New("line that is not event data longer than its limit")
)

var sseReaders = sync.Pool{New: func() any { return &SSE{lines: NewLines(SSEReadBuffer)} }}

// GetSSE returns a pooled reader reading from r.
func GetSSE(r io.Reader) *SSE {
	s := sseReaders.Get().(*SSE)
	s.lines.Reset(r, SSEPooledCap)
	s.data = s.data[:0]
	return s
}

// PutSSE gives s back to the pool; s must not be used after.
func PutSSE(s *SSE) {
	s.lines.Reset(nil, SSEPooledCap)
	if cap(s.data) > SSEPooledCap {
		s.data = nil
	}
	sseReaders.Put(s)
}

// Next returns the data of the next event, its data lines joined by \n
// (one space after "data:" dropped), valid until the next call; io.EOF at
// the end of the stream (a last event without its blank line is an
// event). Each line that carries no data goes to skip, with its field
// (what comes before the first colon: "" for a comment); an error skip
// returns ends reading with it. Those lines are the other fields (event:,
// id:, retry:, unknown ones), comments, lines that are no SSE at all, and
// blank lines that end no event (line and field empty). An event whose
// data runs past limit bytes is ErrEventTooLong, Data holding its
// beginning; a longer line that is not data is ErrFieldTooLong.
func (s *SSE) Next(limit int, skip func(field, line []byte) error) ([]byte, error) {
	s.data = s.data[:0]
	have := false
	for {
		line, err := s.lines.Next(limit - len(s.data))
		if errors.Is(err, ErrLineTooLong) {
			field, value, _ := bytes.Cut(s.lines.Partial(), []byte(":"))
			if string(field) != "data" {
				return nil, ErrFieldTooLong
			}
			s.add(value, have)
			return nil, ErrEventTooLong
		}
		if err != nil {
			if errors.Is(err, io.EOF) && have {
				return s.data, nil // a last event without its blank line
			}
			return nil, err
		}
		if len(line) == 0 && have {
			return s.data, nil
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if len(line) == 0 || string(field) != "data" {
			if err := skip(field, line); err != nil {
				return nil, err
			}
			continue
		}
		s.add(value, have)
		have = true
		if len(s.data) > limit {
			return nil, ErrEventTooLong
		}
	}
}

// add appends one data line's value to the event's data.
func (s *SSE) add(value []byte, more bool) {
	if more {
		s.data = append(s.data, '\n')
	}
	s.data = append(s.data, bytes.TrimPrefix(value, []byte(" "))...)
}

// Data is the beginning of the event Next refused as too long.
func (s *SSE) Data() []byte { return s.data }

// Garbled is a reply's event (or whole reply) whose data is not the JSON
// it should be.
type Garbled struct {
	Data string // the data, abbreviated
	Err  error  // the JSON error
}

// NewGarbled returns the error for data that err says is not JSON.
func NewGarbled(data []byte, err error) *Garbled {
	return &Garbled{Data: Abbreviate(data), Err: err}
}

func (g *Garbled) Error() string { return "garbled event " + g.Data + ": " + g.Err.Error() }
func (g *Garbled) Unwrap() error { return g.Err }

// Abbreviate returns b as text, cut after 120 bytes, to quote what a
// server sent in a message.
func Abbreviate(b []byte) string {
	const n = 120
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
