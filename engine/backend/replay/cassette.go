package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/engine/backend"
)

// Axes are the cell axes a `when` selector may name.
var Axes = []string{"model", "seed", "temperature", "tools", "confirm", "descriptions"}

// Cassette is the recorded or hand-written replies for one case.
type Cassette struct {
	Case string
	File string // where it was read from, for messages
	Line int
	Runs []Run
}

// Run is the replies for the cells its selector matches.
type Run struct {
	When  []Selector // all must match; empty matches every cell
	Turns []Turn
	Line  int
}

// Selector constrains one axis to any of some values or globs.
type Selector struct {
	Axis     string
	Patterns []string

	compiled []pattern // Patterns, prepared by compile
}

// pattern is one selector value prepared for matching without allocation.
type pattern struct {
	text  string
	glob  bool
	isNum bool
	num   float64
}

func (s *Selector) compile() {
	s.compiled = make([]pattern, len(s.Patterns))
	for i, p := range s.Patterns {
		c := pattern{text: p, glob: hasMeta(p)}
		if !c.glob && looksNumeric(p) {
			if f, err := strconv.ParseFloat(p, 64); err == nil {
				c.isNum, c.num = true, f
			}
		}
		s.compiled[i] = c
	}
}

// looksNumeric is a cheap filter before strconv.ParseFloat, whose error
// path allocates.
func looksNumeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return false
		}
	}
	return true
}

// Turn is one model reply.
type Turn struct {
	Content    string
	Thinking   string
	ToolCalls  []backend.ToolCall
	TokensIn   int
	TokensOut  int
	Latency    time.Duration
	DoneReason string
	Line       int
}

// SyntaxError is a cassette that does not parse, with its position.
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

type parser struct{ file string }

// yamlLine picks the line out of a yaml.v3 syntax error.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *parser) errf(n *yaml.Node, format string, args ...any) error {
	return &SyntaxError{File: p.file, Line: n.Line, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads the cassettes in one file: one YAML document per case,
// documents separated by ---.
func Parse(file string, data []byte) ([]*Cassette, error) {
	p := &parser{file: file}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []*Cassette
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
				line, _ := strconv.Atoi(m[1])
				return nil, &SyntaxError{File: file, Line: line, Msg: m[2]}
			}
			return nil, &SyntaxError{File: file, Line: 1, Msg: err.Error()}
		}
		if len(doc.Content) == 0 {
			continue
		}
		c, err := p.cassette(doc.Content[0])
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// fields walks a mapping node, rejecting keys not in allowed.
func (p *parser) fields(n *yaml.Node, what string, allowed ...string) ([][2]*yaml.Node, error) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, "%s: want a mapping", what)
	}
	var out [][2]*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(allowed, k.Value) {
			return nil, p.errf(k, "%s: unknown field %q (want one of: %s)", what, k.Value, strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return nil, p.errf(k, "%s: field %q given twice", what, k.Value)
		}
		seen[k.Value] = true
		out = append(out, [2]*yaml.Node{k, deref(v)})
	}
	return out, nil
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func (p *parser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return "", p.errf(n, "%s: want a string", what)
	}
	return n.Value, nil
}

func (p *parser) num(n *yaml.Node, what string) (float64, error) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		return 0, p.errf(n, "%s: want a number", what)
	}
	var f float64
	if err := n.Decode(&f); err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, p.errf(n, "%s: want a non-negative number, got %q", what, n.Value)
	}
	return f, nil
}

func (p *parser) cassette(n *yaml.Node) (*Cassette, error) {
	c := &Cassette{File: p.file, Line: n.Line}
	fs, err := p.fields(n, "cassette", "case", "runs")
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		switch k, v := f[0], f[1]; k.Value {
		case "case":
			if c.Case, err = p.str(v, "case"); err != nil {
				return nil, err
			}
		case "runs":
			if v.Kind != yaml.SequenceNode {
				return nil, p.errf(v, "runs: want a list")
			}
			for i, rn := range v.Content {
				r, err := p.run(deref(rn), fmt.Sprintf("runs[%d]", i))
				if err != nil {
					return nil, err
				}
				c.Runs = append(c.Runs, r)
			}
		}
	}
	if c.Case == "" {
		return nil, p.errf(n, "cassette: missing case (the case id it answers for)")
	}
	if len(c.Runs) == 0 {
		return nil, p.errf(n, "cassette for case %q: no runs", c.Case)
	}
	return c, nil
}

