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
