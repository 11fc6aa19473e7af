package replay

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
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

// Selector constrains one axis to any of some values or globs, in the
// selector language of package schema/cell.
type Selector struct {
	Axis     string
	Patterns []string // as written

	compiled cell.Selector // Patterns, prepared by compile
}

// compile prepares the patterns; the parser (schema.ParseCassettes) has
// already rejected any that do not compile.
func (s *Selector) compile() {
	s.compiled, _ = cell.NewSelector(s.Axis, s.Patterns...)
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

// matches reports whether every selector accepts the cell, given as
// formatted values by axis name. Selectors are compiled by the parser.
func (r *Run) matches(values map[string]string) bool {
	for i := range r.When {
		if s := &r.When[i].compiled; !s.Match(values[s.Axis]) {
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
