// Package textcall finds tool calls that a model wrote as text: markup
// such as <tool_call>{"name": …, "arguments": …}</tool_call> that the
// serving stack's chat-template parser did not turn into a real call, so
// it reached the agent loop as plain content.
//
// Its position: the scorer (package matchers) runs Find over every model
// turn of a stored trace, so detection is a pure function of the trace and
// a later re-score finds the same calls. The markup families are data
// (families.yaml, embedded; see Parse for the format): a new family is a
// new entry there, not new Go.
//
// Only text that decodes to a call shape is reported: a tool name string
// together with an arguments object. Prose that merely mentions
// "<tool_call>" or "[TOOL_CALLS]" is not a call. Work is bounded whatever
// the text: see MaxText, MaxPayload, MaxCandidates, MaxFound and Budget.
package textcall

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Limits on the work Find does for one text. Text past them is not
// scanned, so a call hidden there is not found.
const (
	// MaxText is how much of a text is scanned, in bytes (its prefix).
	MaxText = 1 << 20
	// MaxPayload is how many bytes after a marker one call may span.
	MaxPayload = 64 << 10
	// MaxCandidates is how many marker matches, over all families, are
	// tried per text.
	MaxCandidates = 256
	// MaxFound is how many calls are reported per text.
	MaxFound = 32
	// MaxDecode is how many payload bytes a Budget lets the decoders read
	// in all, over every text scanned with it.
	MaxDecode = 8 << 20
	// MaxTextDecode is how much of a Budget one text may spend, so that
	// one hostile text does not leave nothing for the others.
	MaxTextDecode = MaxDecode / 4
)

// Budget bounds the decoding work of several Find calls together, e.g.
// over every turn of one trace: once it is spent, markup is no longer
// decoded and no more calls are found. The zero value is spent; a Budget
// is not safe for concurrent use.
type Budget struct {
	decode int // payload bytes the decoders may still read
}

// NewBudget returns a fresh budget of MaxDecode bytes.
func NewBudget() *Budget { return &Budget{decode: MaxDecode} }

// Spent reports whether b is used up.
func (b *Budget) Spent() bool { return b.decode <= 0 }

// Payload extractors a family may name.
const (
	PayloadCalls     = "calls"     // a JSON call object or a non-empty array of them
	PayloadArguments = "arguments" // a JSON arguments object; the name is the match's group "name"
	PayloadPython    = "python"    // name(key=value, …) or [a(…), b(…)]
)

// Found is one call found in text.
type Found struct {
	Family string         // the family's name
	Tool   string         // the tool the model meant to call
	Args   map[string]any // its arguments, decoded as encoding/json does (numbers are float64)
	Offset int            // byte offset in the text where the family's markup starts
}

// Family is one markup family.
type Family struct {
	Name    string   `yaml:"name"`
	Doc     string   `yaml:"doc"`
	Match   string   `yaml:"match"`
	Payload []string `yaml:"payload"`

	re      *regexp.Regexp
	first   *byteSet // the bytes a match starts with; nil when unknown
	payload int      // index of group "payload", -1 when none
	name    int      // index of group "name", -1 when none
}

// Shape says which JSON objects are call objects.
type Shape struct {
	Name      []string `yaml:"name"`      // keys holding the tool name
	Arguments []string `yaml:"arguments"` // keys holding the arguments
	Wrap      []string `yaml:"wrap"`      // keys whose object value is the call itself
	Extra     []string `yaml:"extra"`     // other keys a call object may have
	ToolName  string   `yaml:"tool_name"` // RE2 a tool name must match

	toolName *regexp.Regexp
}

// Set is a compiled list of families with the call shape they share.
type Set struct {
	Shape    Shape    `yaml:"shape"`
	Families []Family `yaml:"families"`
}

//go:embed families.yaml
var familiesYAML []byte

var (
	defaultOnce sync.Once
	defaultSet  *Set
)

// Default returns the families of the embedded families.yaml.
func Default() *Set {
	defaultOnce.Do(func() {
		s, err := Parse(familiesYAML)
		if err != nil {
			panic("textcall: embedded families.yaml: " + err.Error())
		}
		defaultSet = s
	})
	return defaultSet
}

// Parse compiles a families file: a `shape` mapping and a list of
// `families`, each with a name, an RE2 `match` and the `payload`
// extractors to try (calls, arguments, python). families.yaml documents
// every field.
func Parse(data []byte) (*Set, error) {
	var s Set
	if err := yaml.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("textcall: %w", err)
	}
	if err := s.compile(); err != nil {
		return nil, fmt.Errorf("textcall: %w", err)
	}
	return &s, nil
}

