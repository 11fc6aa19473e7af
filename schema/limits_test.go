package schema

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFileSizeLimit: a file over the limit is refused with its size
// and the limit; one at the limit is read.
func TestReadFileSizeLimit(t *testing.T) {
	dir := t.TempDir()
	at, over := filepath.Join(dir, "at.yaml"), filepath.Join(dir, "over.yaml")
	os.WriteFile(at, make([]byte, 1<<20), 0o644)
	os.WriteFile(over, make([]byte, 3<<19+1), 0o644)
	if b, err := ReadFile(at, "case file", 1<<20); err != nil || len(b) != 1<<20 {
		t.Errorf("file at the limit: %d bytes, %v", len(b), err)
	}
	_, err := ReadFile(over, "case file", 1<<20)
	want := "read " + over + ": case file is 1.5 MiB (1572865 bytes), over the 1 MiB limit"
	if err == nil || err.Error() != want {
		t.Errorf("file over the limit:\n got  %v\n want %s", err, want)
	}
}

// TestReadFileBoundsWhatItReads: a regular file whose size says it fits
// but whose content does not (as for a file that grows while being
// read) is cut at the limit, not read to its end. /proc files report
// size 0 whatever they hold.
func TestReadFileBoundsWhatItReads(t *testing.T) {
	const p = "/proc/self/maps"
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		t.Skip("no /proc/self/maps reporting size 0")
	}
	_, err = ReadFile(p, "case file", 16)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != -1 {
		t.Fatalf("got %v, want a TooLargeError of unknown size", err)
	}
	if want := "read " + p + ": case file grew past the 16 bytes limit while being read"; err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
}

// TestErrorsLinesCapsOneKind: 10,000 duplicate seeds print ten lines and
// one "… and N more" line, not 10,000 lines; errors of other kinds are
// all printed; the list itself keeps every error.
func TestErrorsLinesCapsOneKind(t *testing.T) {
	var es Errors
	for i := range 25 {
		es = append(es, &Error{File: "c.cue", Line: 3, Col: 10 + 2*i, Path: fmt.Sprintf("matrix.seeds[%d]", i+1), Msg: fmt.Sprintf("duplicate value %d", i)})
	}
	es = append(es,
		&Error{File: "c.cue", Line: 4, Col: 1, Path: "matrix.models[1]", Msg: `duplicate value "m"`},
		&Error{File: "c.cue", Line: 5, Col: 1, Path: "matrix.models[2]", Msg: `duplicate value "n"`},
		&Error{File: "d.cue", Line: 3, Col: 1, Path: "matrix.seeds[1]", Msg: "duplicate value 0"},
	)
	lines := es.Lines()
	want := []string{}
	for i := range MaxSameKind {
		want = append(want, fmt.Sprintf("c.cue:3:%d: matrix.seeds[%d]: duplicate value %d", 10+2*i, i+1, i))
	}
	want = append(want,
		"c.cue: matrix.seeds[…]: … and 15 more like this (duplicate value …)",
		`c.cue:4:1: matrix.models[1]: duplicate value "m"`,
		`c.cue:5:1: matrix.models[2]: duplicate value "n"`,
		"d.cue:3:1: matrix.seeds[1]: duplicate value 0",
	)
	if got := strings.Join(lines, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if es.Error() != strings.Join(want, "\n") {
		t.Error("Error() does not print Lines()")
	}
	if len(es) != 28 {
		t.Errorf("the list lost errors: %d", len(es))
	}
}
