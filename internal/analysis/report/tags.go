package report

// This file holds the report's table by tag: each model's pass rate on
// the cases carrying each tag (sql, calc, a BFCL category…), pooled over
// seeds and cells with the interval clustered by case. A case counts
// under every tag it carries.

// TagRow is one model's pass rate on the cases of one tag.
type TagRow struct {
	Model string `json:"model"`
	Tag   string `json:"tag"`
	Tally Tally  `json:"tally"`
}

// tagAgg folds the run table's rows into TagRows.
type tagAgg struct{ rows byLabel }

// add counts a row of the run table (runs of case c by model with
// tags) under each of its tags; a tag listed twice counts once.
func (a *tagAgg) add(model string, tags []string, c caseRef, n runCounts) {
	for _, tag := range uniqueTags(tags) {
		a.rows.add(labelKey{model, tag}, c, n)
	}
}

// result returns one row per model and tag, by model then tag; nil when
// no case has a tag.
func (a *tagAgg) result() []TagRow {
	var out []TagRow
	for _, k := range a.rows.sorted() {
		out = append(out, TagRow{Model: k.model, Tag: k.label, Tally: a.rows[k].result()})
	}
	return out
}

// tagsExplainer says what the table by tag shows.
const tagsExplainer = "Pass rate per model on the cases carrying each tag, pooled over seeds and cells; the 95% interval is clustered by case. A case counts under every tag it carries, so the rows overlap."

// tagsTable is the table by tag of report.md and report.html; nil when
// no case has a tag.
func (s *Summary) tagsTable() *Table {
	if len(s.Tags) == 0 {
		return nil
	}
	t := &Table{ID: "tags-table", Columns: []Column{col("model"), col("tag"), numCol("cases"), numCol("runs"), rateCol("pass rate [95% CI]")}}
	for _, r := range s.Tags {
		t.Rows = append(t.Rows, []Cell{nameCell(r.Model), nameCell(r.Tag), numCell(r.Tally.Cases), numCell(r.Tally.Scored()), rateCell(r.Tally)})
	}
	return t
}