func (p *parser) run(n *yaml.Node, what string) (Run, error) {
	r := Run{Line: n.Line}
	fs, err := p.fields(n, what, "when", "turns")
	if err != nil {
		return r, err
	}
	hasTurns := false
	for _, f := range fs {
		switch k, v := f[0], f[1]; k.Value {
		case "when":
			if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
				continue
			}
			sel, err := p.fields(v, what+".when", Axes...)
			if err != nil {
				return r, err
			}
			for _, s := range sel {
				patterns, err := p.patterns(s[1], what+".when."+s[0].Value)
				if err != nil {
					return r, err
				}
				sel := Selector{Axis: s[0].Value, Patterns: patterns}
				sel.compile()
				r.When = append(r.When, sel)
			}
		case "turns":
			hasTurns = true
			if v.Kind != yaml.SequenceNode {
				return r, p.errf(v, "%s.turns: want a list", what)
			}
			for i, tn := range v.Content {
				t, err := p.turn(deref(tn), fmt.Sprintf("%s.turns[%d]", what, i))
				if err != nil {
					return r, err
				}
				r.Turns = append(r.Turns, t)
			}
		}
	}
	if !hasTurns || len(r.Turns) == 0 {
		return r, p.errf(n, "%s: no turns", what)
	}
	return r, nil
}

func (p *parser) patterns(n *yaml.Node, what string) ([]string, error) {
	var nodes []*yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		nodes = []*yaml.Node{n}
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return nil, p.errf(n, "%s: empty list matches nothing", what)
		}
		nodes = n.Content
	default:
		return nil, p.errf(n, "%s: want a value, a glob or a list of them", what)
	}
	out := make([]string, len(nodes))
	for i, v := range nodes {
		v = deref(v)
		if v.Kind != yaml.ScalarNode {
			return nil, p.errf(v, "%s: want a scalar", what)
		}
		if err := checkGlob(v.Value); err != nil {
			return nil, p.errf(v, "%s: %v", what, err)
		}
		out[i] = v.Value
	}
	return out, nil
}

func (p *parser) turn(n *yaml.Node, what string) (Turn, error) {
	t := Turn{Line: n.Line}
	fs, err := p.fields(n, what, "content", "thinking", "tool_calls", "tokens", "latency_ms", "done_reason")
	if err != nil {
		return t, err
	}
	for _, f := range fs {
		k, v := f[0], f[1]
		switch k.Value {
		case "content":
			t.Content, err = p.str(v, what+".content")
		case "thinking":
			t.Thinking, err = p.str(v, what+".thinking")
		case "done_reason":
			t.DoneReason, err = p.str(v, what+".done_reason")
		case "latency_ms":
			var ms float64
			ms, err = p.num(v, what+".latency_ms")
			t.Latency = time.Duration(math.Round(ms * float64(time.Millisecond)))
		case "tokens":
			var tf [][2]*yaml.Node
			if tf, err = p.fields(v, what+".tokens", "in", "out"); err != nil {
				return t, err
			}
			for _, x := range tf {
				var f float64
				if f, err = p.num(x[1], what+".tokens."+x[0].Value); err != nil {
					return t, err
				}
				if x[0].Value == "in" {
					t.TokensIn = int(f)
				} else {
					t.TokensOut = int(f)
				}
			}
		case "tool_calls":
			if v.Kind != yaml.SequenceNode {
				return t, p.errf(v, "%s.tool_calls: want a list", what)
			}
			for i, cn := range v.Content {
				c, err := p.toolCall(deref(cn), fmt.Sprintf("%s.tool_calls[%d]", what, i))
				if err != nil {
					return t, err
				}
				t.ToolCalls = append(t.ToolCalls, c)
			}
		}
		if err != nil {
			return t, err
		}
	}
	return t, nil
}

