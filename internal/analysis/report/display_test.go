package report

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/toolward/toolward/schema/record"
)

// spoof holds the code points a report must not show raw: ESC, BEL,
// \x01, a C1 control, DEL, the right-to-left override and isolate, and a
// right-to-left mark.
const spoof = "\x1b[2J\a\x01\u0085\x7f\u202epass\u202c\u2067x\u2069\u200f"

// rawControls lists the offending code points found in b, and whether b
// holds invalid UTF-8.
func rawControls(b []byte) (found []rune, invalid bool) {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			invalid = true
		} else if hiddenControl(r) {
			found = append(found, r)
		}
		b = b[n:]
	}
	return found, invalid
}

func spoofRuns() []run {
	call := record.Call{Tool: "tool" + spoof, Args: map[string]any{"q" + spoof: "v" + spoof}, Confirm: "denied", Result: "result" + spoof}
	r := run{model: "m" + spoof, tools: "t" + spoof, confirm: "deny", desc: "d" + spoof, toolCount: 3, seed: 1,
		kase: "case" + spoof, outcome: "fail", reasons: []string{"answer_mismatch: got " + spoof},
		calls: []record.Call{call}, answer: "answer " + spoof}
	r2 := r
	r2.seed, r2.outcome, r2.reasons = 2, "pass", nil
	return []run{r, r2}
}

// checkReports fails when a report in dir holds a raw hidden control or
// invalid UTF-8, or junit.xml does not parse.
func checkReports(t *testing.T, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		if found, invalid := rawControls(b); len(found) > 0 || invalid {
			t.Errorf("%s holds raw controls %q (invalid UTF-8: %v)", name, found, invalid)
		}
		if !bytes.Contains(b, []byte(`\u202e`)) || !bytes.Contains(b, []byte(`\x1b`)) {
			t.Errorf("%s does not show the controls as visible escapes", name)
		}
	}
	if err := xml.Unmarshal(files[JUnitFile], new(JUnitSuites)); err != nil {
		t.Errorf("junit.xml does not parse: %v", err)
	}
}

func TestReportsShowControlsVisibly(t *testing.T) {
	dir := t.TempDir()
	writeRuns(t, filepath.Join(dir, RunsFile), encode(t, spoofRuns()))
	if _, err := Build(dir); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range []string{MarkdownFile, HTMLFile, JUnitFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = b
	}
	checkReports(t, files)
}

// runs.jsonl cannot carry invalid UTF-8 (JSON decoding replaces it), so
// this test puts it into a summary's strings directly.
func TestReportsReplaceInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	writeRuns(t, filepath.Join(dir, RunsFile), encode(t, spoofRuns()))
	s, err := Summarize(dir)
	if err != nil {
		t.Fatal(err)
	}
	bad := "\xff\xfe" + spoof + "\xe2\x80"
	s.Title += bad
	for i := range s.Cases {
		for j := range s.Cases[i].Cells {
			if e := s.Cases[i].Cells[j].Example; e != nil {
				e.Trace.Answer += bad
				e.Reasons[0].Detail += bad
				for k := range e.Trace.Calls {
					e.Trace.Calls[k].Tool += bad
					e.Trace.Calls[k].Result += bad
					e.Trace.Calls[k].RawArgs, e.Trace.Calls[k].Args = bad, nil
				}
			}
		}
	}
	files := map[string][]byte{}
	for name, write := range map[string]func(*bytes.Buffer) error{
		MarkdownFile: func(b *bytes.Buffer) error { return s.WriteMarkdown(b) },
		HTMLFile:     func(b *bytes.Buffer) error { return s.WriteHTML(b) },
		JUnitFile:    func(b *bytes.Buffer) error { return s.WriteJUnit(b) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		files[name] = b.Bytes()
	}
	checkReports(t, files)
}

func TestDisplaySafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n\tindented, ünïcödé, 表":           "plain text\n\tindented, ünïcödé, 表",
		"a\x1bb\ac\x01\x7f\r":                          `a\x1bb\x07c\x01\x7f\x0d`,
		"\u0085\u009f":                                 `\u0085\u009f`,
		"\u202aa\u202eb\u2066\u2069\u200e\u200f\u061c": `\u202aa\u202eb\u2066\u2069\u200e\u200f\u061c`,
		"x\xffy\xe2\x80":                               "x\uFFFDy\uFFFD\uFFFD",
		"kept \uFFFD":                                  "kept \uFFFD",
	} {
		if got := displaySafe(in); got != want {
			t.Errorf("displaySafe(%q) = %q, want %q", in, got, want)
		}
		if got := displaySafe(displaySafe(in)); got != displaySafe(in) {
			t.Errorf("displaySafe is not idempotent on %q: %q", in, got)
		}
	}
}

// A character cut across writes (bufio cuts anywhere) comes out whole;
// one never completed comes out as U+FFFD on Close.
func TestDisplayWriterSplitsCharacters(t *testing.T) {
	in := "é\u202e表" + "\xe2\x80"
	for cut := 0; cut <= len(in); cut++ {
		var b bytes.Buffer
		d := newDisplayWriter(&b)
		for _, part := range []string{in[:cut], in[cut:]} {
			if n, err := d.Write([]byte(part)); err != nil || n != len(part) {
				t.Fatalf("cut %d: Write = %d, %v", cut, n, err)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		// The unfinished character's two bytes are each invalid alone.
		want := "é\\u202e表\uFFFD\uFFFD"
		if got := b.String(); got != want {
			t.Errorf("cut %d: got %q, want %q", cut, got, want)
		}
	}
}
