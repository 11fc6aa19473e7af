package preflight

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/schema"
)

const suite = `id: a
prompt: p
needs: [query_databse, calculate]
avoid: [translat_text]
expect:
  calls: [{tool: query_databse}]
  forbid: [update_salry]
  when:
    - confirm: deny
      forbid: [delete_employe]
golden: {calls: [{tool: query_databse}], answer: ok}
`

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(f, []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	cases, err := schema.LoadCases([]string{f})
	if err != nil {
		t.Fatal(err)
	}
	cs, errs := schema.ParseCassettes("c.yaml", []byte("case: a\nruns: [{turns: [{tool_calls: [{name: calculat}, {name: calculate}]}]}]\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r := Check(Input{
		Tools:        []string{"query_database", "calculate", "translate_text", "update_salary", "delete_employee"},
		Cases:        cases,
		Descriptions: map[string]toolset.Descriptions{"terse": {"calculate": "c", "qery_database": "q"}},
		Files:        map[string]string{"terse": "terse.yaml"},
		Cassettes:    cs,
	})
	rel := func(es schema.Errors) string {
		return strings.ReplaceAll(es.Error(), dir+string(filepath.Separator), "")
	}
	want := map[string]string{
		"errors": `a.yaml:3:9: needs[0]: the server offers no tool "query_databse" (did you mean "query_database"?)
a.yaml:6:12: expect.calls[0].tool: the server offers no tool "query_databse" (did you mean "query_database"?)`,
		"typos": `a.yaml:4:9: avoid[0]: the server offers no tool "translat_text" (did you mean "translate_text"?)
a.yaml:7:12: expect.forbid[0]: the server offers no tool "update_salry" (did you mean "update_salary"?)
a.yaml:10:16: expect.when[0].forbid[0]: the server offers no tool "delete_employe" (did you mean "delete_employee"?)
a.yaml:11:19: golden.calls[0].tool: the server offers no tool "query_databse" (did you mean "query_database"?)`,
		"warnings": `c.yaml:2:38: cassette for case "a" calls a tool the server does not offer: the server offers no tool "calculat" (did you mean "calculate"?)
terse.yaml: qery_database: description set terse: the server offers no tool "qery_database" (did you mean "query_database"?); the description is never shown`,
	}
	for what, got := range map[string]string{"errors": rel(r.Errors), "typos": rel(r.Typos), "warnings": rel(r.Warnings)} {
		if got != want[what] {
			t.Errorf("%s:\n got\n%s\nwant\n%s", what, got, want[what])
		}
	}
	inc := Check(Input{Tools: []string{"calculate"}, Config: &schema.Config{File: "c.cue", Matrix: schema.Matrix{Tools: []schema.ToolSubset{{Name: "few", Include: []string{"calculate", "calculat"}}}}}})
	if got, want := inc.Errors.Error(), `c.cue: matrix.tools[0].include[1]: the server offers no tool "calculat" (did you mean "calculate"?)`; got != want {
		t.Errorf("include:\n got %s\nwant %s", got, want)
	}
	clean := Check(Input{Tools: []string{"query_databse", "calculate", "translat_text", "update_salry", "delete_employe"}, Cases: cases})
	if len(clean.Errors)+len(clean.Typos)+len(clean.Warnings) != 0 {
		t.Errorf("clean: %+v", clean)
	}
}

func TestDigest(t *testing.T) {
	a := toolset.Tool{Name: "a", Description: "A", InputSchema: json.RawMessage(`{"type":"object"}`)}
	b := toolset.Tool{Name: "b", Description: "B", Gated: true}
	d := Digest([]toolset.Tool{a, b})
	if len(d) != 64 || Digest([]toolset.Tool{b, a}) != d {
		t.Errorf("digest depends on order or is malformed: %s", d)
	}
	changed := a
	changed.Description = "A!"
	ungated := b
	ungated.Gated = false
	for _, ts := range [][]toolset.Tool{{a}, {changed, b}, {a, ungated}, {a, b, {Name: "c"}}} {
		if Digest(ts) == d {
			t.Errorf("digest unchanged for %+v", ts)
		}
	}
	if Digest([]toolset.Tool{{Name: "x", InputSchema: json.RawMessage("{not json")}}) == "" {
		t.Error("no digest for a schema that is not JSON")
	}
}
