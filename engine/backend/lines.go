package backend

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Lines reads a reply stream line by line, each line without its line
// ending and valid until the next call, within a length limit per line.
// A line longer than the read buffer is joined in a buffer of its own;
// past the limit reading stops with ErrLineTooLong, and Partial holds
// what was read of the line, so a line is never held whole whatever its
// length. The backends' stream readers (NDJSON and SSE) share it; they
// pool their readers, so a request allocates no read buffer.
type Lines struct {
	br   *bufio.Reader
	long []byte // a line longer than br's buffer
}

// ErrLineTooLong is Next's error for a line longer than its limit.
var ErrLineTooLong = errors.New("line longer than its limit")

// NewLines returns a Lines with a read buffer of size bytes, reading
// nothing until Reset.
func NewLines(size int) Lines { return Lines{br: bufio.NewReaderSize(nil, size)} }

// Reset makes l read from r (nil lets go of the last stream) and drops a
// joined-line buffer that grew past keep bytes.
func (l *Lines) Reset(r io.Reader, keep int) {
	l.br.Reset(r)
	if cap(l.long) > keep {
		l.long = nil
	}
}

// Partial is the beginning of the line Next refused as too long.
func (l *Lines) Partial() []byte { return l.long }

// Next returns the next line without its line ending; io.EOF at the end
// of the stream (a last line without a newline is a line); ErrLineTooLong
// for a line longer than limit.
func (l *Lines) Next(limit int) ([]byte, error) {
	line, err := l.br.ReadSlice('\n')
	switch {
	case err == nil || (errors.Is(err, io.EOF) && len(line) > 0):
		return trimEOL(line), nil
	case !errors.Is(err, bufio.ErrBufferFull):
		return nil, err
	}
	l.long = append(l.long[:0], line...)
	for {
		if len(l.long) > limit {
			return nil, ErrLineTooLong
		}
		line, err = l.br.ReadSlice('\n')
		l.long = append(l.long, line...)
		switch {
		case err == nil, errors.Is(err, io.EOF):
			return trimEOL(l.long), nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

func trimEOL(l []byte) []byte {
	l = bytes.TrimSuffix(l, []byte("\n"))
	return bytes.TrimSuffix(l, []byte("\r"))
}
