package record

import (
	"bufio"
	"bytes"
	"encoding/json"
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
type Reader struct {
	s    *bufio.Scanner
	file string
	line int
	rec  Record
	err  error
}

// NewReader returns a Reader; file names the source in errors.
func NewReader(r io.Reader, file string) *Reader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64*1024), 64<<20) // traces can be long
	return &Reader{s: s, file: file}
}

// Scan advances to the next non-blank line. It returns false at EOF or on
// an I/O error (see Err).
func (r *Reader) Scan() bool {
	for r.s.Scan() {
		r.line++
		b := r.s.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		r.rec = Record{}
		r.err = nil
		if err := json.Unmarshal(b, &r.rec); err != nil {
			r.err = &SyntaxError{File: r.file, Line: r.line, Err: err}
		} else if r.rec.ID == "" {
			r.err = &SyntaxError{File: r.file, Line: r.line, Err: errors.New("no run id")}
		} else if r.rec.Version > Version {
			r.err = &SyntaxError{File: r.file, Line: r.line, Err: fmt.Errorf("format version %d is newer than this toolward reads (%d); upgrade toolward", r.rec.Version, Version)}
		}
		return true
	}
	return false
}

// Record returns the current record, or a *SyntaxError for a bad line.
// The returned pointer is valid until the next Scan.
func (r *Reader) Record() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	return &r.rec, nil
}

// Err returns the first I/O error, if any.
func (r *Reader) Err() error { return r.s.Err() }

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

// Write appends one record, stamping its Version.
func (w *Writer) Write(rec *Record) error {
	rec.Version = Version
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("record: encoding %s: %w", rec.ID, err)
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(b)
	return err
}
