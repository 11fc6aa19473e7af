package plan

import (
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// pinnedCase is a case as a user writes it; TestPinnedID fixes the ids of
// its runs.
const pinnedCase = `id: sql-engineering-raise
description: Chains a SQL lookup into arithmetic.
tags: [sql, calc]
system: You are a careful analyst.
prompt: What's the average salary in Engineering?
needs: [query_database, calculate]
avoid: [translate_text]
expect:
  calls:
    - tool: query_database
      args: {sql: {$regex: '(?i)engineering|department_id = 1'}}
  answer: {$regex: '88,?500'}
  when:
    - tools: [n8]
      max_calls: 4
golden:
  calls:
    - {tool: query_database, args: {sql: "SELECT AVG(salary) FROM employees WHERE department_id = 1"}}
  answer: The average is 88,500.
`

func parseCase(t *testing.T, src string) *schema.Case {
	t.Helper()
	cs, errs := schema.ParseCases("c.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("%v\n%s", errs, src)
	}
	return cs[0]
}

func pinnedConfig() *schema.Config {
	return &schema.Config{Name: "pin", Matrix: schema.Matrix{Tools: []schema.ToolSubset{{Name: "n8", Count: 8}}}.
		With(cell.Model, "qwen3:0.6b").
		With(cell.Seed, "1").
		With(cell.Temperature, "0.7").
		With(cell.Confirm, "deny").
		With(cell.Descriptions, "terse")}
}

// TestPinnedID pins a run id: a fixed case and cell give this id on every
// machine and in every version. If a change makes this test fail, every
// existing result directory loses its runs (resume reruns them, score
// cannot re-score them): change the id only on purpose, with a new run
// digest format (schema.runDigestFormat) and a note in the changelog.
func TestPinnedID(t *testing.T) {
	const want = "3a78b6bb3e288015"
	p, err := New(pinnedConfig(), []*schema.Case{parseCase(t, pinnedCase)})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.ID(0); got != want {
		t.Errorf("run id = %s, want %s", got, want)
	}
	// A hand-built case with the same run part has the same id.
	hand := &schema.Case{ID: "sql-engineering-raise", System: "You are a careful analyst.",
		Prompt: "What's the average salary in Engineering?", Needs: []string{"query_database", "calculate"}, Avoid: []string{"translate_text"}}
	ph, _ := New(pinnedConfig(), []*schema.Case{hand})
	if got := ph.ID(0); got != want {
		t.Errorf("hand-built case: run id = %s, want %s", got, want)
	}
}

// TestIDIgnoresScoringEdits: editing expect (and its when entries),
// golden, description or tags keeps every run id; editing the prompt
// changes them.
func TestIDIgnoresScoringEdits(t *testing.T) {
	cfg := testConfig()
	ids := func(src string) []string {
		p, err := New(cfg, []*schema.Case{parseCase(t, src)})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, p.Len())
		for i := range out {
			out[i] = p.ID(int64(i))
		}
		return out
	}
	base := ids(pinnedCase)
	for _, tc := range []struct {
		name, old, new string
		same           bool
	}{
		{"an answer matcher", `answer: {$regex: '88,?500'}`, `answer: {$contains: "88"}`, true},
		{"an argument matcher", `{$regex: '(?i)engineering|department_id = 1'}`, `{$any: true}`, true},
		{"a when entry", "max_calls: 4", "max_calls: 5", true},
		{"the golden", "The average is 88,500.", "It is 88,500.", true},
		{"the description", "Chains a SQL lookup", "Chains one SQL lookup", true},
		{"the tags", "tags: [sql, calc]", "tags: [sql]", true},
		{"the prompt", "in Engineering?", "in Sales?", false},
	} {
		src := strings.Replace(pinnedCase, tc.old, tc.new, 1)
		if src == pinnedCase {
			t.Fatalf("%s: %q not found", tc.name, tc.old)
		}
		got := ids(src)
		for i := range got {
			if (got[i] == base[i]) != tc.same {
				t.Fatalf("editing %s: run %d id %s -> %s, want same=%v", tc.name, i, base[i], got[i], tc.same)
			}
		}
	}
}

// TestOptionsAxisID: a matrix naming only the "default" options set has
// the runs and ids of one without the axis (the pinned id holds); another
// set gives its runs other ids, which --filter and the locator find.
func TestOptionsAxisID(t *testing.T) {
	t.Parallel()
	c := parseCase(t, pinnedCase)
	cfg := pinnedConfig()
	cfg.Matrix.Set(cell.Options, "default", "deep")
	p, err := New(cfg, []*schema.Case{c})
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != 2 {
		t.Fatalf("Len = %d, want 2", p.Len())
	}
	d, deep := p.Run(0), p.Run(1)
	if d.ID != "3a78b6bb3e288015" || d.Cell.Options != "" {
		t.Errorf("default run: id %s, options %q", d.ID, d.Cell.Options)
	}
	if deep.ID == d.ID || deep.Cell.Options != "deep" {
		t.Errorf("deep run: id %s, options %q", deep.ID, deep.Cell.Options)
	}
	fl, err := ParseFilter("options=deep")
	if err != nil {
		t.Fatal(err)
	}
	f, err := p.Filter([]Filter{fl})
	if err != nil || f.Len() != 1 || f.Run(0).ID != deep.ID {
		t.Fatalf("filter options=deep: %v", err)
	}
	loc := NewLocator(p)
	for i := range p.Len() {
		r := p.Run(i)
		rec := record.Record{ID: r.ID, Case: r.Case.ID, Cell: r.Cell}
		if j, ok := loc.Index(&rec); !ok || j != i {
			t.Errorf("locator: run %d found at %d %v", i, j, ok)
		}
	}
}
