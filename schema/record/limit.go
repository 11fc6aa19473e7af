package record

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolward/toolward/matchers"
)

// Limits on what one record keeps, so that no model output or tool result
// can make a line of runs.jsonl too long to read back.
const (
	// MaxFieldBytes bounds one string of a record: an answer, a turn's
	// content or thinking, a tool result, a call's raw arguments or one
	// string inside its arguments, an error message, a reason's detail.
	// A longer string keeps its first MaxFieldBytes bytes and a marker
	// with its original length, and the record lists it in Truncated.
	MaxFieldBytes = 1 << 20
	// MaxRecordBytes bounds one encoded record. A record still longer
	// after clipping its fields at MaxFieldBytes is clipped at smaller
	// sizes, its structured values (a tool's structured content, one
	// argument) over a shrinking budget are replaced by an object
	// {TruncatedKey: bytes}, and as a last resort it loses its turns and
	// calls (Truncated says how many).
	MaxRecordBytes = 8 << 20
	// MaxLineBytes is the longest line a Reader reads; a longer one is
	// skipped as a *SyntaxError without being held in memory. It leaves
	// room above MaxRecordBytes for records written by other versions.
	MaxLineBytes = 2 * MaxRecordBytes
)

// minFieldBytes is the smallest field size the shrinking tries before
// dropping the trace's turns and calls.
const minFieldBytes = 1 << 10

// Truncation notes one value a record holds only in part.
type Truncation struct {
	// Path locates the value: trace.answer, trace.turns[2].thinking,
	// trace.calls[0].args.sql, error.message, …
	Path string `json:"path"`
	// Bytes is the original length of a string; Items the original
	// length of a list that was dropped whole.
	Bytes int `json:"bytes,omitempty"`
	Items int `json:"items,omitempty"`
}

// Marshal encodes rec as one JSON line's content (no newline) within
// MaxRecordBytes: the final answer is stored once (the last turn's content
// is omitted when it is the answer; Reader restores it), and over-long
// values are clipped as MaxFieldBytes and MaxRecordBytes describe (JSON
// escaping counts: a field that escapes long shrinks further). rec itself
// is not modified; score before writing, as the engine does, and the
// scorer sees every value whole.
func Marshal(rec *Record) ([]byte, error) {
	return marshalWithin(rec, MaxFieldBytes, MaxRecordBytes)
}

// marshalWithin is Marshal with the limits given (tests use small ones).
func marshalWithin(rec *Record, maxField, maxRecord int) ([]byte, error) {
	// Past the first try, structured values (a tool's structured content,
	// one argument) are also held to a budget: a big table of short
	// strings no string limit shrinks gives way before the trace does.
	for limit, budget := maxField, 0; ; limit, budget = limit/4, limit {
		c := clip(rec, limit, budget)
		b, err := json.Marshal(c)
		if err != nil || len(b) <= maxRecord {
			return b, err
		}
		if limit/4 < minFieldBytes {
			return json.Marshal(strip(c, rec))
		}
	}
}

// marker is what a clipped string ends with, after its first bytes.
func marker(n int) string {
	return "…[truncated by toolward: " + strconv.Itoa(n) + " bytes in all]"
}

// cut returns s shortened to at most n bytes, marker included, on a UTF-8
// boundary. Cutting a cut string at the same n changes nothing.
func cut(s string, n int) string {
	m := marker(len(s))
	i := max(n-len(m), 0)
	for back := 0; i > 0 && back < utf8.UTFMax-1 && !utf8.RuneStart(s[i]); back++ {
		i-- // at most the start of one rune back: invalid UTF-8 cuts anywhere
	}
	return s[:i] + m
}

// clipper shortens the strings of a record, noting each.
type clipper struct {
	limit int
	// budget, when positive, bounds the encoded size of one structured
	// value (see whole); 0 means none.
	budget int
	notes  []Truncation
	path   []any // the current location, for notes
}

// TruncatedKey is the one key of the object that stands for a structured
// value (a tool's structured content, one argument) dropped to keep its
// record within MaxRecordBytes; its value is the dropped value's encoded
// length in bytes.
const TruncatedKey = "truncated_by_toolward"

