package record

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/cell"
)

// The fast reader decodes a runs.jsonl line into a Record (whole, or its
// summary view) in one pass over the bytes, with no reflection: the
// fields of Record, Trace, Turn, Call, Cell, Tokens and Reason are read by
// hand, the rarer ones (error, throttled, state, text calls, users,
// truncated) with encoding/json from their own bytes, and the values the
// summary view leaves out are only checked, never built.
//
// It gives the result encoding/json gives, or gives up: whatever it is
// not sure of (a syntax error, a value of the wrong type, a number out of
// range, a key in another case or with escapes, a key twice, nesting
// deeper than encoding/json allows) sends the line to encoding/json,
// whose record or error is then the answer. So a line the fast reader
// takes is one encoding/json takes, with the same record; tests hold it
// to that on every prefix and many mutations of real records
// (fast_test.go), and on a record with every field set, so that a field
// added to Record and not here fails a test.

// fastDecode decodes line into rec, which must be zero; false when it
// gave up (rec is then to be reset and the line decoded by encoding/json).
func fastDecode(line []byte, rec *Record, summary bool) bool {
	d := fastReader{b: line, summary: summary}
	d.record(rec)
	d.space()
	return !d.bad && d.i == len(d.b)
}

// fastReader reads JSON from b at i. Once bad is set every method returns
// zero values without reading, so the decoders need not check it after
// each step.
type fastReader struct {
	b       []byte
	i       int
	depth   int
	bad     bool
	summary bool
}

// maxDepth is encoding/json's limit on nesting; deeper lines go to it.
const maxDepth = 10000

func (d *fastReader) fail() {
	d.bad = true
	d.i = len(d.b)
}

func (d *fastReader) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the first byte of the next value, 0 at the end.
func (d *fastReader) peek() byte {
	d.space()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// null consumes a null and reports whether there was one.
func (d *fastReader) null() bool {
	if d.peek() == 'n' {
		d.literal("null")
		return !d.bad
	}
	return false
}

func (d *fastReader) literal(lit string) {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		d.fail()
		return
	}
	d.i += len(lit)
}

// open consumes the opening byte of an object or array; false for a null
// (consumed) or after a failure.
func (d *fastReader) open(c byte) bool {
	switch d.peek() {
	case c:
		d.i++
		if d.depth++; d.depth > maxDepth {
			d.fail()
			return false
		}
		return true
	case 'n':
		d.null()
	default:
		d.fail()
	}
	return false
}

// more advances past a comma between elements of an open array or object
// and reports whether another element follows; at the closing byte it
// consumes it and returns false.
func (d *fastReader) more(close byte, first bool) bool {
	c := d.peek()
	if c == close {
		d.i++
		d.depth--
		return false
	}
	if !first {
		if c != ',' {
			d.fail()
			return false
		}
		d.i++
	} else if c == 0 {
		d.fail()
	}
	return !d.bad
}

