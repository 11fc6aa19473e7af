package record

import (
	"encoding/json"
	"fmt"
)

// The summary view of a record is the whole record without the texts a
// trace carries: each turn's content and thinking, and each call's
// arguments and result (Args, RawArgs, Result, Structured). Those are
// most of a record's bytes, and what reports, diffs and merges count
// never reads them; a report's drill-down decodes the few runs it shows
// whole. The final answer, the text calls and everything else are kept.
//
// A line is read by the fast reader (fast.go) in either view; a line it
// gives up on is decoded by encoding/json into the summary types below,
// which embed the record's own, shadowing only the fields left out (the
// shallower field wins in encoding/json).
type (
	summaryRecord struct {
		Record
		Trace summaryTrace `json:"trace"`
	}
	summaryTrace struct {
		Trace
		Turns []summaryTurn `json:"turns"`
		Calls []summaryCall `json:"calls"`
	}
	summaryTurn struct {
		Turn
		Content  skipString `json:"content"`
		Thinking skipString `json:"thinking"`
	}
	summaryCall struct {
		Call
		Args       skipObject `json:"args"`
		RawArgs    skipString `json:"raw_args"`
		Result     skipString `json:"result"`
		Structured skipAny    `json:"structured"`
	}
)

// skipString, skipObject and skipAny leave a value undecoded, accepting
// what the field they shadow accepts (a string, an object, anything; or
// null), so that a line is a record in the summary view exactly when it
// is one whole.
type (
	skipString struct{}
	skipObject struct{}
	skipAny    struct{}
)

func (*skipString) UnmarshalJSON(b []byte) error { return want(b, '"', "string") }
func (*skipObject) UnmarshalJSON(b []byte) error { return want(b, '{', "object") }
func (*skipAny) UnmarshalJSON([]byte) error      { return nil }

func want(b []byte, first byte, what string) error {
	if len(b) > 0 && (b[0] == first || b[0] == 'n') { // 'n': null
		return nil
	}
	return fmt.Errorf("json: cannot unmarshal %.20s into a %s", b, what)
}

// decodeSummary decodes the summary view of one runs.jsonl line into rec
// with encoding/json, with the numbers of untyped values as json.Number as
// for a whole record. It does not check the id or version (Reader.Summary
// does).
func decodeSummary(b []byte, rec *Record) error {
	// json.Unmarshal costs less than the json.Decoder numbers need; a
	// record whose summary view holds untyped values (text calls' and
	// probes' arguments and values) is decoded again keeping numbers.
	var s summaryRecord
	if err := json.Unmarshal(b, &s); err != nil {
		return unmarshalNumbers(b, &s) // its error
	}
	if len(s.Trace.TextCalls) > 0 || s.State != nil {
		s = summaryRecord{}
		if err := unmarshalNumbers(b, &s); err != nil {
			return err
		}
	}
	*rec = s.Record
	rec.Trace = s.Trace.Trace
	if s.Trace.Turns != nil {
		rec.Trace.Turns = make([]Turn, len(s.Trace.Turns))
		for i := range s.Trace.Turns {
			rec.Trace.Turns[i] = s.Trace.Turns[i].Turn
		}
	}
	if s.Trace.Calls != nil {
		rec.Trace.Calls = make([]Call, len(s.Trace.Calls))
		for i := range s.Trace.Calls {
			rec.Trace.Calls[i] = s.Trace.Calls[i].Call
		}
	}
	return nil
}
