package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema/record"
)

// TestTagsTable: each model's pass rate per tag, a case counted under
// every tag it carries (once per tag however often it is listed), with
// the case-clustered interval, in summary.json, report.md and
// report.html; no table for a suite without tags.
func TestTagsTable(t *testing.T) {
	t.Parallel()
	rec := func(id, kase, model string, outcome record.Outcome, seed int, tags ...string) record.Record {
		return record.Record{ID: id, Case: kase, Outcome: outcome, Tags: tags, Cell: record.Cell{Model: model, Seed: seed}}
	}
	recs := []record.Record{
		rec("1", "sql-a", "m", record.Pass, 1, "sql", "multi-step"),
		rec("2", "sql-a", "m", record.Pass, 2, "sql", "multi-step"),
		rec("3", "sql-b", "m", record.Fail, 1, "sql", "sql"),
		rec("4", "calc-a", "m", record.Pass, 1, "calc"),
		rec("5", "calc-a", "n", record.Fail, 1, "calc"),
		rec("6", "calc-b", "n", record.Error, 1, "calc"),
		rec("7", "plain", "n", record.Pass, 1),
	}
	s := summarize(t, recs)
	got := map[string]Tally{}
	for _, r := range s.Tags {
		got[r.Model+"/"+r.Tag] = r.Tally
	}
	if len(s.Tags) != 4 {
		t.Fatalf("tag rows %+v, want m/calc m/multi-step m/sql n/calc", s.Tags)
	}
	if sql := got["m/sql"]; sql.Pass != 2 || sql.Fail != 1 || sql.Cases != 2 || !(sql.Lo < sql.Rate && sql.Rate < sql.Hi) {
		t.Errorf("m/sql %+v: want 2 pass, 1 fail over 2 cases (sql-b's tag listed twice counts once)", sql)
	}
	if c := got["n/calc"]; c.Pass != 0 || c.Fail != 1 || c.Error != 1 {
		t.Errorf("n/calc %+v: an error is not scored", c)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"tags":[{"model":"m","tag":"calc"`) {
		t.Errorf("summary.json lacks the tags rows: %s", b)
	}
	var md strings.Builder
	if err := s.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## By tag") || !strings.Contains(md.String(), "`multi-step`") {
		t.Errorf("report.md lacks the table by tag:\n%s", md.String())
	}
	var html strings.Builder
	if err := s.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), `id="tags-table"`) || !strings.Contains(html.String(), `href="#tags"`) {
		t.Error("report.html lacks the table by tag or its link")
	}
	if s := summarize(t, recs[6:]); s.Tags != nil {
		t.Errorf("a suite without tags: %+v", s.Tags)
	}
}