// key reads the next key of an open object and its colon; nil at the end
// of the object. A key with escapes or other than ASCII gives up, since
// encoding/json would unquote and fold it.
func (d *fastReader) key(first bool) []byte {
	if !d.more('}', first) {
		return nil
	}
	if d.peek() != '"' {
		d.fail()
		return nil
	}
	start := d.i + 1
	for j := start; j < len(d.b); j++ {
		c := d.b[j]
		if c == '"' {
			d.i = j + 1
			if d.peek() != ':' {
				d.fail()
				return nil
			}
			d.i++
			return d.b[start:j]
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	d.fail()
	return nil
}

// fields reads an object into a struct whose JSON keys are known (null
// leaves it as it is). field reads the value of each key it knows and
// returns that field's number (below 32, one for each field); for a key
// it does not know it reads nothing and returns -1, and the value is
// skipped as unknown says. A key twice gives up.
func (d *fastReader) fields(known []string, field func(k []byte) int) {
	if !d.open('{') {
		return
	}
	var seen uint32
	for first := true; ; first = false {
		k := d.key(first)
		if k == nil {
			return
		}
		n := field(k)
		if n < 0 {
			d.unknown(k, known)
			continue
		}
		if seen&(1<<n) != 0 {
			d.fail()
		}
		seen |= 1 << n
	}
}

// unknown skips the value of a key that names no field of known (the
// struct's keys), as encoding/json does; a key that names one in another
// case gives up.
func (d *fastReader) unknown(k []byte, known []string) {
	for _, f := range known {
		if strings.EqualFold(string(k), f) {
			d.fail()
			return
		}
	}
	d.skip()
}

// str reads a string (null leaves it "").
func (d *fastReader) str() string {
	switch d.peek() {
	case '"':
	case 'n':
		d.null()
		return ""
	default:
		d.fail()
		return ""
	}
	start := d.i
	plain := d.scanString()
	if d.bad {
		return ""
	}
	if plain {
		return string(d.b[start+1 : d.i-1])
	}
	return unquote(d.b[start+1 : d.i-1])
}

// skipString checks a string or null and skips it.
func (d *fastReader) skipString() {
	if d.peek() == '"' {
		d.scanString()
	} else if !d.null() {
		d.fail()
	}
}

// scanString checks the string at d.i and moves past it. plain says it
// needs no unquoting: no escapes, and valid UTF-8.
func (d *fastReader) scanString() (plain bool) {
	start := d.i + 1
	ascii, escaped := true, false
	for j := start; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return !escaped && (ascii || utf8.Valid(d.b[start:j]))
		case c == '\\':
			escaped = true
			j++
			if j >= len(d.b) {
				d.fail()
				return false
			}
			switch d.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(d.b) || !isHex(d.b[j+1]) || !isHex(d.b[j+2]) || !isHex(d.b[j+3]) || !isHex(d.b[j+4]) {
					d.fail()
					return false
				}
				j += 4
			default:
				d.fail()
				return false
			}
		case c < 0x20:
			d.fail()
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	d.fail()
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// unquote decodes the checked body of a string as encoding/json does:
// escapes resolved, a lone surrogate or invalid UTF-8 replaced by U+FFFD.
func unquote(s []byte) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			switch s[i+1] {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(s[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, hex4(s[i+2:])); dec != utf8.RuneError {
							out = utf8.AppendRune(out, dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default: // " \ /
				out = append(out, s[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, s[i:i+n]...)
			}
			i += n
		}
	}
	return string(out)
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// number checks the number at d.i and returns its text; integer says it
// has no fraction or exponent.
func (d *fastReader) number() (lit []byte, integer bool) {
	d.space()
	b, i := d.b, d.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		d.fail()
		return nil, false
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		integer = false
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			d.fail()
			return nil, false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			d.fail()
			return nil, false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	d.i = i
	return b[start:i], integer
}

// int reads an integer (null leaves it 0); a fraction, an exponent or a
// value out of range gives up, as encoding/json rejects them.
func (d *fastReader) int() int {
	if d.null() {
		return 0
	}
	lit, integer := d.number()
	if d.bad || !integer {
		d.fail()
		return 0
	}
	if len(lit) <= 18 {
		n, neg := 0, lit[0] == '-'
		if neg {
			lit = lit[1:]
		}
		for _, c := range lit {
			n = n*10 + int(c-'0')
		}
		if neg {
			n = -n
		}
		return n
	}
	n, err := strconv.ParseInt(string(lit), 10, 64)
	if err != nil {
		d.fail()
	}
	return int(n)
}

// float reads a number (null leaves it 0).
func (d *fastReader) float() float64 {
	if d.null() {
		return 0
	}
	lit, _ := d.number()
	if d.bad {
		return 0
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		d.fail()
	}
	return f
}

// bool reads true or false (null leaves it false).
func (d *fastReader) bool() bool {
	switch d.peek() {
	case 't':
		d.literal("true")
		return !d.bad
	case 'f':
		d.literal("false")
	default:
		if !d.null() {
			d.fail()
		}
	}
	return false
}

// skip checks the next value and moves past it.
func (d *fastReader) skip() {
	switch d.peek() {
	case '"':
		d.scanString()
	case '{':
		d.open('{')
		for first := true; d.key(first) != nil; first = false {
			d.skip()
		}
	case '[':
		d.open('[')
		for first := true; d.more(']', first); first = false {
			d.skip()
		}
	case 't':
		d.literal("true")
	case 'f':
		d.literal("false")
	case 'n':
		d.literal("null")
	default:
		d.number()
	}
}

// raw checks the next value and returns its bytes.
func (d *fastReader) raw() []byte {
	d.space()
	start := d.i
	d.skip()
	return d.b[start:d.i]
}

// other decodes the next value into v with encoding/json (numbers in
// untyped values kept as json.Number), for the fields read rarely.
func (d *fastReader) other(v any) {
	b := d.raw()
	if d.bad || unmarshalNumbers(b, v) != nil {
		d.fail()
	}
}

// value reads an untyped value as encoding/json does with UseNumber.
func (d *fastReader) value() any {
	switch d.peek() {
	case '"':
		return d.str()
	case '{':
		return d.object()
	case '[':
		d.open('[')
		out := []any{}
		for first := true; d.more(']', first); first = false {
			out = append(out, d.value())
		}
		return out
	case 't', 'f':
		return d.bool()
	case 'n':
		d.null()
		return nil
	}
	lit, _ := d.number()
	return json.Number(lit)
}

// object reads an object into a map of untyped values (null: nil).
func (d *fastReader) object() map[string]any {
	if !d.open('{') {
		return nil
	}
	m := map[string]any{}
	for first := true; d.more('}', first); first = false {
		if d.peek() != '"' {
			d.fail()
			return nil
		}
		k := d.str()
		if d.peek() != ':' {
			d.fail()
			return nil
		}
		d.i++
		m[k] = d.value()
	}
	return m
}

// strings reads an array of strings (null: nil).
func (d *fastReader) strings() []string {
	if !d.open('[') {
		return nil
	}
	out := []string{}
	for first := true; d.more(']', first); first = false {
		out = append(out, d.str())
	}
	return out
}

// list reads an array whose elements elem decodes (null: nil).
func list[T any](d *fastReader, elem func(*T)) []T {
	if !d.open('[') {
		return nil
	}
	out := []T{}
	for first := true; d.more(']', first); first = false {
		var v T
		elem(&v)
		out = append(out, v)
	}
	return out
}

// jsonKeys lists the JSON keys of struct type T's fields.
func jsonKeys[T any]() []string {
	t := reflect.TypeFor[T]()
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

var (
	recordKeys = jsonKeys[Record]()
	traceKeys  = jsonKeys[Trace]()
	turnKeys   = jsonKeys[Turn]()
	callKeys   = jsonKeys[Call]()
	cellKeys   = jsonKeys[Cell]()
	tokensKeys = jsonKeys[Tokens]()
	reasonKeys = jsonKeys[matchers.Reason]()
)

func (d *fastReader) record(r *Record) {
	if d.peek() != '{' {
		d.fail() // null decodes to no record; encoding/json says so
		return
	}
	d.fields(recordKeys, func(k []byte) int {
		switch string(k) {
		case "version":
			r.Version = d.int()
			return 0
		case "id":
			r.ID = d.str()
			return 1
		case "case":
			r.Case = d.str()
			return 2
		case "tags":
			r.Tags = d.strings()
			return 3
		case "cell":
			d.cell(&r.Cell)
			return 4
		case "outcome":
			r.Outcome = Outcome(d.str())
			return 5
		case "reasons":
			r.Reasons = list(d, d.reason)
			return 6
		case "error":
			d.other(&r.Error)
			return 7
		case "rules":
			r.Rules = d.str()
			return 8
		case "attempts":
			r.Attempts = d.int()
			return 9
		case "trace":
			d.trace(&r.Trace)
			return 10
		case "tokens":
			d.tokens(&r.Tokens)
			return 11
		case "throttled":
			d.other(&r.Throttled)
			return 12
		case "state":
			d.other(&r.State)
			return 13
		case "started":
			if b := d.raw(); !d.bad && r.Started.UnmarshalJSON(b) != nil {
				d.fail()
			}
			return 14
		case "duration_ms":
			r.Duration = Millis(d.float())
			return 15
		case "truncated":
			d.other(&r.Truncated)
			return 16
		}
		return -1
	})
}

func (d *fastReader) cell(c *Cell) {
	d.fields(cellKeys, func(k []byte) int {
		switch string(k) {
		case "model":
			c.Model = d.str()
			return 0
		case "seed":
			c.Seed = d.int()
			return 1
		case "temperature":
			c.Temperature = d.float()
			return 2
		case "tools":
			c.Tools = d.str()
			return 3
		case "tool_count":
			c.ToolCount = d.int()
			return 4
		case "confirm":
			c.Confirm = cell.ConfirmMode(d.str())
			return 5
		case "descriptions":
			c.Descriptions = d.str()
			return 6
		case "options":
			c.Options = d.str()
			return 7
		}
		return -1
	})
}

func (d *fastReader) reason(r *matchers.Reason) {
	d.fields(reasonKeys, func(k []byte) int {
		switch string(k) {
		case "code":
			r.Code = d.str()
			return 0
		case "detail":
			r.Detail = d.str()
			return 1
		}
		return -1
	})
}

func (d *fastReader) tokens(t *Tokens) {
	d.fields(tokensKeys, func(k []byte) int {
		switch string(k) {
		case "in":
			t.In = d.int()
			return 0
		case "out":
			t.Out = d.int()
			return 1
		case "cached":
			t.Cached = d.int()
			return 2
		}
		return -1
	})
}

func (d *fastReader) trace(t *Trace) {
	d.fields(traceKeys, func(k []byte) int {
		switch string(k) {
		case "offered":
			t.Offered = d.strings()
			return 0
		case "turns":
			t.Turns = list(d, d.turn)
			return 1
		case "calls":
			t.Calls = list(d, d.call)
			return 2
		case "answer":
			t.Answer = d.str()
			return 3
		case "text_calls":
			d.other(&t.TextCalls)
			return 4
		case "out_of_turns":
			t.OutOfTurns = d.bool()
			return 5
		case "users":
			d.other(&t.Users)
			return 6
		case "out_of_user_turns":
			t.OutOfUserTurns = d.bool()
			return 7
		}
		return -1
	})
}

// text reads a text the summary view leaves out: checked and skipped
// there, read whole otherwise.
func (d *fastReader) text() string {
	if d.summary {
		d.skipString()
		return ""
	}
	return d.str()
}

func (d *fastReader) turn(t *Turn) {
	d.fields(turnKeys, func(k []byte) int {
		switch string(k) {
		case "content":
			t.Content = d.text()
			return 0
		case "thinking":
			t.Thinking = d.text()
			return 1
		case "tool_calls":
			t.ToolCalls = d.int()
			return 2
		case "tokens":
			d.tokens(&t.Tokens)
			return 3
		case "latency_ms":
			t.Latency = Millis(d.float())
			return 4
		case "done_reason":
			t.DoneReason = d.str()
			return 5
		case "host":
			t.Host = d.str()
			return 6
		}
		return -1
	})
}

func (d *fastReader) call(c *Call) {
	d.fields(callKeys, func(k []byte) int {
		switch string(k) {
		case "turn":
			c.Turn = d.int()
			return 0
		case "tool":
			c.Tool = d.str()
			return 1
		case "args":
			if !d.summary {
				c.Args = d.object()
			} else if b := d.peek(); b == '{' || b == 'n' {
				d.skip()
			} else {
				d.fail()
			}
			return 2
		case "raw_args":
			c.RawArgs = d.text()
			return 3
		case "malformed":
			c.Malformed = d.bool()
			return 4
		case "not_offered":
			c.NotOffered = d.bool()
			return 5
		case "not_executed":
			c.NotExecuted = d.str()
			return 6
		case "confirm":
			c.Confirm = d.str()
			return 7
		case "elicitations":
			c.Elicitations = d.strings()
			return 8
		case "result":
			c.Result = d.text()
			return 9
		case "structured":
			if d.summary {
				d.skip()
			} else {
				c.Structured = d.value()
			}
			return 10
		case "is_error":
			c.IsError = d.bool()
			return 11
		case "latency_ms":
			c.Latency = Millis(d.float())
			return 12
		}
		return -1
	})
}
