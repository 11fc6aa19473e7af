package record

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/matchers"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldenRecord has every field of the format set once.
func goldenRecord() *Record {
	return &Record{
		ID: "3a78b6bb3e288015", Case: "sql-engineering-raise", Tags: []string{"sql"},
		Cell:    Cell{Model: "qwen3:0.6b", Seed: 1, Temperature: 0.7, Tools: "n8", ToolCount: 8, Confirm: "deny", Descriptions: "terse"},
		Outcome: Fail,
		Reasons: []matchers.Reason{{Code: matchers.ReasonMaxIterations, Detail: "no final answer after 2 model turns"}},
		Rules:   "0123456789abcdef", Attempts: 1,
		Trace: Trace{
			Offered: []string{"query_database", "calculate"},
			Turns: []Turn{
				{Content: "Let me look.", Thinking: "hm", ToolCalls: 1, Tokens: Tokens{In: 10, Out: 5}, Latency: 12.5, DoneReason: "stop"},
				{ToolCalls: 1, Tokens: Tokens{In: 20, Out: 6}, Latency: 8},
			},
			Calls: []Call{
				{Turn: 0, Tool: "query_database", Args: map[string]any{"sql": "SELECT 1"}, Result: "1", Structured: map[string]any{"rows": json.Number("1")}, Latency: 3},
				{Turn: 1, Tool: "update_salary", Args: map[string]any{"id": json.Number("7")}, Confirm: "denied", Elicitations: []string{"decline"}, Result: "the user declined", IsError: true, Latency: 1},
				{Turn: 1, Tool: "calculate", RawArgs: "not json", Malformed: true, Result: "bad arguments", IsError: true},
				{Turn: 1, Tool: "nope", NotOffered: true, Result: "unknown tool", IsError: true},
			},
			TextCalls:  []matchers.TextCall{{Turn: 0, Family: "hermes", Tool: "calculate", Args: map[string]any{"expression": "1+1"}}},
			OutOfTurns: true,
		},
		Tokens:  Tokens{In: 30, Out: 11},
		Started: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Duration: 123.5,
	}
}

// TestRecordGolden pins the record format: a record line as Writer
// writes it. A diff here is a format change: bump Version, keep a reader
// for the old version (upgrade) and regenerate with -update.
func TestRecordGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := NewWriter(&buf).Write(goldenRecord()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "record-v2.golden")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("record line changed (format version %d):\ngot  %s\nwant %s", Version, buf.Bytes(), want)
	}
	// and it reads back as written.
	r := NewReader(bytes.NewReader(want), "golden")
	if !r.Scan() {
		t.Fatal("no line")
	}
	got, err := r.Record()
	if err != nil {
		t.Fatal(err)
	}
	w := goldenRecord()
	w.Version = Version
	if !reflect.DeepEqual(got, w) {
		t.Errorf("read back:\n%+v\nwant\n%+v", got, w)
	}
}

// TestReadVersion1: records written by format version 1 still read; a
// run that ran out of turns, which version 1 did not store, is known from
// its max_iterations reason.
func TestReadVersion1(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "record-v1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(bytes.NewReader(b), "v1")
	var got []string
	for r.Scan() {
		rec, err := r.Record()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rec.Case+":"+string(rec.Outcome)+":"+map[bool]string{true: "out", false: "in"}[rec.Trace.OutOfTurns]+":"+rec.Rules+":"+rec.Trace.Answer)
	}
	want := "looped:fail:out::|wrong:fail:in::It is 6.|good:pass:in::It is 5."
	if s := strings.Join(got, "|"); s != want {
		t.Errorf("read %s\nwant %s", s, want)
	}
}
