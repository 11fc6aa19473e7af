package results

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/toolward/toolward/schema/record"
)

// MaxBadKept bounds the unreadable lines whose errors ReadStats keeps
// (it counts them all).
const MaxBadKept = 10

// ReadStats says what Runs passed over.
type ReadStats struct {
	Records    int // records given to fn: one per run id
	Duplicates int // further records of a run id (see Runs)
	Unknown    int // of Records, those whose outcome is not pass, fail or error
	BadLines   int // lines that are not records (a crash mid-write, typically)
	// Bad holds the *record.SyntaxError of the first MaxBadKept bad
	// lines, in order.
	Bad []error
}

// Runs streams the runs of dir/runs.jsonl (of each dir in turn, read as
// one stream when there are several) to fn, one record per run id, in
// the order the chosen records appear. It is the one reader of results:
// resume (Compact), merge, report, diff and score all read through it,
// so they agree on which record stands for a run.
//
// The de-duplication rule: a run id is represented by its first pass or
// fail record (a verdict); a run with none is represented by its first
// record of any other outcome (error, or one this version does not
// know). Every other record of the id is a duplicate and is skipped. A
// verdict thus always beats an infrastructure error, whatever their
// order, and of two verdicts the first written is kept: resume appends
// only runs it did not have, so a second verdict for an id comes from
// concatenated or doubly written files, never from a deliberate re-run
// (re-scoring writes a new directory, see toolward score).
//
// What a consumer does with a record that is not a verdict is its own
// policy: resume runs it again, report counts it as an error, merge
// copies an error record and drops one of unknown outcome. Unreadable
// lines are skipped and counted. A missing runs.jsonl has no runs. An
// error from fn stops the read and is returned.
//
// The files are read twice, but decoded once: the first pass only peeks
// at each line's run id (record.PeekID) to find the ids that occur more
// than once, and only when there are such ids are their lines decoded
// on a second look, to note which have a verdict. Memory is 8 bytes per
// run id (more for ids that are not 16 hex digits) while the first pass
// lasts, then 10 bytes per repeated id.
func Runs(fn func(*record.Record) error, dirs ...string) (*ReadStats, error) {
	return read(func(r *record.Reader) error {
		rec, err := r.Record()
		if err != nil {
			return err
		}
		return fn(rec)
	}, dirs)
}

// RunsSummary is Runs giving fn each chosen record, valid only during
// the call, with whole, which returns the same record (records are
// decoded whole; whole remains for consumers written against a lighter
// first view).
func RunsSummary(fn func(rec *record.Record, whole func() (*record.Record, error)) error, dirs ...string) (*ReadStats, error) {
	return read(func(r *record.Reader) error {
		rec, err := r.Record()
		if err != nil {
			return err
		}
		return fn(rec, r.Record)
	}, dirs)
}

// RunsLines is Runs giving fn each chosen record whole with the line it
// was read from (valid only during the call), for a writer that copies
// the line when the record is unchanged (see WriteRunLines).
func RunsLines(fn func(rec *record.Record, line []byte) error, dirs ...string) (*ReadStats, error) {
	return read(func(r *record.Reader) error {
		rec, err := r.Record()
		if err != nil {
			return err
		}
		return fn(rec, r.Line())
	}, dirs)
}

// read is Runs and RunsSummary: it chooses a record per run id by the
// rule of Runs and calls give with the reader on its line.
func read(give func(*record.Reader) error, dirs []string) (*ReadStats, error) {
	decode := (*record.Reader).Record
	var all idSet
	for _, d := range dirs {
		if err := eachLine(d, func(r *record.Reader) error { all.add(r.ID()); return nil }); err != nil {
			return nil, err
		}
	}
	repeated := all.repeated()
	all = idSet{}
	// judged[i] notes that the repeated id at index i has a verdict
	// somewhere; kept[i] that its record was chosen.
	n := repeated.len()
	judged, kept := make([]bool, n), make([]bool, n)
	if n > 0 {
		for _, d := range dirs {
			err := eachLine(d, func(r *record.Reader) error {
				if i, ok := repeated.index(r.ID()); ok {
					if rec, err := decode(r); err == nil && verdict(rec) {
						judged[i] = true
					}
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	st := &ReadStats{}
	for _, d := range dirs {
		err := eachLine(d, func(r *record.Reader) error {
			rec, err := decode(r)
			if err != nil {
				st.BadLines++
				if len(st.Bad) < MaxBadKept {
					st.Bad = append(st.Bad, err)
				}
				return nil
			}
			if n > 0 {
				if i, ok := repeated.index(rec.ID); ok {
					if kept[i] || (!verdict(rec) && judged[i]) {
						st.Duplicates++
						return nil
					}
					kept[i] = true
				}
			}
			st.Records++
			if !record.KnownOutcome(rec.Outcome) {
				st.Unknown++
			}
			return give(r)
		})
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// CheckRuns returns the error of opening dir/runs.jsonl (an
// *fs.PathError naming the file), nil when it opens: for readers to which
// a missing file is a mistake, since Runs reads it as empty. Anything but
// a regular file (a named pipe, a device) is refused without opening it,
// as Runs refuses it.
func CheckRuns(dir string) error {
	f, err := openRuns(filepath.Join(dir, RunsFile))
	if err != nil {
		return err
	}
	return f.Close()
}

// verdict reports whether rec is a pass or fail record.
func verdict(rec *record.Record) bool {
	return rec.Outcome == record.Pass || rec.Outcome == record.Fail
}

// Line is one line of runs.jsonl as WriteRunLines writes it: a record's
// line as read, copied as it is when Rec is nil, else Rec encoded (within
// record.MaxRecordBytes).
type Line struct {
	Raw []byte
	Rec *record.Record
}

// WriteRunLines writes dir/runs.jsonl atomically with the lines fill
// puts; put returns the bytes written for the line (valid until the next
// put). A raw line longer than record.MaxRecordBytes is refused: decode it
// and put the record.
func WriteRunLines(dir string, fill func(put func(Line) ([]byte, error)) error) error {
	return writeAtomic(filepath.Join(dir, RunsFile), func(w io.Writer) error {
		var buf []byte
		return fill(func(l Line) ([]byte, error) {
			if l.Rec == nil {
				if len(l.Raw) > record.MaxRecordBytes {
					return nil, fmt.Errorf("a line of %d bytes is longer than a record may be", len(l.Raw))
				}
				buf = append(append(buf[:0], l.Raw...), '\n')
			} else {
				b, err := record.Marshal(l.Rec)
				if err != nil {
					return nil, err
				}
				buf = append(b, '\n')
			}
			_, err := w.Write(buf)
			return buf[:len(buf)-1], err
		})
	})
}
