package record

import (
	"strings"
	"testing"
)

// peekLines are lines whose run id PeekID must find as the decoder does,
// and lines that are not records.
var peekLines = []string{
	`{"version":2,"id":"0123456789abcdef","case":"c","outcome":"pass","trace":{"turns":[{"content":"{\"id\":\"no\"}"}]}}`,
	`{"case":"c","trace":{"calls":[{"tool":"t","args":{"id":"nested"}}]},"id":"outer"}`,
	` { "ID" : "upper" , "outcome" : "fail" } `,
	`{"id":"first","Id":"last"}`,
	`{"id":"kept","id":null}`,
	`{"id":"esc\"aped\u0041"}`,
	`{"\u0069d":"escaped key"}`,
	"{\"id\":\"bad utf8 \xff\"}",
	`{"id":5}`,
	`{"id":"truncated","trace":{"turns":[`,
	`{"idx":"not the key"}`,
	`["id","array"]`,
	`{"id":"x"} trailing`,
	`{"id":"","case":"c"}`,
}

func TestPeekIDAgreesWithDecode(t *testing.T) {
	t.Parallel()
	for _, line := range peekLines {
		r := NewReader(strings.NewReader(line+"\n"), "runs.jsonl")
		if !r.Scan() {
			t.Fatalf("%s: no line", line)
		}
		peeked := r.ID()
		rec, err := r.Record()
		if err != nil {
			continue // not a record: any id will do
		}
		if peeked != rec.ID {
			t.Errorf("%s: PeekID %q, decoded id %q", line, peeked, rec.ID)
		}
	}
}

// TestSummaryViewAgrees: a line is a record in the summary view exactly
// when it is one whole, and the view is the record without the trace's
// texts.
func TestSummaryViewAgrees(t *testing.T) {
	t.Parallel()
	lines := append([]string{
		`{"id":"a","outcome":"fail","trace":{"turns":[{"content":5}]}}`,
		`{"id":"a","outcome":"fail","trace":{"calls":[{"tool":"t","args":[1]}]}}`,
		`{"id":"a","outcome":"fail","trace":{"calls":[{"tool":"t","result":{}}]}}`,
		`{"id":"a","outcome":"fail","trace":{"calls":[{"tool":"t","raw_args":null,"structured":[1,{"x":2}]}]}}`,
		`{"id":"a","outcome":"pass","trace":{"turns":[{"content":"hi","thinking":"hm","tool_calls":1,"host":"h","latency_ms":3},{"tool_calls":0}],"calls":[{"turn":0,"tool":"t","args":{"n":10.0},"result":"r","confirm":"denied","latency_ms":2}],"answer":"done","text_calls":[{"tool":"x","args":{"n":1.0}}]}}`,
	}, peekLines...)
	for _, line := range lines {
		whole := NewReader(strings.NewReader(line), "runs.jsonl")
		sum := NewReader(strings.NewReader(line), "runs.jsonl")
		whole.Scan()
		sum.Scan()
		w, werr := whole.Record()
		s, serr := sum.Summary()
		if (werr == nil) != (serr == nil) {
			t.Errorf("%s: whole error %v, summary error %v", line, werr, serr)
			continue
		}
		if werr != nil {
			continue
		}
		for i := range w.Trace.Turns {
			w.Trace.Turns[i].Content, w.Trace.Turns[i].Thinking = "", ""
		}
		for i := range w.Trace.Calls {
			c := &w.Trace.Calls[i]
			c.Args, c.RawArgs, c.Result, c.Structured = nil, "", "", nil
		}
		wb, _ := Marshal(w)
		sb, _ := Marshal(s)
		if string(wb) != string(sb) {
			t.Errorf("summary view of %s:\n got %s\nwant %s", line, sb, wb)
		}
	}
}
