package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolward/toolward/matchers"
)

// readBack writes rec with a Writer and reads it back.
func readBack(t *testing.T, rec *Record) (*Record, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := NewWriter(&buf).Write(rec); err != nil {
		t.Fatal(err)
	}
	line := bytes.Clone(buf.Bytes())
	if len(line) > MaxRecordBytes+1 {
		t.Fatalf("line of %d bytes, more than MaxRecordBytes", len(line))
	}
	r := NewReader(&buf, "runs.jsonl")
	if !r.Scan() {
		t.Fatalf("no record: %v", r.Err())
	}
	got, err := r.Record()
	if err != nil {
		t.Fatal(err)
	}
	return got, line
}

func notes(rec *Record) map[string]Truncation {
	m := map[string]Truncation{}
	for _, n := range rec.Truncated {
		m[n.Path] = n
	}
	return m
}

// TestHugeAnswerStoredOnceAndClipped: a 3 MiB answer (the 66 MiB
// in small) is stored once, clipped to MaxFieldBytes with a marker, and
// noted with its length; so are a huge tool result, a huge string inside
// the arguments, raw arguments and an error message. The record given to
// Write keeps its full values.
func TestHugeAnswerStoredOnceAndClipped(t *testing.T) {
	answer := "é" + strings.Repeat("the answer ", 3<<20/11) // a 2-byte rune first: cuts stay on rune boundaries
	big := strings.Repeat("r", 2<<20)
	rec := &Record{
		ID: "0123456789abcdef", Case: "c", Outcome: Pass,
		Trace: Trace{
			Turns: []Turn{{ToolCalls: 2}, {Content: answer}},
			Calls: []Call{
				{Tool: "sql", Args: map[string]any{"sql": big, "n": 1.0, "nested": []any{"short", big}}, Result: big},
				{Tool: "x", RawArgs: big, Malformed: true, Result: "bad args"},
			},
			TextCalls: []matchers.TextCall{{Turn: 1, Family: "hermes", Tool: "sql", Args: map[string]any{"sql": big}}},
			Answer:    answer,
		},
		Error:   &InfraError{Kind: "internal", Message: big},
		Reasons: []matchers.Reason{{Code: "wrong_args", Detail: big}},
	}
	got, line := readBack(t, rec)

	if n := bytes.Count(line, []byte("the answer the answer the answer")); n == 0 || bytes.Count(line, []byte(`"é`)) != 1 {
		t.Errorf("the answer is not stored exactly once (%d runs of it, %d starts)", n, bytes.Count(line, []byte(`"é`)))
	}
	if rec.Trace.Answer != answer || rec.Trace.Turns[1].Content != answer || rec.Trace.Calls[0].Result != big || rec.Trace.Calls[0].Args["sql"] != big {
		t.Fatal("Write modified the record it was given")
	}
	want := map[string]int{
		"trace.answer":                  len(answer),
		"trace.calls[0].args.sql":       len(big),
		"trace.calls[0].args.nested[1]": len(big),
		"trace.calls[0].result":         len(big),
		"trace.calls[1].raw_args":       len(big),
		"trace.text_calls[0].args.sql":  len(big),
		"error.message":                 len(big),
		"reasons[0].detail":             len(big),
	}
	ns := notes(got)
	if len(ns) != len(want) {
		t.Errorf("truncated notes %+v, want the paths of %v", got.Truncated, want)
	}
	for p, n := range want {
		if ns[p].Bytes != n {
			t.Errorf("note for %s: %+v, want %d bytes", p, ns[p], n)
		}
	}
	a := got.Trace.Answer
	if len(a) > MaxFieldBytes || !strings.HasPrefix(a, "éthe answer") || !strings.HasSuffix(a, fmt.Sprintf("…[truncated by toolward: %d bytes in all]", len(answer))) || !utf8.ValidString(a) {
		t.Errorf("clipped answer: %d bytes, ends %q", len(a), a[max(len(a)-60, 0):])
	}
	if got.Trace.Turns[1].Content != a {
		t.Error("the final turn's content was not restored from the answer")
	}
	if got.Trace.Calls[0].Args["n"] != json.Number("1") || got.Trace.Calls[0].Args["nested"].([]any)[0] != "short" {
		t.Errorf("short argument values changed: %v", got.Trace.Calls[0].Args)
	}
}