// whole returns v, or, when its encoding is over the budget, an object
// {TruncatedKey: its length}, noting it at path; true when it replaced v.
func (c *clipper) whole(v any, path ...any) (any, bool) {
	if c.budget <= 0 || v == nil {
		return v, false
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) <= c.budget {
		return v, false
	}
	c.note(Truncation{Path: matchers.PathString(path), Bytes: len(b)})
	return map[string]any{TruncatedKey: len(b)}, true
}

// wholeArgs holds each argument of args to the budget (whole), copying
// args only when one is replaced.
func (c *clipper) wholeArgs(args map[string]any, path ...any) map[string]any {
	if c.budget <= 0 {
		return args
	}
	var out map[string]any
	for _, k := range slices.Sorted(maps.Keys(args)) {
		nv, replaced := c.whole(args[k], append(path[:len(path):len(path)], k)...)
		if !replaced {
			continue
		}
		if out == nil {
			out = maps.Clone(args)
		}
		out[k] = nv
	}
	if out == nil {
		return args
	}
	return out
}

// probeValue clips a probe's result like a tool's structured content.
func (c *clipper) probeValue(v any, path ...any) any {
	c.path = path
	v, _ = c.value(v)
	v, _ = c.whole(v, path...)
	c.path = nil
	return v
}

func (c *clipper) str(s string, at ...any) string {
	if len(s) <= c.limit {
		return s
	}
	c.note(Truncation{Path: matchers.PathString(append(c.path[:len(c.path):len(c.path)], at...)), Bytes: len(s)})
	return cut(s, c.limit)
}

// note adds t unless its path is noted already (a record read back and
// clipped again keeps the original length).
func (c *clipper) note(t Truncation) {
	for _, n := range c.notes {
		if n.Path == t.Path {
			return
		}
	}
	c.notes = append(c.notes, t)
}

