package mcpserver

import (
	"strings"
	"testing"

	"github.com/toolward/toolward/mcpserver/calc"
)

// TestQuotingToolsBounded: the tools that quote their input back
// (calculate echoes the expression, grade_answer each sentence) refuse
// oversized input by schema, before any work.
func TestQuotingToolsBounded(t *testing.T) {
	c := connect(t, shared(t))
	many := make([]any, 21)
	for i := range many {
		many[i] = "source text number one"
	}
	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"calculate", map[string]any{"expression": "1" + strings.Repeat(" ", 1998) + "+1"}, `argument expression: maxLength`},
		{"grade_answer", map[string]any{"answer": strings.Repeat("a", 20001), "sources": []any{"x y"}}, `argument answer: maxLength`},
		{"grade_answer", map[string]any{"answer": "a", "sources": many}, "argument sources: maxItems: array length 21 is greater than 20"},
		{"grade_answer", map[string]any{"answer": "a", "sources": []any{strings.Repeat("b ", 32769)}}, `argument sources[]: maxLength`},
	} {
		res := call(t, c, tt.tool, tt.args)
		if !res.IsError || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s: isError %v %.200q, want %q", tt.tool, res.IsError, text(res), tt.want)
		}
	}
	// At the limits the calls are served.
	wantOK(t, call(t, c, "calculate", map[string]any{"expression": "1" + strings.Repeat(" ", 1997) + "+1"}))
	wantOK(t, call(t, c, "grade_answer", map[string]any{"answer": strings.Repeat("a ", 10000), "sources": many[:20]}))
}

// The schema's bound on calculate's expression is calc's own.
func TestCalculateMaxLengthMatchesCalc(t *testing.T) {
	defs, err := ParseToolDefs(toolsYAML, "tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		if d.Name != "calculate" {
			continue
		}
		p := d.InputSchema["properties"].(map[string]any)["expression"].(map[string]any)
		if m, ok := toFloat(p["maxLength"]); !ok || m != calc.MaxLength {
			t.Errorf("calculate expression maxLength %v, want calc.MaxLength %d", p["maxLength"], calc.MaxLength)
		}
		return
	}
	t.Fatal("no calculate in tools.yaml")
}
