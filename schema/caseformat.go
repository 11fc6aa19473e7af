package schema

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// caseSchemaJSON is the case JSON Schema generated from #Case
// (written by `go generate ./schema/...`, kept current by
// TestGeneratedFilesCurrent).
//
//go:embed case.schema.json
var caseSchemaJSON []byte

// The loader checks a case's structure in Go (checkCase), with messages
// written for each field, and then against the JSON Schema generated
// from #Case (formatIssues): a field of #Case with no check of its own
// in checkCase is still held to what toolward.cue says, at its
// position. expect is left to matchers.CompileExpect, which checks all
// of it. google/jsonschema-go validates the same schema in the tests,
// but costs three times a whole ParseCase and reports no position, so
// the loader walks the subset of JSON Schema the generator writes
// itself. A keyword outside that subset fails the compilation, and with
// it every case (TestCaseFormatCompiles catches it first).

// jsNode is one compiled schema object.
type jsNode struct {
	ref        string // #/definitions/<ref>
	types      []string
	enum       []any
	konst      *any
	pattern    *regexp.Regexp
	minLength  int
	bounds     []jsBound
	minItems   int
	items      *jsNode
	props      map[string]*jsNode
	propNames  []string // sorted
	required   []string
	closed     bool    // additionalProperties: false
	additional *jsNode // additionalProperties: schema
	names      *jsNode // propertyNames
	anyOf      []*jsNode
	oneOf      []*jsNode
	allOf      []*jsNode
	not        *jsNode
}

type jsBound struct {
	key string
	n   float64
}

type jsSchema struct {
	root *jsNode
	defs map[string]*jsNode
	skip map[string]bool // definitions checked elsewhere
}

var caseFormat = sync.OnceValues(func() (*jsSchema, error) {
	return compileJSONSchema(caseSchemaJSON, "Expect")
})

// annotations are keywords that do not constrain a value.
var annotations = map[string]bool{"$schema": true, "$id": true, "title": true, "description": true, "default": true, "definitions": true}

func compileJSONSchema(src []byte, skip ...string) (*jsSchema, error) {
	var raw map[string]any
	if err := json.Unmarshal(src, &raw); err != nil {
		return nil, err
	}
	s := &jsSchema{defs: map[string]*jsNode{}, skip: map[string]bool{}}
	for _, k := range skip {
		s.skip[k] = true
	}
	defs, _ := raw["definitions"].(map[string]any)
	for name, d := range defs {
		dm, ok := d.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("definition %s: not an object", name)
		}
		n, err := compileNode(dm, "/definitions/"+name)
		if err != nil {
			return nil, err
		}
		s.defs[name] = n
	}
	root, err := compileNode(raw, "")
	if err != nil {
		return nil, err
	}
	s.root = root
	for _, k := range skip {
		if s.defs[k] == nil {
			return nil, fmt.Errorf("no definition %s", k)
		}
	}
	return s, nil
}

