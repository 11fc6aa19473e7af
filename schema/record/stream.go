package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// SyntaxError reports a line of runs.jsonl that is not a record.
type SyntaxError struct {
	File string
	Line int
	Err  error
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d: not a run record: %v", e.File, e.Line, e.Err)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// Reader streams records from runs.jsonl.
//
//	r := record.NewReader(f, "runs.jsonl")
//	for r.Scan() {
//		rec, err := r.Record()
//		if err != nil { /* *SyntaxError: report, skip */ continue }
//		...
//	}
//	if err := r.Err(); err != nil { /* I/O error */ }
//
// A line longer than MaxLineBytes is a *SyntaxError wrapping
// ErrLineTooLong; it is discarded as it is read, never held whole.
//
// Decoding is lazy: Scan only finds the line, Record decodes it (once),
// and ID peeks at the run id without decoding, so a reader that needs
// only the id pays less.
type Reader struct {
	br      *bufio.Reader
	max     int
	buf     []byte
	raw     []byte // the current line; nil for a line too long
	file    string
	line    int
	rec     Record
	decoded bool // rec or err holds the current line's record
	err     error
	ioErr   error
}

// ErrLineTooLong is the cause of the *SyntaxError for a line longer than
// MaxLineBytes.
var ErrLineTooLong = errors.New("line too long")

// NewReader returns a Reader; file names the source in errors.
func NewReader(r io.Reader, file string) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: MaxLineBytes, file: file}
}

// Scan advances to the next non-blank line. It returns false at EOF or on
// an I/O error (see Err).
func (r *Reader) Scan() bool {
	for {
		b, n, ok := r.readLine()
		if !ok {
			return false
		}
		r.line++
		r.rec = Record{}
		r.err = nil
		r.raw = nil
		r.decoded = false
		if n > r.max {
			r.err = &SyntaxError{File: r.file, Line: r.line, Err: fmt.Errorf("%w: %d bytes, more than the %d a line may have", ErrLineTooLong, n, r.max)}
			r.decoded = true
			return true
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		r.raw = b
		return true
	}
}

// decode parses one line into r.rec, or sets r.err.
func (r *Reader) decode(b []byte) {
	r.rec = Record{}
	if err := decodeLine(b, &r.rec); err != nil {
		r.err = &SyntaxError{File: r.file, Line: r.line, Err: err}
	} else if r.rec.ID == "" {
		r.err = &SyntaxError{File: r.file, Line: r.line, Err: errors.New("no run id")}
	} else if r.rec.Version > Version {
		r.err = &SyntaxError{File: r.file, Line: r.line, Err: fmt.Errorf("format version %d is newer than this toolward reads (%d); upgrade toolward", r.rec.Version, Version)}
	} else {
		r.rec.restoreAnswer()
		r.rec.upgrade()
	}
}

// readLine reads the next line without its newline. n is the line's full
// length; when it exceeds r.max the rest of the line is discarded and b
// holds only a prefix. ok is false at EOF with nothing read, or on an I/O
// error.
func (r *Reader) readLine() (b []byte, n int, ok bool) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		n += len(chunk)
		if len(r.buf)+len(chunk) <= r.max+1 { // +1: the newline
			r.buf = append(r.buf, chunk...)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(r.buf, []byte("\n")), n - 1, true
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return r.buf, n, n > 0
		default:
			r.ioErr = err
			return nil, 0, false
		}
	}
}

// Record returns the current record, or a *SyntaxError for a bad line.
// The returned pointer is valid until the next Scan.
func (r *Reader) Record() (*Record, error) {
	if !r.decoded {
		r.decode(r.raw)
		r.decoded = true
	}
	if r.err != nil {
		return nil, r.err
	}
	return &r.rec, nil
}

// ID returns the run id the current line holds when it is a record (see
// PeekID), without decoding it; "" when no id was found.
func (r *Reader) ID() string {
	id, _ := PeekID(r.raw)
	return id
}

// Line returns the current line as read (without its newline), nil for a
// line too long. It is valid until the next Scan.
func (r *Reader) Line() []byte { return r.raw }

// Err returns the first I/O error, if any.
func (r *Reader) Err() error { return r.ioErr }

// Writer appends records as JSON lines. It is safe for concurrent use.
// Nothing is buffered: each Write hands one complete line to the
// underlying writer in a single call, so a crash loses at most the runs in
// flight.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer appending to w (typically an *os.File opened
// with O_APPEND).
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write appends one record, stamping its Version, encoded by Marshal
// (so within MaxRecordBytes; rec's own values are left whole).
func (w *Writer) Write(rec *Record) error {
	rec.Version = Version
	b, err := Marshal(rec)
	if err != nil {
		return fmt.Errorf("record: encoding %s: %w", rec.ID, err)
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(b)
	return err
}