func (s *Set) compile() error {
	if len(s.Shape.Name) == 0 || len(s.Shape.Arguments) == 0 {
		return fmt.Errorf("shape: want at least one name key and one arguments key")
	}
	re, err := regexp.Compile(s.Shape.ToolName)
	if err != nil {
		return fmt.Errorf("shape.tool_name: %v", err)
	}
	s.Shape.toolName = re
	if len(s.Families) == 0 {
		return fmt.Errorf("families: want at least one family")
	}
	seen := map[string]bool{}
	for i := range s.Families {
		f := &s.Families[i]
		if err := f.compile(); err != nil {
			return fmt.Errorf("families[%d] (%s): %v", i, f.Name, err)
		}
		if seen[f.Name] {
			return fmt.Errorf("families[%d]: duplicate name %q", i, f.Name)
		}
		seen[f.Name] = true
	}
	return nil
}

func (f *Family) compile() error {
	if f.Name == "" {
		return fmt.Errorf("missing name")
	}
	re, err := regexp.Compile(f.Match)
	if err != nil {
		return fmt.Errorf("match: %v", err)
	}
	if re.MatchString("") {
		return fmt.Errorf("match: %q matches empty text, so it would match everywhere", f.Match)
	}
	f.re, f.payload, f.name = re, re.SubexpIndex("payload"), re.SubexpIndex("name")
	f.first = firstBytes(f.Match)
	if len(f.Payload) == 0 {
		return fmt.Errorf("payload: want at least one of %s, %s, %s", PayloadCalls, PayloadArguments, PayloadPython)
	}
	for _, p := range f.Payload {
		switch p {
		case PayloadCalls, PayloadPython:
		case PayloadArguments:
			if f.name < 0 {
				return fmt.Errorf("payload %q needs a group (?P<name>…) in match", p)
			}
		default:
			return fmt.Errorf("payload: unknown extractor %q (want %s, %s or %s)", p, PayloadCalls, PayloadArguments, PayloadPython)
		}
	}
	return nil
}

// span is a claimed byte range [lo, hi) of the text.
type span struct{ lo, hi int }

// Find returns the calls in text, ordered by offset, within a fresh
// Budget. It never fails: markup that does not decode to a call shape is
// not a call.
func (s *Set) Find(text string) []Found { return s.FindWithin(text, NewBudget()) }

// FindWithin is Find drawing its decoding work from b.
func (s *Set) FindWithin(text string, b *Budget) []Found {
	if len(text) > MaxText {
		text = text[:MaxText]
	}
	sc := &scan{set: s, text: text, budget: b, local: MaxTextDecode}
	candidates := MaxCandidates
	for i := range s.Families {
		f := &s.Families[i]
		for pos := 0; pos < len(text) && candidates > 0 && len(sc.found) < MaxFound && !sc.spent(); {
			if f.first != nil { // no match starts before the next of these bytes
				skip := f.first.index(text[pos:])
				if skip < 0 {
					break
				}
				pos += skip
			}
			m := f.re.FindStringSubmatchIndex(text[pos:])
			if m == nil {
				break
			}
			for k := range m {
				if m[k] >= 0 {
					m[k] += pos
				}
			}
			candidates--
			// Matches may overlap: a failed candidate gives way to the
			// next one a byte later, e.g. the object inside [{…}, 5].
			pos = max(m[0]+1, sc.try(f, m))
		}
	}
	found := sc.found
	if len(found) > MaxFound {
		found = found[:MaxFound]
	}
	slices.SortStableFunc(found, func(a, b Found) int { return a.Offset - b.Offset })
	return found
}

// scan is the state of one FindWithin.
type scan struct {
	set     *Set
	text    string
	budget  *Budget
	found   []Found
	claimed []span
	keys    int // 0: not yet known; 1: the text has a name and an arguments key; -1: it lacks one
	local   int // bytes this text may still decode (MaxTextDecode)
}

// charge counts n bytes of decoding against the text's and the budget's
// allowance.
func (sc *scan) charge(n int) {
	sc.local -= n
	sc.budget.decode -= n
}

func (sc *scan) spent() bool { return sc.local <= 0 || sc.budget.Spent() }

// try decodes family f's markup at match m and records the calls it
// holds. It returns the offset just past them, or 0 when there were none.
func (sc *scan) try(f *Family, m []int) int {
	at := m[1]
	if f.payload >= 0 && m[2*f.payload] >= 0 {
		at = m[2*f.payload]
	}
	if inside(sc.claimed, m[0]) || inside(sc.claimed, at) {
		return 0
	}
	calls, n := sc.extract(f, m, at)
	if len(calls) == 0 {
		return 0
	}
	end := max(at+n, m[1])
	sc.claimed = append(sc.claimed, span{m[0], end})
	for _, c := range calls {
		sc.found = append(sc.found, Found{Family: f.Name, Tool: c.tool, Args: c.args, Offset: m[0]})
	}
	return end
}