func compileNode(m map[string]any, at string) (*jsNode, error) {
	n := &jsNode{}
	bad := func(k string) error {
		return fmt.Errorf("%s/%s: keyword or value not supported by the loader's check", at, k)
	}
	sub := func(k string, v any) (*jsNode, error) {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, bad(k)
		}
		return compileNode(mm, at+"/"+k)
	}
	list := func(k string, v any) ([]*jsNode, error) {
		l, ok := v.([]any)
		if !ok {
			return nil, bad(k)
		}
		var out []*jsNode
		for i, x := range l {
			c, err := sub(fmt.Sprintf("%s/%d", k, i), x)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	num := func(k string, v any) (float64, error) {
		f, ok := v.(float64)
		if !ok {
			return 0, bad(k)
		}
		return f, nil
	}
	var err error
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		switch k {
		case "$ref":
			s, _ := v.(string)
			name, ok := strings.CutPrefix(s, "#/definitions/")
			if !ok {
				return nil, bad(k)
			}
			n.ref = name
		case "type":
			switch t := v.(type) {
			case string:
				n.types = []string{t}
			case []any:
				for _, x := range t {
					s, _ := x.(string)
					n.types = append(n.types, s)
				}
			default:
				return nil, bad(k)
			}
		case "enum":
			if n.enum, _ = v.([]any); n.enum == nil {
				return nil, bad(k)
			}
		case "const":
			n.konst = &v
		case "pattern":
			s, _ := v.(string)
			if n.pattern, err = regexp.Compile(s); err != nil {
				return nil, bad(k)
			}
		case "minLength":
			f, err := num(k, v)
			if err != nil {
				return nil, err
			}
			n.minLength = int(f)
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			f, err := num(k, v)
			if err != nil {
				return nil, err
			}
			n.bounds = append(n.bounds, jsBound{k, f})
		case "minItems":
			f, err := num(k, v)
			if err != nil {
				return nil, err
			}
			n.minItems = int(f)
		case "items":
			if n.items, err = sub(k, v); err != nil {
				return nil, err
			}
		case "properties":
			pm, ok := v.(map[string]any)
			if !ok {
				return nil, bad(k)
			}
			n.props = map[string]*jsNode{}
			for name, p := range pm {
				if n.props[name], err = sub(k+"/"+name, p); err != nil {
					return nil, err
				}
			}
			n.propNames = slices.Sorted(maps.Keys(n.props))
		case "required":
			l, _ := v.([]any)
			for _, x := range l {
				s, _ := x.(string)
				n.required = append(n.required, s)
			}
		case "additionalProperties":
			if b, ok := v.(bool); ok {
				if b {
					return nil, bad(k)
				}
				n.closed = true
			} else if n.additional, err = sub(k, v); err != nil {
				return nil, err
			}
		case "propertyNames":
			if n.names, err = sub(k, v); err != nil {
				return nil, err
			}
		case "anyOf":
			if n.anyOf, err = list(k, v); err != nil {
				return nil, err
			}
		case "oneOf":
			if n.oneOf, err = list(k, v); err != nil {
				return nil, err
			}
		case "allOf":
			if n.allOf, err = list(k, v); err != nil {
				return nil, err
			}
		case "not":
			if n.not, err = sub(k, v); err != nil {
				return nil, err
			}
		default:
			if !annotations[k] {
				return nil, bad(k)
			}
		}
	}
	return n, nil
}

// formatIssues checks a case mapping against the case JSON Schema.
func formatIssues(m map[string]any) []caseIssue {
	s, err := caseFormat()
	if err != nil {
		return []caseIssue{{msg: "the embedded case.schema.json does not compile: " + err.Error()}}
	}
	return s.check(s.root, m, nil)
}

// jsonKind names v's JSON Schema type; integer is a number written
// without a fraction or exponent, as CUE's int.
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int64:
		return "integer"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "number"
		}
		return "integer"
	case float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "?"
}

var kindWords = map[string]string{"null": "null", "boolean": "a boolean", "string": "a string", "integer": "an integer",
	"number": "a number", "array": "a list", "object": "a mapping"}