// TestSmallRecordUnchanged: a record within the limits reads back equal,
// final turn included, with no notes.
func TestSmallRecordUnchanged(t *testing.T) {
	rec := &Record{ID: "a", Outcome: Fail, Trace: Trace{Turns: []Turn{{Content: "It is 5."}}, Answer: "It is 5."}}
	got, line := readBack(t, rec)
	if bytes.Count(line, []byte("It is 5.")) != 1 {
		t.Errorf("answer stored %d times: %s", bytes.Count(line, []byte("It is 5.")), line)
	}
	if got.Trace.Turns[0].Content != "It is 5." || got.Trace.Answer != "It is 5." || got.Truncated != nil {
		t.Errorf("read back %+v", got)
	}
}

// TestClipIsStable: a clipped record read back and written again (as
// Compact and merge do) is byte for byte the same line, its notes keeping
// the original lengths.
func TestClipIsStable(t *testing.T) {
	rec := &Record{ID: "a", Outcome: Pass, Trace: Trace{Turns: []Turn{{Content: strings.Repeat("x", 3<<20)}}, Answer: strings.Repeat("x", 3<<20)}}
	got, line := readBack(t, rec)
	_, again := readBack(t, got)
	if !bytes.Equal(line, again) {
		t.Fatalf("rewriting a clipped record changed it:\n%.300s\n%.300s", line, again)
	}
}

// TestManyLongFieldsFitTheRecord: twelve 1 MiB tool results (each within
// MaxFieldBytes) exceed MaxRecordBytes together; they are clipped
// smaller until the record fits.
func TestManyLongFieldsFitTheRecord(t *testing.T) {
	res := strings.Repeat("y", MaxFieldBytes)
	rec := &Record{ID: "a", Outcome: Pass}
	for range 12 {
		rec.Trace.Calls = append(rec.Trace.Calls, Call{Tool: "t", Result: res})
	}
	got, _ := readBack(t, rec)
	if len(got.Trace.Calls) != 12 || len(got.Truncated) != 12 || got.Truncated[11] != (Truncation{Path: "trace.calls[11].result", Bytes: MaxFieldBytes}) {
		t.Fatalf("%d calls, notes %+v", len(got.Trace.Calls), got.Truncated)
	}
}

