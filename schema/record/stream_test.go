package record

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolward/toolward/matchers"
)

func TestWriteReadRoundTrip(t *testing.T) {
	in := Record{
		ID: "0123456789abcdef", Case: "sql-raise", Tags: []string{"sql"},
		Cell:    Cell{Model: "qwen3:0.6b", Seed: 2, Temperature: 0.7, Tools: "n8", ToolCount: 8, Confirm: "deny", Descriptions: "terse"},
		Outcome: Fail, Reasons: []matchers.Reason{{Code: matchers.ReasonMaxIterations, Detail: "no answer"}},
		Attempts: 2,
		Trace: Trace{
			Offered: []string{"calculate"},
			Turns:   []Turn{{ToolCalls: 1, Tokens: Tokens{In: 12, Out: 3}, Latency: 1.5}},
			Calls:   []Call{{Tool: "calculate", Args: map[string]any{"expression": "2*3"}, Confirm: "denied", Result: "declined", IsError: true}},
		},
		Tokens:   Tokens{In: 12, Out: 3},
		Started:  time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		Duration: FromDuration(1500 * time.Microsecond),
	}
	var buf bytes.Buffer
	if err := NewWriter(&buf).Write(&in); err != nil {
		t.Fatal(err)
	}
	if in.Version != Version {
		t.Errorf("Write did not stamp the version: %d", in.Version)
	}
	if n := strings.Count(buf.String(), "\n"); n != 1 || !strings.HasSuffix(buf.String(), "\n") {
		t.Fatalf("want one line, got %q", buf.String())
	}
	r := NewReader(&buf, "runs.jsonl")
	if !r.Scan() {
		t.Fatalf("no record: %v", r.Err())
	}
	got, err := r.Record()
	if err != nil {
		t.Fatal(err)
	}
	c := got.Trace.Calls[0]
	if got.ID != in.ID || got.Cell != in.Cell || got.Outcome != Fail || got.Reasons[0] != in.Reasons[0] ||
		c.Args["expression"] != "2*3" || !c.IsError || got.Trace.Scored().Calls[0].Denied != true ||
		!got.Started.Equal(in.Started) || got.Duration.Duration() != 1500*time.Microsecond {
		t.Fatalf("round trip changed the record:\n got %+v\nwant %+v", got, in)
	}
	if r.Scan() {
		t.Fatal("a second record from one line")
	}
}

// TestReaderSkipsBadLines: blank lines are skipped silently; a bad line is
// a *SyntaxError naming its line, and reading goes on after it.
func TestReaderSkipsBadLines(t *testing.T) {
	in := strings.Join([]string{
		`{"version":1,"id":"a","outcome":"pass"}`,
		``,
		`   `,
		`{"version":1,"outcome":"pass"}`,
		`{"version":99,"id":"c","outcome":"pass"}`,
		`{"version":1,"id":"d","outcome":"fail"}`,
		`{"version":1,"id":"e","outc`,
	}, "\n")
	r := NewReader(strings.NewReader(in), "runs.jsonl")
	type line struct {
		id   string
		line int
		msg  string
	}
	var got []line
	for r.Scan() {
		rec, err := r.Record()
		var se *SyntaxError
		switch {
		case err == nil:
			got = append(got, line{id: rec.ID})
		case errors.As(err, &se):
			got = append(got, line{line: se.Line, msg: err.Error()})
		default:
			t.Fatalf("error of type %T: %v", err, err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := []line{
		{id: "a"},
		{line: 4, msg: "runs.jsonl:4: not a run record: no run id"},
		{line: 5, msg: "runs.jsonl:5: not a run record: format version 99 is newer than this toolward reads (2); upgrade toolward"},
		{id: "d"},
		{line: 7, msg: "runs.jsonl:7: not a run record: unexpected end of JSON input"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestWriterConcurrentLinesStayWhole: concurrent writers never interleave
// within a line.
func TestWriterConcurrentLinesStayWhole(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				rec := &Record{ID: strings.Repeat(string(rune('a'+i)), 16), Attempts: j, Trace: Trace{Answer: strings.Repeat("x", 4096)}}
				if err := w.Write(rec); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	r := NewReader(&buf, "runs.jsonl")
	n := 0
	for r.Scan() {
		if _, err := r.Record(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 400 {
		t.Fatalf("%d records, want 400", n)
	}
}