func (s *jsSchema) check(n *jsNode, v any, at []any) []caseIssue {
	issue := func(format string, args ...any) []caseIssue {
		return []caseIssue{{elems: slices.Clone(at), msg: fmt.Sprintf(format, args...)}}
	}
	if n.ref != "" {
		if s.skip[n.ref] {
			return nil
		}
		return s.check(s.defs[n.ref], v, at)
	}
	kind := jsonKind(v)
	if len(n.types) > 0 && !slices.Contains(n.types, kind) && !(kind == "integer" && slices.Contains(n.types, "number")) {
		words := make([]string, len(n.types))
		for i, t := range n.types {
			words[i] = kindWords[t]
		}
		return issue("want %s, got %s", strings.Join(words, " or "), showVal(v))
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return jsonEqual(e, v) }) {
		var alts []string
		for _, e := range n.enum {
			alts = append(alts, showVal(e))
		}
		return issue("want one of %s, got %s", strings.Join(alts, ", "), showVal(v))
	}
	if n.konst != nil && !jsonEqual(*n.konst, v) {
		return issue("want %s, got %s", showVal(*n.konst), showVal(v))
	}
	if str, ok := v.(string); ok {
		if n.minLength > 0 && utf8.RuneCountInString(str) < n.minLength {
			return issue("want a non-empty string")
		}
		if n.pattern != nil && !n.pattern.MatchString(str) {
			return issue("want a string matching %s, got %q", n.pattern, str)
		}
	}
	if f, ok := number(v); ok {
		for _, b := range n.bounds {
			switch {
			case b.key == "minimum" && f < b.n:
				return issue("want at least %v, got %s", b.n, showVal(v))
			case b.key == "maximum" && f > b.n:
				return issue("want at most %v, got %s", b.n, showVal(v))
			case b.key == "exclusiveMinimum" && f <= b.n:
				return issue("want more than %v, got %s", b.n, showVal(v))
			case b.key == "exclusiveMaximum" && f >= b.n:
				return issue("want less than %v, got %s", b.n, showVal(v))
			}
		}
	}
	var out []caseIssue
	if l, ok := v.([]any); ok {
		if len(l) < n.minItems {
			return issue("want at least %d items, got %d", n.minItems, len(l))
		}
		if n.items != nil {
			for i, x := range l {
				out = append(out, s.check(n.items, x, append(slices.Clone(at), i))...)
			}
		}
	}
	if m, ok := v.(map[string]any); ok {
		suggested := map[string]bool{}
		if n.closed {
			out = append(out, closedFields(at, m, n.propNames, suggested)...)
		}
		for _, k := range n.required {
			if _, ok := m[k]; !ok && !suggested[k] {
				out = append(out, issue("missing field %q", k)...)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			el := append(slices.Clone(at), k)
			if p := n.props[k]; p != nil {
				out = append(out, s.check(p, m[k], el)...)
				continue
			}
			if n.names != nil && len(s.check(n.names, k, el)) > 0 {
				out = append(out, caseIssue{elems: el, msg: fmt.Sprintf("key %q is not allowed here", k)})
				continue
			}
			if n.additional != nil {
				out = append(out, s.check(n.additional, m[k], el)...)
			}
		}
	}
	for _, c := range n.allOf {
		out = append(out, s.check(c, v, at)...)
	}
	if n.anyOf != nil {
		if best, ok := s.firstFit(n.anyOf, v, at); !ok {
			out = append(out, best...)
		}
	}
	if n.oneOf != nil {
		fits := 0
		var best []caseIssue
		for _, c := range n.oneOf {
			is := s.check(c, v, at)
			if len(is) == 0 {
				fits++
			} else if best == nil || closer(is, best) {
				best = is
			}
		}
		switch fits {
		case 0:
			out = append(out, best...)
		case 1:
		default:
			out = append(out, issue("matches more than one of its forms: give only one of them")...)
		}
	}
	if n.not != nil && len(s.check(n.not, v, at)) == 0 {
		out = append(out, issue("not allowed here")...)
	}
	return out
}

// firstFit reports whether v fits one of alts; if none, it returns the
// issues of the alternative v came closest to.
func (s *jsSchema) firstFit(alts []*jsNode, v any, at []any) ([]caseIssue, bool) {
	var best []caseIssue
	for _, c := range alts {
		is := s.check(c, v, at)
		if len(is) == 0 {
			return nil, true
		}
		if best == nil || closer(is, best) {
			best = is
		}
	}
	return best, false
}

// closer reports whether issues a point deeper into the value than b
// (the alternative got further), or as deep with fewer issues.
func closer(a, b []caseIssue) bool {
	da, db := depth(a), depth(b)
	if da != db {
		return da > db
	}
	return len(a) < len(b)
}

func depth(is []caseIssue) int {
	d := 0
	for _, i := range is {
		d = max(d, len(i.elems))
	}
	return d
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	}
	return 0, false
}

// jsonEqual compares a schema value (from encoding/json) with a case
// value (from yamlValue).
func jsonEqual(schema, v any) bool {
	if f, ok := schema.(float64); ok {
		g, ok := number(v)
		return ok && f == g
	}
	return reflect.DeepEqual(schema, v)
}
