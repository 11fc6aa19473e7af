package results

import (
	"io"
	"path/filepath"

	"github.com/toolward/toolward/engine/record"
)

// EachRecord calls fn for every line of dir/runs.jsonl, in order: with
// the record, or with the *record.SyntaxError of a line that is not one
// (the record is then nil). A missing runs.jsonl has no lines. An error
// from fn stops the walk and is returned.
func EachRecord(dir string, fn func(*record.Record, error) error) error {
	return eachRecord(dir, fn)
}

// WriteRuns writes dir/runs.jsonl atomically with the records fill puts,
// each as it is (the format version it carries is kept), within
// record.MaxRecordBytes.
func WriteRuns(dir string, fill func(put func(*record.Record) error) error) error {
	return writeAtomic(filepath.Join(dir, RunsFile), func(w io.Writer) error {
		return fill(func(rec *record.Record) error { return writeLine(w, rec) })
	})
}