func (p *parser) toolCall(n *yaml.Node, what string) (backend.ToolCall, error) {
	var c backend.ToolCall
	fs, err := p.fields(n, what, "name", "arguments", "raw_arguments")
	if err != nil {
		return c, err
	}
	hasArgs := false
	for _, f := range fs {
		k, v := f[0], f[1]
		switch k.Value {
		case "name":
			if c.Name, err = p.str(v, what+".name"); err != nil {
				return c, err
			}
		case "arguments", "raw_arguments":
			if hasArgs {
				return c, p.errf(k, "%s: give arguments or raw_arguments, not both", what)
			}
			hasArgs = true
			if k.Value == "raw_arguments" {
				s, err := p.str(v, what+".raw_arguments")
				if err != nil {
					return c, err
				}
				c.Arguments = json.RawMessage(s)
				continue
			}
			var buf bytes.Buffer
			if err := p.toJSON(&buf, v); err != nil {
				return c, err
			}
			c.Arguments = json.RawMessage(buf.Bytes())
		}
	}
	if c.Name == "" {
		return c, p.errf(n, "%s: missing name", what)
	}
	if !hasArgs {
		c.Arguments = json.RawMessage("{}")
	}
	return c, nil
}

// toJSON writes a YAML value as compact JSON, keeping mapping key order.
// Scalars that YAML would type as timestamps or binary stay strings.
func (p *parser) toJSON(buf *bytes.Buffer, n *yaml.Node) error {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := deref(n.Content[i])
			if k.Kind != yaml.ScalarNode || k.Value == "<<" && k.ShortTag() == "!!merge" {
				return p.errf(k, "arguments: keys must be plain scalars")
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k.Value)
			buf.WriteByte(':')
			if err := p.toJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := p.toJSON(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			buf.WriteString("null")
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return p.errf(n, "arguments: %v", err)
			}
			buf.WriteString(strconv.FormatBool(b))
		case "!!int", "!!float":
			if isJSONNumber(n.Value) {
				buf.WriteString(n.Value)
				break
			}
			var f float64
			if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return p.errf(n, "arguments: %q is not a number JSON can hold", n.Value)
			}
			buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		default:
			writeString(buf, n.Value)
		}
	default:
		return p.errf(n, "arguments: unsupported YAML node")
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s)
	buf.Write(b)
}

func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}

// checkGlob reports a pattern with a dangling escape.
func checkGlob(p string) error {
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' {
			if i+1 == len(p) {
				return fmt.Errorf("pattern %q ends in a lone backslash", p)
			}
			i++
		}
	}
	return nil
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?\`) }

// glob matches s against p, where * matches any run of characters
// (including none and including "/"), ? one character, and \ escapes the
// next character.
func glob(p, s string) bool {
	px, sx := 0, 0
	nextP, nextS := -1, -1
	for px < len(p) || sx < len(s) {
		if px < len(p) {
			switch c := p[px]; c {
			case '*':
				nextP, nextS = px, sx+1
				px++
				continue
			case '?':
				if sx < len(s) {
					_, w := utf8.DecodeRuneInString(s[sx:])
					px++
					sx += w
					continue
				}
			default:
				if c == '\\' && px+1 < len(p) {
					c = p[px+1]
					if sx < len(s) && s[sx] == c {
						px += 2
						sx++
						continue
					}
				} else if sx < len(s) && s[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if nextS > 0 && nextS <= len(s) {
			px, sx = nextP, nextS
			continue
		}
		return false
	}
	return true
}

// match reports whether a cell value matches the pattern: exactly, as a
// glob, or as an equal number ("0.70" matches "0.7").
func (p *pattern) match(v string) bool {
	switch {
	case p.text == v:
		return true
	case p.glob:
		return glob(p.text, v)
	case p.isNum && looksNumeric(v):
		f, err := strconv.ParseFloat(v, 64)
		return err == nil && f == p.num
	}
	return false
}

// matches reports whether every selector accepts the cell. Selectors are
// compiled by the parser.
func (r *Run) matches(cell map[string]string) bool {
	for i := range r.When {
		s := &r.When[i]
		v := cell[s.Axis]
		ok := false
		for j := range s.compiled {
			if s.compiled[j].match(v) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// formatCell renders a cell for messages, axes in sorted order.
func formatCell(cell map[string]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(cell)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", k, cell[k])
	}
	b.WriteByte('}')
	return b.String()
}

func formatWhen(sel []Selector) string {
	if len(sel) == 0 {
		return "{} (every cell)"
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range sel {
		if i > 0 {
			b.WriteString(", ")
		}
		if len(s.Patterns) == 1 {
			fmt.Fprintf(&b, "%s: %s", s.Axis, s.Patterns[0])
		} else {
			fmt.Fprintf(&b, "%s: [%s]", s.Axis, strings.Join(s.Patterns, ", "))
		}
	}
	b.WriteByte('}')
	return b.String()
}
