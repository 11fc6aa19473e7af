package record

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A call's arguments keep the model's number text through runs.jsonl:
// written as json.Number, read back as json.Number, so a re-score sees
// 10.0 where the live run did.
func TestRecordKeepsNumberText(t *testing.T) {
	args := map[string]any{"n": json.Number("10.0"), "l": []any{json.Number("1e1"), json.Number("-0")}, "o": map[string]any{"big": json.Number("9007199254740993")}}
	rec := &Record{ID: "a", Trace: Trace{Calls: []Call{{Tool: "add", Args: args, Structured: map[string]any{"r": json.Number("2.50")}}}}}
	var buf bytes.Buffer
	if err := NewWriter(&buf).Write(rec); err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	for _, want := range []string{`"args":{"l":[1e1,-0],"n":10.0,"o":{"big":9007199254740993}}`, `"structured":{"r":2.50}`} {
		if !strings.Contains(line, want) {
			t.Errorf("line lacks %s: %s", want, line)
		}
	}
	r := NewReader(&buf, "runs.jsonl")
	if !r.Scan() {
		t.Fatal("no record")
	}
	got, err := r.Record()
	if err != nil {
		t.Fatal(err)
	}
	a := got.Trace.Calls[0].Args
	if a["n"] != json.Number("10.0") || a["l"].([]any)[0] != json.Number("1e1") || a["o"].(map[string]any)["big"] != json.Number("9007199254740993") {
		t.Errorf("read back %#v", a)
	}
	if s := got.Trace.Calls[0].Structured.(map[string]any); s["r"] != json.Number("2.50") {
		t.Errorf("structured %#v", s)
	}
}

// A line that is not exactly one record is a *SyntaxError with the
// message json.Unmarshal gives.
func TestReaderRejectsTrailingData(t *testing.T) {
	for line, want := range map[string]string{
		`{"id":"a"} {"id":"b"}`: "invalid character '{' after top-level value",
		`{"id":"a"} x`:          "invalid character 'x' after top-level value",
		`{"id":"a"`:             "unexpected end of JSON input",
		`{"id":"a","trace":{"calls":[{"args":[1]}]}}`: "json: cannot unmarshal array into Go struct field Call.trace.calls.args of type map[string]interface {}",
	} {
		r := NewReader(strings.NewReader(line+"\n"), "runs.jsonl")
		if !r.Scan() {
			t.Fatalf("%s: no line", line)
		}
		_, err := r.Record()
		if err == nil || err.Error() != "runs.jsonl:1: not a run record: "+want {
			t.Errorf("%s: error %v, want %s", line, err, want)
		}
	}
}