// TestTooManyCallsAreDropped: thousands of small calls cannot be clipped
// into the record limit; the record keeps its identity, outcome and
// answer and says how many calls and turns it dropped. (At a 64 KiB
// record limit, so the test need not build an 8 MiB record.)
func TestTooManyCallsAreDropped(t *testing.T) {
	t.Parallel()
	const calls = 2000
	rec := &Record{ID: "a", Case: "c", Outcome: Fail, Trace: Trace{Answer: "done", Turns: []Turn{{ToolCalls: calls}, {Content: "done"}}, TextCalls: []matchers.TextCall{{Tool: "t"}}}}
	for i := range calls {
		rec.Trace.Calls = append(rec.Trace.Calls, Call{Tool: "t", Args: map[string]any{"q": strings.Repeat("z", 500)}, Result: fmt.Sprint(i)})
	}
	rec.Trace.Calls[7].Result = strings.Repeat("r", 200<<10) // clipped first, then dropped with its call
	b, err := marshalWithin(rec, 16<<10, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 64<<10 {
		t.Fatalf("record of %d bytes, over the 64 KiB limit", len(b))
	}
	r := NewReader(bytes.NewReader(append(b, '\n')), "runs.jsonl")
	if !r.Scan() {
		t.Fatalf("no record: %v", r.Err())
	}
	got, err := r.Record()
	if err != nil {
		t.Fatal(err)
	}
	ns := notes(got)
	if got.ID != "a" || got.Outcome != Fail || got.Trace.Answer != "done" || len(got.Trace.Calls) != 0 ||
		ns["trace.calls"].Items != calls || ns["trace.turns"].Items != 2 || ns["trace.text_calls"].Items != 1 || len(got.Trace.TextCalls) != 0 || len(ns) != 3 {
		t.Fatalf("stripped record %+v", got)
	}
}

// TestReaderSkipsOverLongLine: a line longer than the reader's limit is a
// *SyntaxError wrapping ErrLineTooLong, discarded without being held (the
// buffer stays near the limit), and the lines around it still read, the
// last one without a newline too.
func TestReaderSkipsOverLongLine(t *testing.T) {
	const limit = 1000
	long := `{"version":1,"id":"x","trace":{"answer":"` + strings.Repeat("a", 200_000) + `"}}`
	in := `{"version":1,"id":"a","outcome":"pass"}` + "\n" + long + "\n" +
		`{"version":1,"id":"b","outcome":"pass"}` + "\n" + long + "\n" +
		`{"version":1,"id":"c","outcome":"fail"}` + strings.Repeat(" ", limit-39) + "\n" + // exactly the limit
		long
	r := NewReader(strings.NewReader(in), "runs.jsonl")
	r.max = limit
	var got []string
	for r.Scan() {
		rec, err := r.Record()
		var se *SyntaxError
		switch {
		case err == nil:
			got = append(got, rec.ID)
		case errors.As(err, &se) && errors.Is(err, ErrLineTooLong):
			got = append(got, fmt.Sprintf("long@%d", se.Line))
		default:
			t.Fatalf("line %d: %v", r.line, err)
		}
		if cap(r.buf) > 2*limit+64<<10 {
			t.Fatalf("reader buffer grew to %d bytes for a limit of %d", cap(r.buf), limit)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if want := "a long@2 b long@4 c long@6"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

// TestReaderDefaultLimit: with the default limit, a line just over
// MaxLineBytes is skipped and the next one reads; the message names both
// sizes.
func TestReaderDefaultLimit(t *testing.T) {
	long := `{"id":"x","trace":{"answer":"` + strings.Repeat("a", MaxLineBytes) + `"}}`
	in := long + "\n" + `{"id":"y","outcome":"pass"}` + "\n"
	r := NewReader(strings.NewReader(in), "runs.jsonl")
	if !r.Scan() {
		t.Fatal(r.Err())
	}
	_, err := r.Record()
	if !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), fmt.Sprintf("runs.jsonl:1: not a run record: line too long: %d bytes, more than the %d a line may have", len(long), MaxLineBytes)) {
		t.Fatalf("err = %v", err)
	}
	if !r.Scan() {
		t.Fatal(r.Err())
	}
	if rec, err := r.Record(); err != nil || rec.ID != "y" {
		t.Fatalf("after the long line: %+v, %v", rec, err)
	}
}

// TestCutInvalidUTF8: a string of continuation bytes (invalid UTF-8) is
// still cut near the limit, not walked back to nothing.
func TestCutInvalidUTF8(t *testing.T) {
	s := strings.Repeat("\x80", 5000)
	got := cut(s, 1000)
	if len(got) > 1000 || len(got) < 990 {
		t.Fatalf("cut to %d bytes", len(got))
	}
	if got := cut("aé", len("a")+1+len(marker(3))); !strings.HasPrefix(got, "a…") {
		t.Fatalf("cut inside a rune: %q", got)
	}
}

// TestBigStructuredResultGivesWayBeforeTheTrace: a record over
// MaxRecordBytes made of many short strings (tool results whose
// structured content is a table of 100 columns × 500 rows) keeps its
// turns and calls: each over-budget structured content becomes a
// TruncatedKey object giving its size, and the text result stays, clipped.
func TestBigStructuredResultGivesWayBeforeTheTrace(t *testing.T) {
	table := func() any {
		rows := make([]any, 500)
		for r := range rows {
			row := map[string]any{}
			for c := range 100 {
				row[fmt.Sprintf("col%02d", c)] = fmt.Sprintf("value of row %03d, column %02d", r, c)
			}
			rows[r] = row
		}
		return map[string]any{"rows": rows}
	}
	rec := &Record{ID: "a", Case: "c", Outcome: Pass, Trace: Trace{Answer: "done", Turns: []Turn{{ToolCalls: 4}, {Content: "done"}}}}
	for range 4 {
		rec.Trace.Calls = append(rec.Trace.Calls, Call{Tool: "query", Args: map[string]any{"sql": "SELECT *"}, Result: strings.Repeat("row text ", 200_000), Structured: table()})
	}
	if b, _ := json.Marshal(rec); len(b) <= MaxRecordBytes {
		t.Fatalf("the record is only %d bytes; the test needs one over MaxRecordBytes", len(b))
	}
	got, _ := readBack(t, rec) // it checks the line's length
	if got.Outcome != Pass || len(got.Trace.Calls) != 4 || len(got.Trace.Turns) != 2 {
		t.Fatalf("trace dropped: outcome %s, %d calls, %d turns, notes %+v", got.Outcome, len(got.Trace.Calls), len(got.Trace.Turns), got.Truncated)
	}
	ns := notes(got)
	for i, k := range got.Trace.Calls {
		m, ok := k.Structured.(map[string]any)
		path := fmt.Sprintf("trace.calls[%d].structured", i)
		if !ok || len(m) != 1 || m[TruncatedKey] == nil || ns[path].Bytes < 1<<20 {
			t.Fatalf("call %d structured %.200v, note %+v", i, k.Structured, ns[path])
		}
		if k.Args["sql"] != "SELECT *" || !strings.HasPrefix(k.Result, "row text row text") || !strings.Contains(k.Result, "truncated by toolward") {
			t.Fatalf("call %d: args %v, result %.40q…", i, k.Args, k.Result)
		}
	}
}