// value clips the strings inside a decoded JSON value (arguments,
// structured content), copying only the containers that change.
func (c *clipper) value(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		s := c.str(v)
		return s, len(s) != len(v)
	case map[string]any:
		var out map[string]any
		for k, e := range v {
			c.path = append(c.path, k)
			ne, changed := c.value(e)
			c.path = c.path[:len(c.path)-1]
			if changed && out == nil {
				out = maps.Clone(v)
			}
			if changed {
				out[k] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range v {
			c.path = append(c.path, i)
			ne, changed := c.value(e)
			c.path = c.path[:len(c.path)-1]
			if changed && out == nil {
				out = slices.Clone(v)
			}
			if changed {
				out[i] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

// clip returns a copy of rec whose strings are at most limit bytes (plus
// a marker), with the final answer stored once and Truncated listing
// what was clipped. rec is not modified.
func clip(rec *Record, limit, budget int) *Record {
	out := *rec
	c := &clipper{limit: limit, budget: budget, notes: append([]Truncation(nil), rec.Truncated...)}
	t := &out.Trace
	t.Answer = c.str(t.Answer, "trace", "answer")
	t.Turns = slices.Clone(rec.Trace.Turns)
	if n := len(t.Turns); n > 0 && t.Turns[n-1].ToolCalls == 0 && t.Turns[n-1].Content == rec.Trace.Answer {
		t.Turns[n-1].Content = "" // it is the answer; Reader restores it
	}
	for i := range t.Turns {
		u := &t.Turns[i]
		u.Content = c.str(u.Content, "trace", "turns", i, "content")
		u.Thinking = c.str(u.Thinking, "trace", "turns", i, "thinking")
		u.DoneReason = c.str(u.DoneReason, "trace", "turns", i, "done_reason")
	}
	t.Calls = slices.Clone(rec.Trace.Calls)
	for i := range t.Calls {
		k := &t.Calls[i]
		k.Tool = c.str(k.Tool, "trace", "calls", i, "tool")
		k.RawArgs = c.str(k.RawArgs, "trace", "calls", i, "raw_args")
		k.Result = c.str(k.Result, "trace", "calls", i, "result")
		if k.Args != nil {
			c.path = []any{"trace", "calls", i, "args"}
			a, _ := c.value(k.Args)
			k.Args = c.wholeArgs(a.(map[string]any), "trace", "calls", i, "args")
		}
		if k.Structured != nil {
			c.path = []any{"trace", "calls", i, "structured"}
			k.Structured, _ = c.value(k.Structured)
			k.Structured, _ = c.whole(k.Structured, "trace", "calls", i, "structured")
		}
		c.path = nil
	}
	t.Users = slices.Clone(rec.Trace.Users)
	for i := range t.Users {
		u := &t.Users[i]
		u.Content = c.str(u.Content, "trace", "users", i, "content")
		u.Model = c.str(u.Model, "trace", "users", i, "model")
	}
	t.TextCalls = slices.Clone(rec.Trace.TextCalls)
	for i := range t.TextCalls {
		k := &t.TextCalls[i]
		k.Family = c.str(k.Family, "trace", "text_calls", i, "family")
		k.Tool = c.str(k.Tool, "trace", "text_calls", i, "tool")
		if k.Args != nil {
			c.path = []any{"trace", "text_calls", i, "args"}
			a, _ := c.value(k.Args)
			k.Args = c.wholeArgs(a.(map[string]any), "trace", "text_calls", i, "args")
		}
		c.path = nil
	}
	if rec.State != nil {
		st := *rec.State
		st.Probes = slices.Clone(rec.State.Probes)
		for i := range st.Probes {
			pr := &st.Probes[i]
			pr.Got.Value = c.probeValue(pr.Got.Value, "state", "probes", i, "got", "value")
			if pr.Want != nil {
				w := *pr.Want
				w.Value = c.probeValue(w.Value, "state", "probes", i, "want", "value")
				pr.Want = &w
			}
		}
		out.State = &st
	}
	if rec.Judged != nil {
		out.Judged = slices.Clone(rec.Judged)
		for i := range out.Judged {
			j := &out.Judged[i]
			j.Reason = c.str(j.Reason, "judged", i, "reason")
			j.Votes = slices.Clone(j.Votes)
			for k := range j.Votes {
				j.Votes[k].Reason = c.str(j.Votes[k].Reason, "judged", i, "votes", k, "reason")
			}
		}
	}
	if rec.Error != nil {
		e := *rec.Error
		e.Message = c.str(e.Message, "error", "message")
		out.Error = &e
	}
	out.Reasons = slices.Clone(rec.Reasons)
	for i := range out.Reasons {
		out.Reasons[i].Detail = c.str(out.Reasons[i].Detail, "reasons", i, "detail")
	}
	out.Truncated = c.notes
	return &out
}

// strip is the last resort for a record too long even with its strings
// clipped small (thousands of calls, say): it keeps the run's identity,
// outcome, clipped answer and error, and the first reasons, and drops the
// turns and calls, noting how many there were.
func strip(c *Record, orig *Record) *Record {
	out := *c
	out.Trace = Trace{Answer: c.Trace.Answer, OutOfTurns: c.Trace.OutOfTurns, OutOfUserTurns: c.Trace.OutOfUserTurns}
	out.Truncated = nil
	for _, n := range c.Truncated { // notes inside what is dropped go with it
		if !strings.HasPrefix(n.Path, "trace.") || n.Path == "trace.answer" {
			out.Truncated = append(out.Truncated, n)
		}
	}
	drop := func(path string, n int) {
		if n > 0 {
			out.Truncated = append(out.Truncated, Truncation{Path: path, Items: n})
		}
	}
	drop("trace.offered", len(orig.Trace.Offered))
	drop("trace.turns", len(orig.Trace.Turns))
	drop("trace.calls", len(orig.Trace.Calls))
	drop("trace.text_calls", len(orig.Trace.TextCalls))
	drop("trace.users", len(orig.Trace.Users))
	const keepReasons = 20
	if len(out.Reasons) > keepReasons {
		drop("reasons", len(out.Reasons))
		out.Reasons = out.Reasons[:keepReasons]
	}
	if len(out.Truncated) > 100 {
		n := len(out.Truncated)
		out.Truncated = append(out.Truncated[:99:99], Truncation{Path: "truncated", Items: n})
	}
	return &out
}

// restoreAnswer undoes the one deduplication Marshal does: a final turn
// without tool calls whose content was omitted holds the answer.
func (r *Record) restoreAnswer() {
	t := &r.Trace
	if n := len(t.Turns); n > 0 && t.Answer != "" && t.Turns[n-1].ToolCalls == 0 && t.Turns[n-1].Content == "" {
		t.Turns[n-1].Content = t.Answer
	}
}