// hasKeys reports whether the text holds a quoted name key and a quoted
// arguments key of the shape anywhere, without which no JSON call object
// can be in it; the answer is computed once per text.
func (sc *scan) hasKeys() bool {
	if sc.keys == 0 {
		sc.keys = -1
		if quotedAny(sc.text, sc.set.Shape.Name) && quotedAny(sc.text, sc.set.Shape.Arguments) {
			sc.keys = 1
		}
	}
	return sc.keys > 0
}

func quotedAny(text string, keys []string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(text, `"`+k+`"`) })
}

func inside(claimed []span, at int) bool {
	for _, c := range claimed {
		if at >= c.lo && at < c.hi {
			return true
		}
	}
	return false
}

type call struct {
	tool string
	args map[string]any
}

// extract tries f's extractors on the payload at text[at:] and returns
// the calls of the first that yields any, with the bytes it read.
func (sc *scan) extract(f *Family, m []int, at int) ([]call, int) {
	payload := sc.text[at:min(len(sc.text), at+MaxPayload)]
	for _, p := range f.Payload {
		var calls []call
		var n int
		switch p {
		case PayloadCalls:
			if sc.hasKeys() {
				calls, n = sc.jsonCalls(payload)
			}
		case PayloadArguments:
			calls, n = sc.jsonArguments(sc.text[m[2*f.name]:m[2*f.name+1]], payload)
		case PayloadPython:
			var read int
			calls, n, read = sc.set.pythonCalls(payload)
			sc.charge(read)
		}
		if len(calls) > 0 {
			return calls, n
		}
	}
	return nil, 0
}

// firstJSON decodes the JSON value at the start of payload and returns it
// with the number of bytes it spans; text after the value is not read.
// The bytes the decoder read are charged to the budget.
func (sc *scan) firstJSON(payload string) (any, int, bool) {
	r := &countingReader{r: strings.NewReader(payload)}
	defer func() { sc.charge(r.n) }()
	dec := json.NewDecoder(r)
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, 0, false
	}
	return v, int(dec.InputOffset()), true
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r *strings.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func (sc *scan) jsonCalls(payload string) ([]call, int) {
	v, n, ok := sc.firstJSON(payload)
	if !ok {
		return nil, 0
	}
	var items []any
	switch v := v.(type) {
	case map[string]any:
		items = []any{v}
	case []any:
		items = v
	}
	var calls []call
	for _, it := range items {
		obj, _ := it.(map[string]any)
		c, ok := sc.set.Shape.call(obj)
		if !ok {
			return nil, 0 // an array is calls only when every element is one
		}
		calls = append(calls, c)
	}
	return calls, n
}

func (sc *scan) jsonArguments(name, payload string) ([]call, int) {
	if !sc.set.Shape.toolName.MatchString(name) {
		return nil, 0
	}
	v, n, ok := sc.firstJSON(payload)
	args, isObj := v.(map[string]any)
	if !ok || !isObj {
		return nil, 0
	}
	return []call{{tool: name, args: args}}, n
}

// call reports whether obj is a call object and returns the call.
func (sh *Shape) call(obj map[string]any) (call, bool) {
	if obj == nil {
		return call{}, false
	}
	for _, w := range sh.Wrap {
		if inner, ok := obj[w].(map[string]any); ok {
			if !sh.onlyKeys(obj, append([]string{w}, sh.Extra...)) {
				return call{}, false
			}
			obj = inner
			break
		}
	}
	allowed := slices.Concat(sh.Name, sh.Arguments, sh.Extra)
	if !sh.onlyKeys(obj, allowed) {
		return call{}, false
	}
	name, ok := firstKey(obj, sh.Name).(string)
	if !ok || !sh.toolName.MatchString(name) {
		return call{}, false
	}
	args, ok := asArgs(firstKey(obj, sh.Arguments))
	if !ok {
		return call{}, false
	}
	return call{tool: name, args: args}, true
}

func (sh *Shape) onlyKeys(obj map[string]any, allowed []string) bool {
	for k := range obj {
		if !slices.Contains(allowed, k) {
			return false
		}
	}
	return true
}

// firstKey returns the value of the first of keys present in obj, or nil.
func firstKey(obj map[string]any, keys []string) any {
	for _, k := range keys {
		if v, ok := obj[k]; ok {
			return v
		}
	}
	return nil
}

// asArgs accepts an arguments object, or a JSON string holding one (the
// OpenAI wire shape).
func asArgs(v any) (map[string]any, bool) {
	switch v := v.(type) {
	case map[string]any:
		return v, true
	case string:
		var m map[string]any
		if err := json.Unmarshal([]byte(v), &m); err != nil || m == nil {
			return nil, false
		}
		return m, true
	}
	return nil, false
}
