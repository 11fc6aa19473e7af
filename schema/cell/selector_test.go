package cell_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/replay"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/plan"
)

// One selector language, three front ends: `--filter`, a cassette run's
// `when` and a case's `when` select the same cells for the same pattern.
// Before package cell, --filter had no \ escapes, matched ? to a byte and
// compared numbers as text (temperature=0.70 missed 0.7), a case's when
// took values exactly (no globs), and a cassette compared any
// number-looking value by value, model names included.

var base = cell.Cell{Model: "qwen3:0.6b", Seed: 1, Temperature: 0.7, Tools: "n16", Confirm: "deny", Descriptions: "terse"}

var selectorTests = []struct {
	axis, pattern string
	cell          cell.Cell // base when zero
	want          bool
}{
	{axis: "model", pattern: "qwen3:0.6b", want: true},
	{axis: "model", pattern: "qwen3:*", want: true},
	{axis: "model", pattern: "qwen?:0.6b", want: true},
	{axis: "model", pattern: "llama*", want: false},
	{axis: "model", pattern: `a\*b`, cell: with(func(c *cell.Cell) { c.Model = "a*b" }), want: true},
	{axis: "model", pattern: `a\*b`, cell: with(func(c *cell.Cell) { c.Model = "axb" }), want: false},
	{axis: "model", pattern: "?", cell: with(func(c *cell.Cell) { c.Model = "é" }), want: true},
	{axis: "model", pattern: "1", cell: with(func(c *cell.Cell) { c.Model = "1.0" }), want: false}, // not a numeric axis
	{axis: "temperature", pattern: "0.7", want: true},
	{axis: "temperature", pattern: "0.70", want: true},
	{axis: "temperature", pattern: "7e-1", want: true},
	{axis: "temperature", pattern: "0.*", want: true},
	{axis: "temperature", pattern: "0.8", want: false},
	{axis: "seed", pattern: "1", want: true},
	{axis: "seed", pattern: "01", want: true},
	{axis: "seed", pattern: "2", want: false},
	{axis: "tools", pattern: "n1?", want: true},
	{axis: "tools", pattern: "n8", want: false},
	{axis: "confirm", pattern: "deny", want: true},
	{axis: "confirm", pattern: "approve", want: false},
	{axis: "confirm", pattern: "d*", want: true},
	{axis: "descriptions", pattern: "ters?", want: true},
	{axis: "descriptions", pattern: "default", want: false},
}

func with(f func(*cell.Cell)) cell.Cell {
	c := base
	f(&c)
	return c
}

func TestSelectorFrontEndsAgree(t *testing.T) {
	for _, tt := range selectorTests {
		c := tt.cell
		if c == (cell.Cell{}) {
			c = base
		}
		name := tt.axis + "=" + tt.pattern + " on " + c.Value(tt.axis)
		t.Run(name, func(t *testing.T) {
			sel, err := cell.NewSelector(tt.axis, tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.MatchCell(c); got != tt.want {
				t.Errorf("cell.Selector: %v, want %v", got, tt.want)
			}
			if got := viaFilter(t, tt.axis, tt.pattern, c); got != tt.want {
				t.Errorf("--filter: %v, want %v", got, tt.want)
			}
			if got := viaCassette(t, tt.axis, tt.pattern, c); got != tt.want {
				t.Errorf("cassette when: %v, want %v", got, tt.want)
			}
			if cell.Lookup(tt.axis).Scoring {
				if got := viaCaseWhen(t, tt.axis, tt.pattern, c); got != tt.want {
					t.Errorf("case when: %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// viaFilter reports whether `--filter axis=pattern` keeps the one run of
// a plan whose only cell is c.
func viaFilter(t *testing.T, axis, pattern string, c cell.Cell) bool {
	t.Helper()
	cfg := &schema.Config{Matrix: schema.Matrix{}}
	for _, a := range cell.Axes {
		cfg.Matrix.Set(a.Name, a.Format(c))
	}
	p, err := plan.New(cfg, []*schema.Case{{ID: "c", Prompt: "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := plan.ParseFilter(axis + "=" + pattern)
	if err != nil {
		t.Fatal(err)
	}
	q, err := p.Filter([]plan.Filter{f})
	if err != nil {
		if !strings.Contains(err.Error(), "matches nothing") {
			t.Fatal(err)
		}
		return false
	}
	return q.Len() == 1
}

// viaCassette reports whether a cassette run with `when: {axis: pattern}`
// answers for cell c (a catch-all run after it answers otherwise).
func viaCassette(t *testing.T, axis, pattern string, c cell.Cell) bool {
	t.Helper()
	dir := t.TempDir()
	quoted := "'" + strings.ReplaceAll(pattern, "'", "''") + "'"
	doc := "case: c\nruns:\n  - when: {" + axis + ": " + quoted + "}\n    turns: [{content: hit}]\n  - turns: [{content: miss}]\n"
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := replay.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.Chat(context.Background(), &backend.Request{Key: backend.Key{Case: "c", Cell: c.Values()}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Message.Content == "hit"
}

// viaCaseWhen reports whether a case's `when: [{axis: pattern, …}]`
// entry applies in cell c.
func viaCaseWhen(t *testing.T, axis, pattern string, c cell.Cell) bool {
	t.Helper()
	exp, err := matchers.CompileExpect(map[string]any{
		"answer": "base",
		"when":   []any{map[string]any{axis: pattern, "answer": "override"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return exp.Score(matchers.Trace{Answer: "override"}, c).Pass
}

// A YAML number in a case's when selects by value, as the text does.
func TestCaseWhenNumber(t *testing.T) {
	for _, v := range []any{0.7, 0.70, []any{0.2, 0.7}} {
		exp, err := matchers.CompileExpect(map[string]any{
			"answer": "base",
			"when":   []any{map[string]any{"temperature": v, "answer": "override"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !exp.Score(matchers.Trace{Answer: "override"}, base).Pass {
			t.Errorf("temperature: %v does not select 0.7", v)
		}
	}
}
