package cell

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The selector language. One semantics for `--filter key=glob`, a
// cassette run's `when` and a case's `when` entries:
//
//   - A pattern is matched against the value as Axis.Format spells it
//     ("0.7", "n16", "qwen3:0.6b").
//   - * matches any run of characters ('/' and ':' included), ? any one
//     character, \ makes the next character literal (`\*` is a star). A
//     pattern ending in a lone \ is an error. Anything else is literal.
//   - On a numeric axis (seed, temperature) a pattern with no wildcard
//     must be a number, and matches every value equal to it: "0.70" and
//     "7e-1" select 0.7; "1" selects seed 1; "hot" is an error.
//   - Several patterns for one axis OR together; selectors on different
//     axes AND together.

// Pattern is one compiled selector value.
type Pattern struct {
	text  string
	glob  bool // has *, ? or \
	isNum bool
	num   float64
}

// Compile prepares a pattern; numeric says whether it selects values of
// a numeric axis (see the selector language above).
func Compile(pattern string, numeric bool) (Pattern, error) {
	if strings.HasSuffix(strings.ReplaceAll(pattern, `\\`, ""), `\`) {
		return Pattern{}, fmt.Errorf("pattern %q ends in a lone backslash", pattern)
	}
	p := Pattern{text: pattern, glob: strings.ContainsAny(pattern, `*?\`)}
	if numeric && !p.glob {
		f, err := strconv.ParseFloat(pattern, 64)
		if err != nil || !looksNumeric(pattern) {
			return Pattern{}, fmt.Errorf("pattern %q: want a number or a glob (the axis holds numbers)", pattern)
		}
		p.isNum, p.num = true, f
	}
	return p, nil
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.text }

// Match reports whether the formatted value v matches the pattern.
func (p Pattern) Match(v string) bool {
	switch {
	case p.text == v:
		return true
	case p.glob:
		return Glob(p.text, v)
	case p.isNum && looksNumeric(v):
		f, err := strconv.ParseFloat(v, 64)
		return err == nil && f == p.num
	}
	return false
}

// Quote escapes s so that, as a pattern, it matches exactly s.
func Quote(s string) string {
	if !strings.ContainsAny(s, `*?\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '*' || c == '?' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
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

// Glob reports whether s matches pattern p: * matches any run of
// characters (none included), ? one character (a UTF-8 rune), \ makes the
// next character literal; everything else matches itself.
func Glob(p, s string) bool {
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

// Selector keeps the cells whose value on Axis matches any of Patterns.
type Selector struct {
	Axis     string
	Patterns []Pattern
}

// NewSelector compiles patterns for the named axis; the axis need not be
// a cell axis (a filter on case ids or tags is a selector too), in which
// case its values are strings.
func NewSelector(axis string, patterns ...string) (Selector, error) {
	numeric := false
	if a := Lookup(axis); a != nil {
		numeric = a.Numeric
	}
	s := Selector{Axis: axis, Patterns: make([]Pattern, 0, len(patterns))}
	for _, text := range patterns {
		p, err := Compile(text, numeric)
		if err != nil {
			return Selector{}, fmt.Errorf("%s: %w", axis, err)
		}
		s.Patterns = append(s.Patterns, p)
	}
	return s, nil
}

// Match reports whether the formatted value v matches any pattern.
func (s *Selector) Match(v string) bool {
	for i := range s.Patterns {
		if s.Patterns[i].Match(v) {
			return true
		}
	}
	return false
}

// MatchCell reports whether the cell's value on the selector's axis
// matches; a selector on a name that is not a cell axis matches "".
func (s *Selector) MatchCell(c Cell) bool { return s.Match(c.Value(s.Axis)) }

// MatchAll reports whether every selector accepts c (true when there are
// none).
func MatchAll(sel []Selector, c Cell) bool {
	for i := range sel {
		if !sel[i].MatchCell(c) {
			return false
		}
	}
	return true
}

// String renders the selector as a cassette or case spells it:
// "axis: p" or "axis: [p1, p2]".
func (s Selector) String() string {
	if len(s.Patterns) == 1 {
		return s.Axis + ": " + s.Patterns[0].text
	}
	texts := make([]string, len(s.Patterns))
	for i, p := range s.Patterns {
		texts[i] = p.text
	}
	return s.Axis + ": [" + strings.Join(texts, ", ") + "]"
}
