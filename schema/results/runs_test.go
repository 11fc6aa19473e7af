package results

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema/record"
)

// TestRunsRepeatedIDs: the rule of Runs holds however the repeated ids
// are spelled: a line that looks like a verdict of an id but is not a
// record does not displace the id's error record, a verdict still beats
// an error written before it, and ids that are not 16 hex digits are
// held exactly. Both views choose the same records.
func TestRunsRepeatedIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lines := []string{
		`{"id":"00000000000000aa","case":"c","outcome":"error","attempts":1}`,
		`{"id":"00000000000000aa","case":"c","outcome":"pass","attempts":"not a number"}`, // not a record
		`{"id":"00000000000000bb","case":"c","outcome":"error","attempts":2}`,
		`{"id":"00000000000000bb","case":"c","outcome":"fail","attempts":3}`,
		`{"id":"00000000000000bb","case":"c","outcome":"pass","attempts":4}`,
		`{"id":"run-x","case":"c","outcome":"error","attempts":5}`,
		`{"id":"run-x","case":"c","outcome":"pass","attempts":6}`,
		`{"id":"00000000000000AA","case":"c","outcome":"pass","attempts":7}`, // another id: upper-case hex
		`{"id":"00000000000000cc","case":"c","outcome":"pass","attempts":8}`,
	}
	if err := os.WriteFile(filepath.Join(dir, RunsFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []int{1, 3, 6, 7, 8}
	check := func(view string, got []int, st *ReadStats, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || st.Records != 5 || st.Duplicates != 3 || st.BadLines != 1 {
			t.Errorf("%s: chose attempts %v with %+v, want %v with 5 records, 3 duplicates, 1 bad line", view, got, st, want)
		}
	}
	var got []int
	st, err := Runs(func(rec *record.Record) error { got = append(got, rec.Attempts); return nil }, dir)
	check("whole", got, st, err)
	got = nil
	st, err = RunsSummary(func(rec *record.Record, _ func() (*record.Record, error)) error {
		got = append(got, rec.Attempts)
		return nil
	}, dir)
	check("summary", got, st, err)
}
