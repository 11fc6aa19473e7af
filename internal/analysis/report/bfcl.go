package report

// This file holds the report's BFCL section: for a suite imported from
// BFCL (internal/generate/bfcl tags each case "bfcl", its category and
// its language), the accuracy of each model per BFCL category, pooled
// over seeds with the interval clustered by case, so the numbers line up
// with the leaderboard's per-category columns; and BFCL's summary
// columns computed from them (bfclsummary.go).

import (
	"slices"
)

// BFCLRow is one model's accuracy on one BFCL category.
type BFCLRow struct {
	Model    string `json:"model"`
	Category string `json:"category"` // e.g. "simple_python", "live_multiple"
	Tally    Tally  `json:"tally"`
	// Entries counts the category's cases in the records, scored or not:
	// BFCL's entry count, the weight of a category in the summaries
	// weighted by entries.
	Entries int `json:"entries"`
	// Unpassable counts the category's cases no output can pass, as none
	// passes BFCL's checker (tagged bfcl-unpassable); they count as
	// failures, as in BFCL.
	Unpassable int `json:"unpassable,omitempty"`
}

// bfclTag and bfclUnpassableTag are the tags the BFCL import gives its
// cases (internal/generate/bfcl; this package does not import it).
const (
	bfclTag           = "bfcl"
	bfclUnpassableTag = "bfcl-unpassable"
)

// bfclCategory returns the BFCL category of a record's case: the tag
// after "bfcl", or "" for a case not imported from BFCL.
func bfclCategory(tags []string) string {
	if i := slices.Index(tags, bfclTag); i >= 0 && i+1 < len(tags) {
		return tags[i+1]
	}
	return ""
}

// bfclAgg folds the run table's rows into BFCLRows.
type bfclAgg struct {
	rows       byLabel
	unpassable map[labelKey]map[string]bool
}

// add counts a row of the run table (runs of case c, id, by model
// with tags) under its BFCL category, if it has one.
func (a *bfclAgg) add(model string, tags []string, c caseRef, id string, n runCounts) {
	cat := bfclCategory(tags)
	if cat == "" {
		return
	}
	k := labelKey{model, cat}
	a.rows.add(k, c, n)
	if slices.Contains(tags, bfclUnpassableTag) {
		if a.unpassable == nil {
			a.unpassable = map[labelKey]map[string]bool{}
		}
		if a.unpassable[k] == nil {
			a.unpassable[k] = map[string]bool{}
		}
		a.unpassable[k][id] = true
	}
}

// result returns one row per model and category, by model then category;
// nil for a suite without BFCL cases.
func (a *bfclAgg) result() []BFCLRow {
	var out []BFCLRow
	for _, k := range a.rows.sorted() {
		p := a.rows[k]
		out = append(out, BFCLRow{Model: k.model, Category: k.label, Tally: p.result(), Entries: p.cases, Unpassable: len(a.unpassable[k])})
	}
	return out
}

// bfclExplainer says what the BFCL table shows.
const bfclExplainer = "Accuracy per BFCL category (the share of scored runs that pass, pooled over seeds; the 95% interval is clustered by case). Cases BFCL's own checker can never pass are counted as failures, as BFCL counts them. BFCL's summary columns follow in the next table."

// bfclTable is the BFCL table of report.md and report.html; nil for a
// suite without BFCL cases.
func (s *Summary) bfclTable() *Table {
	if len(s.BFCL) == 0 {
		return nil
	}
	t := &Table{ID: "bfcl-table", Columns: []Column{col("model"), col("category"), numCol("cases"), numCol("runs"), rateCol("accuracy [95% CI]"), numCol("never passable")}}
	for _, r := range s.BFCL {
		t.Rows = append(t.Rows, []Cell{nameCell(r.Model), nameCell(r.Category), numCell(r.Tally.Cases), numCell(r.Tally.Scored()), rateCell(r.Tally), numCell(r.Unpassable)})
	}
	return t
}
