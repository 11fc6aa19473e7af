package replay

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/schema"
)

// Axes are the cell axes a `when` selector may name.
var Axes = schema.CassetteAxes

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

// Parse reads the cassettes in one file: one YAML document per case,
// documents separated by ---. The format is schema.ParseCassettes'; the
// error, when any, is a schema.Errors listing every mistake at
// file:line:col.
func Parse(file string, data []byte) ([]*Cassette, error) {
	cs, errs := schema.ParseCassettes(file, data)
	if len(errs) > 0 {
		return nil, errs
	}
	out := make([]*Cassette, len(cs))
	for i, c := range cs {
		out[i] = fromSchema(c)
	}
	return out, nil
}

// fromSchema converts a parsed cassette, compiling its selectors.
func fromSchema(c *schema.Cassette) *Cassette {
	out := &Cassette{Case: c.Case, File: c.File, Line: c.Line, Runs: make([]Run, len(c.Runs))}
	for i, r := range c.Runs {
		run := Run{Line: r.Line, When: make([]Selector, len(r.When)), Turns: make([]Turn, len(r.Turns))}
		for j, w := range r.When {
			run.When[j] = Selector{Axis: w.Axis, Patterns: w.Patterns}
			run.When[j].compile()
		}
		for j, t := range r.Turns {
			turn := Turn{
				Content: t.Content, Thinking: t.Thinking, TokensIn: t.TokensIn, TokensOut: t.TokensOut,
				Latency: t.Latency, DoneReason: t.DoneReason, Line: t.Line,
			}
			for _, tc := range t.ToolCalls {
				turn.ToolCalls = append(turn.ToolCalls, backend.ToolCall{Name: tc.Name, Arguments: tc.Arguments})
			}
			run.Turns[j] = turn
		}
		out.Runs[i] = run
	}
	return out
}

// isJSONNumber reports whether s is a JSON number as written.
func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
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
