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

// once marks field bit of an object as seen; a key twice gives up.
func (d *fastReader) once(seen *uint32, bit uint) {
	if *seen&(1<<bit) != 0 {
		d.fail()
	}
	*seen |= 1 << bit
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
	if !d.open('{') {
		d.fail() // null decodes to no record; encoding/json says so
		return
	}
	var seen uint32
	for first := true; ; first = false {
		k := d.key(first)
		if k == nil {
			return
		}
		switch string(k) {
		case "version":
			d.once(&seen, 0)
			r.Version = d.int()
		case "id":
			d.once(&seen, 1)
			r.ID = d.str()
		case "case":
			d.once(&seen, 2)
			r.Case = d.str()
		case "tags":
			d.once(&seen, 3)
			r.Tags = d.strings()
		case "cell":
			d.once(&seen, 4)
			d.cell(&r.Cell)
		case "outcome":
			d.once(&seen, 5)
			r.Outcome = Outcome(d.str())
		case "reasons":
			d.once(&seen, 6)
			r.Reasons = list(d, d.reason)
		case "error":
			d.once(&seen, 7)
			d.other(&r.Error)
		case "rules":
			d.once(&seen, 8)
			r.Rules = d.str()
		case "attempts":
			d.once(&seen, 9)
			r.Attempts = d.int()
		case "trace":
			d.once(&seen, 10)
			d.trace(&r.Trace)
		case "tokens":
			d.once(&seen, 11)
			d.tokens(&r.Tokens)
		case "throttled":
			d.once(&seen, 12)
			d.other(&r.Throttled)
		case "state":
			d.once(&seen, 13)
			d.other(&r.State)
		case "started":
			d.once(&seen, 14)
			if b := d.raw(); !d.bad && r.Started.UnmarshalJSON(b) != nil {
				d.fail()
			}
		case "duration_ms":
			d.once(&seen, 15)
			r.Duration = Millis(d.float())
		case "truncated":
			d.once(&seen, 16)
			d.other(&r.Truncated)
		default:
			d.unknown(k, recordKeys)
		}
	}
}

func (d *fastReader) cell(c *Cell) {
	if !d.open('{') {
		return
	}
	var seen uint32
	for first := true; ; first = false {
		k := d.key(first)
		if k == nil {
			return
		}
		switch string(k) {
		case "model":
			d.once(&seen, 0)
			c.Model = d.str()
		case "seed":
			d.once(&seen, 1)
			c.Seed = d.int()
		case "temperature":
			d.once(&seen, 2)
			c.Temperature = d.float()
		case "tools":
			d.once(&seen, 3)
			c.Tools = d.str()
		case "tool_count":
			d.once(&seen, 4)
			c.ToolCount = d.int()
		case "confirm":
			d.once(&seen, 5)
			c.Confirm = cell.ConfirmMode(d.str())
		case "descriptions":
			d.once(&seen, 6)
			c.Descriptions = d.str()
		case "options":
			d.once(&seen, 7)
			c.Options = d.str()
		default:
			d.unknown(k, cellKeys)
		}
	}
}

func (d *fastReader) reason(r *matchers.Reason) {
	if !d.open('{') {
		return
	}
	var seen uint32
	for first := true; ; first = false {
		k := d.key(first)
		if k == nil {
			return
		}
		switch string(k) {
		case "code":
			d.once(&seen, 0)
			r.Code = d.str()
		case "detail":
			d.once(&seen, 1)
			r.Detail = d.str()
		default:
			d.unknown(k, reasonKeys)
		}
	}
}

func (d *fastReader) tokens(t *Tokens) {
	if !d.open('{') {
		return
	}
	var seen uint32
	for first := true; ; first = false {
		k := d.key(first)
		if k == nil {
			return
		}
		switch string(k) {
		case "in":
			d.once(&seen, 0)
			t.In = d.int()
		case "out":
			d.once(&seen, 1)
			t.Out = d.int()
		case "cached":
			d.once(&seen, 2)
			t.Cached = d.int()
		default:
			d.unknown(k, tokensKeys)
		}
	}
}

func (d *fastReader) trace(t *Trace) {
	if !d.open('{') {
		return
	}
	var seen uint32
	for first := true; ; first = false {
		k := d.key(first)
		if k == nil {
			return
		}
		switch string(k) {
		case "offered":
			d.once(&seen, 0)
			t.Offered = d.strings()
		case "turns":
			d.once(&seen, 1)
			t.Turns = list(d, d.turn)
		case "calls":
			d.once(&seen, 2)
			t.Calls = list(d, d.call)
		case "answer":
			d.once(&seen, 3)
			t.Answer = d.str()
		case "text_calls":
			d.once(&seen, 4)
			d.other(&t.TextCalls)
		case "out_of_turns":
			d.once(&seen, 5)
			t.OutOfTurns = d.bool()
		case "users":
			d.once(&seen, 6)
			d.other(&t.Users)
		case "out_of_user_turns":
			d.once(&seen, 7)
			t.OutOfUserTurns = d.bool()
		default:
			d.unknown(k, traceKeys)
		}
	}
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
	if !d.open('{') {
		return
	}
	var seen uint32
	for first := true; ; first = false {
		k := d.key(first)
		if k == nil {
			return
		}
		switch string(k) {
		case "content":
			d.once(&seen, 0)
			t.Content = d.text()
		case "thinking":
			d.once(&seen, 1)
			t.Thinking = d.text()
		case "tool_calls":
			d.once(&seen, 2)
			t.ToolCalls = d.int()
		case "tokens":
			d.once(&seen, 3)
			d.tokens(&t.Tokens)
		case "latency_ms":
			d.once(&seen, 4)
			t.Latency = Millis(d.float())
		case "done_reason":
			d.once(&seen, 5)
			t.DoneReason = d.str()
		case "host":
			d.once(&seen, 6)
			t.Host = d.str()
		default:
			d.unknown(k, turnKeys)
		}
	}
}

func (d *fastReader) call(c *Call) {
	if !d.open('{') {
		return
	}
	var seen uint32
	for first := true; ; first = false {
		k := d.key(first)
		if k == nil {
			return
		}
		switch string(k) {
		case "turn":
			d.once(&seen, 0)
			c.Turn = d.int()
		case "tool":
			d.once(&seen, 1)
			c.Tool = d.str()
		case "args":
			d.once(&seen, 2)
			if !d.summary {
				c.Args = d.object()
			} else if b := d.peek(); b == '{' || b == 'n' {
				d.skip()
			} else {
				d.fail()
			}
		case "raw_args":
			d.once(&seen, 3)
			c.RawArgs = d.text()
		case "malformed":
			d.once(&seen, 4)
			c.Malformed = d.bool()
		case "not_offered":
			d.once(&seen, 5)
			c.NotOffered = d.bool()
		case "not_executed":
			d.once(&seen, 6)
			c.NotExecuted = d.str()
		case "confirm":
			d.once(&seen, 7)
			c.Confirm = d.str()
		case "elicitations":
			d.once(&seen, 8)
			c.Elicitations = d.strings()
		case "result":
			d.once(&seen, 9)
			c.Result = d.text()
		case "structured":
			d.once(&seen, 10)
			if d.summary {
				d.skip()
			} else {
				c.Structured = d.value()
			}
		case "is_error":
			d.once(&seen, 11)
			c.IsError = d.bool()
		case "latency_ms":
			d.once(&seen, 12)
			c.Latency = Millis(d.float())
		default:
			d.unknown(k, callKeys)
		}
	}
}
