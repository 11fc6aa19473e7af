package report

// This file holds BFCL's summary columns (the leaderboard's Non-Live,
// Live, irrelevance and relevance figures) computed per model from the
// per-category accuracies of bfcl.go, each with a 95% interval, and an
// overall of the single-turn categories with the leaderboard's weights,
// which is not the leaderboard's Overall.
//
// The definitions follow BFCL v4's generate_leaderboard_csv
// (bfcl_eval/eval_checker/eval_runner_helper.py in
// ShishirPatil/gorilla, berkeley-function-call-leaderboard), with its
// helpers calculate_unweighted_accuracy (a plain mean of the parts'
// accuracies), calculate_weighted_accuracy (a mean weighted by the
// parts' entry counts) and calculate_percentage_weighted_accuracy (fixed
// weights, normalised to sum to 1). A part's accuracy there is its
// correct entries over its entries; here it is the category's pass rate
// of bfcl.go (pooled over seeds, scored runs only).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolward/toolward/internal/analysis/stats"
)

// BFCLSummary is one of BFCL's summary columns for one model: a weighted
// sum of the model's per-category accuracies, with a 95% interval.
type BFCLSummary struct {
	Model string `json:"model"`
	// Name is the summary's stable id: non_live_simple, non_live, live,
	// irrelevance, relevance, single_turn_overall, multi_turn or
	// overall_without_agentic.
	Name string `json:"name"`
	// Label is the leaderboard column it corresponds to.
	Label string  `json:"label"`
	Rate  float64 `json:"rate"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	// Interval is how Lo and Hi were made: IntervalMover, the
	// categories' intervals (clustered by case) combined as independent
	// parts (stats.WeightedSum).
	Interval string `json:"interval"`
	// Parts are the categories the summary is computed from, in BFCL's
	// order, each with the weight it got (the weights sum to 1).
	Parts []BFCLPart `json:"parts"`
	// Missing are the categories of the summary's definition with no
	// scored run for this model; when there are any the summary is
	// partial: computed over the present ones, weights renormalised
	// (BFCL would show "N/A", and count the missing ones as 0 in its
	// overall figures).
	Missing []string `json:"missing,omitempty"`
	Partial bool     `json:"partial,omitempty"`
	// Omits names the leaderboard components the summary leaves out by
	// construction, with why (the single-turn overall has no multi-turn
	// categories, and no overall has the agentic ones: the import brings
	// none).
	Omits []string `json:"omits,omitempty"`
}

// BFCLPart is one category's share of a BFCLSummary.
type BFCLPart struct {
	Category string  `json:"category"`
	Weight   float64 `json:"weight"`
	Rate     float64 `json:"rate"`
	Entries  int     `json:"entries"`
}

// bfclCombine says how a bfclNode combines its parts.
type bfclCombine int

const (
	bfclMean      bfclCombine = iota // unweighted mean (calculate_unweighted_accuracy)
	bfclByEntries                    // weighted by entry count (calculate_weighted_accuracy)
	bfclFixed                        // fixed weights, normalised (calculate_percentage_weighted_accuracy)
)

// bfclNode is a BFCL aggregate as data: a category (a leaf), or a
// combination of parts.
type bfclNode struct {
	category string
	combine  bfclCombine
	weights  []float64 // bfclFixed: one per part
	parts    []*bfclNode
}

func bfclLeaf(cat string) *bfclNode { return &bfclNode{category: cat} }

func bfclOf(c bfclCombine, parts ...*bfclNode) *bfclNode {
	return &bfclNode{combine: c, parts: parts}
}

// BFCL v4's summaries (generate_leaderboard_csv).
var (
	// simple_ast_non_live: the mean of the three languages' simple.
	bfclNonLiveSimple = bfclOf(bfclMean, bfclLeaf("simple_python"), bfclLeaf("simple_java"), bfclLeaf("simple_javascript"))
	// summary_ast_non_live: the mean of simple (itself a mean), multiple,
	// parallel, parallel_multiple; irrelevance is not part of it.
	bfclNonLive = bfclOf(bfclMean, bfclNonLiveSimple, bfclLeaf("multiple"), bfclLeaf("parallel"), bfclLeaf("parallel_multiple"))
	// summary_ast_live: the live AST categories weighted by entry count.
	bfclLive = bfclOf(bfclByEntries, bfclLeaf("live_simple"), bfclLeaf("live_multiple"), bfclLeaf("live_parallel"), bfclLeaf("live_parallel_multiple"))
	// total_irrelevance: the mean of non-live and live irrelevance.
	bfclIrrelevance = bfclOf(bfclMean, bfclLeaf("irrelevance"), bfclLeaf("live_irrelevance"))
	// total_relevance: live_relevance alone.
	bfclRelevance = bfclLeaf("live_relevance")
	// total_overall_accuracy weighs non-live, live, irrelevance,
	// multi-turn and agentic 10:10:10:30:40; the single-turn part of it
	// is the first three, renormalised (a third each).
	bfclSingleTurn = &bfclNode{combine: bfclFixed, weights: []float64{10, 10, 10}, parts: []*bfclNode{bfclNonLive, bfclLive, bfclIrrelevance}}
	// multi_turn_overall_acc: the plain mean of the four multi-turn
	// categories.
	bfclMultiTurn = bfclOf(bfclMean, bfclLeaf("multi_turn_base"), bfclLeaf("multi_turn_miss_func"), bfclLeaf("multi_turn_miss_param"), bfclLeaf("multi_turn_long_context"))
	// The leaderboard's Overall without its agentic part (web search and
	// memory, weight 40): non-live, live, irrelevance and multi-turn
	// 10:10:10:30, renormalised.
	bfclNoAgentic = &bfclNode{combine: bfclFixed, weights: []float64{10, 10, 10, 30}, parts: []*bfclNode{bfclNonLive, bfclLive, bfclIrrelevance, bfclMultiTurn}}
)

// bfclSummaryDef is one summary column: its node and how it is named.
type bfclSummaryDef struct {
	name, label string
	node        *bfclNode
	omits       []string
}

// bfclSummaryDefs are the summaries, in report order.
var bfclSummaryDefs = []bfclSummaryDef{
	{"non_live_simple", "Non-Live Simple AST", bfclNonLiveSimple, nil},
	{"non_live", "Non-Live AST Acc", bfclNonLive, nil},
	{"live", "Live Acc", bfclLive, nil},
	{"irrelevance", "Irrelevance Detection", bfclIrrelevance, nil},
	{"relevance", "Relevance Detection", bfclRelevance, nil},
	{"single_turn_overall", "Single-turn overall, not Overall Acc", bfclSingleTurn, []string{"multi_turn (weight 30): not in these runs", "agentic (weight 40): never imported"}},
	{"multi_turn", "Multi Turn Overall Acc", bfclMultiTurn, nil},
	{"overall_without_agentic", "Overall without agentic, not Overall Acc", bfclNoAgentic, []string{"agentic (weight 40): never imported"}},
}

// bfclOverallFor reports whether overall summary name is the one to show
// for a model: the single-turn overall when the model has no multi-turn
// category, the overall without agentic when it has one (it then says
// that only the agentic part is missing). Other summaries always show.
func bfclOverallFor(name string, present map[string]int) bool {
	multi := false
	for _, c := range bfclMultiTurn.leaves() {
		if _, ok := present[c]; ok {
			multi = true
		}
	}
	switch name {
	case "single_turn_overall":
		return !multi
	case "overall_without_agentic":
		return multi
	}
	return true
}

// leaves returns the node's categories in definition order.
func (n *bfclNode) leaves() []string {
	if n.category != "" {
		return []string{n.category}
	}
	var out []string
	for _, p := range n.parts {
		out = append(out, p.leaves()...)
	}
	return out
}

// weigh returns the weight of each present category in n (summing to 1,
// empty when none is present) and the entries of the present ones;
// present holds each scored category's entry count. A part with no
// present category drops out and the others' weights are renormalised.
func (n *bfclNode) weigh(present map[string]int) (map[string]float64, int) {
	if n.category != "" {
		e, ok := present[n.category]
		if !ok {
			return nil, 0
		}
		return map[string]float64{n.category: 1}, e
	}
	type sub struct {
		w       map[string]float64
		entries int
		share   float64
	}
	var subs []sub
	var total float64
	entries := 0
	for i, p := range n.parts {
		w, e := p.weigh(present)
		if len(w) == 0 {
			continue
		}
		s := sub{w: w, entries: e, share: 1}
		switch n.combine {
		case bfclByEntries:
			s.share = float64(e)
		case bfclFixed:
			s.share = n.weights[i]
		}
		total += s.share
		entries += e
		subs = append(subs, s)
	}
	out := map[string]float64{}
	if total <= 0 {
		return out, 0
	}
	for _, s := range subs {
		for c, w := range s.w {
			out[c] += w * s.share / total
		}
	}
	return out, entries
}

// bfclSummaries computes every summary for each model of rows that has
// at least one of its categories scored.
func bfclSummaries(rows []BFCLRow) []BFCLSummary {
	byModel := map[string]map[string]BFCLRow{}
	var models []string
	for _, r := range rows {
		if r.Tally.Scored() == 0 {
			continue
		}
		if byModel[r.Model] == nil {
			byModel[r.Model] = map[string]BFCLRow{}
			models = append(models, r.Model)
		}
		byModel[r.Model][r.Category] = r
	}
	slices.Sort(models)
	var out []BFCLSummary
	for _, m := range models {
		cats := byModel[m]
		present := map[string]int{}
		for c, r := range cats {
			present[c] = r.Entries
		}
		for _, d := range bfclSummaryDefs {
			w, _ := d.node.weigh(present)
			if len(w) == 0 || !bfclOverallFor(d.name, present) {
				continue
			}
			s := BFCLSummary{Model: m, Name: d.name, Label: d.label, Interval: IntervalMover, Omits: d.omits}
			var parts []stats.Part
			for _, c := range d.node.leaves() {
				wc, ok := w[c]
				if !ok {
					s.Missing = append(s.Missing, c)
					continue
				}
				t := cats[c].Tally
				s.Parts = append(s.Parts, BFCLPart{Category: c, Weight: wc, Rate: t.Rate, Entries: cats[c].Entries})
				parts = append(parts, stats.Part{W: wc, Est: t.Rate, Lo: t.Lo, Hi: t.Hi})
			}
			s.Partial = len(s.Missing) > 0
			s.Rate, s.Lo, s.Hi = stats.WeightedSum(parts)
			s.Lo, s.Hi = max(s.Lo, 0), min(s.Hi, 1) // float rounding only
			out = append(out, s)
		}
	}
	return out
}

// bfclSummaryExplainer says what the BFCL summary table shows.
const bfclSummaryExplainer = "BFCL's summary columns, from the accuracies above with BFCL v4's formulas: Non-Live Simple AST is the mean of simple_python, simple_java and simple_javascript; " +
	"Non-Live AST Acc the mean of that, multiple, parallel and parallel_multiple; Live Acc the live AST categories weighted by entries; " +
	"Irrelevance Detection the mean of irrelevance and live_irrelevance; Relevance Detection is live_relevance. " +
	"A partial summary lacks the categories named and is computed over the present ones with their weights renormalised (the leaderboard shows N/A there). " +
	"Single-turn overall weighs Non-Live, Live and Irrelevance 10:10:10 as the leaderboard's Overall Acc does, but that Overall also weighs multi-turn (30) and agentic (40) categories: it is not the leaderboard's Overall. " +
	"Multi Turn Overall Acc is the mean of multi_turn_base, multi_turn_miss_func, multi_turn_miss_param and multi_turn_long_context; with any of them present, the overall is Non-Live, Live, Irrelevance and Multi Turn 10:10:10:30, still not the leaderboard's Overall, which also weighs the agentic categories (web search, memory: 40) the import does not bring. " +
	"The 95% intervals combine the categories' clustered intervals as independent parts (MOVER)."

// bfclSummaryTable is the BFCL summary table of report.md and
// report.html; nil without summaries.
func (s *Summary) bfclSummaryTable() *Table {
	if len(s.BFCLSummaries) == 0 {
		return nil
	}
	t := &Table{ID: "bfcl-summary-table", Columns: []Column{col("model"), col("summary"), numCol("accuracy [95% CI]"), col("from (weight)"), col("missing")}}
	for _, b := range s.BFCLSummaries {
		label := b.Label
		if b.Partial {
			label += " (partial)"
		}
		var from []Span
		for i, p := range b.Parts {
			if i > 0 {
				from = append(from, Span{", ", Plain})
			}
			from = append(from, Span{p.Category, Name}, Span{fmt.Sprintf(" %.1f%%", 100*p.Weight), Plain})
		}
		var missing []Span
		for i, c := range b.Missing {
			if i > 0 {
				missing = append(missing, Span{", ", Plain})
			}
			missing = append(missing, Span{c, Name})
		}
		if len(b.Omits) > 0 {
			if len(missing) > 0 {
				missing = append(missing, Span{"; ", Plain})
			}
			missing = append(missing, Span{"left out: " + strings.Join(b.Omits, "; "), Plain})
		}
		if len(missing) == 0 {
			missing = []Span{{"—", Plain}}
		}
		t.Rows = append(t.Rows, []Cell{nameCell(b.Model), textCell(label), textCell(fmt.Sprintf("%s [%.1f, %.1f]", pct(b.Rate), 100*b.Lo, 100*b.Hi)), spansCell(from...), spansCell(missing...)})
	}
	if n := s.bfclMissingNote(); n != "" {
		t.Notes = append(t.Notes, textCell(n))
	}
	return t
}

// bfclMissingNote is a sentence naming BFCL's single-turn categories that
// no model has a scored run of, or "" when every one is present.
func (s *Summary) bfclMissingNote() string {
	seen := map[string]bool{}
	for _, r := range s.BFCL {
		if r.Tally.Scored() > 0 {
			seen[r.Category] = true
		}
	}
	var miss []string
	for _, d := range bfclSummaryDefs {
		for _, c := range d.node.leaves() {
			if !seen[c] && !slices.Contains(miss, c) {
				miss = append(miss, c)
			}
		}
	}
	if len(miss) == 0 {
		return ""
	}
	return "BFCL categories not in these runs: " + strings.Join(miss, ", ") + "; the agentic categories (web search, memory) are never imported."
}
