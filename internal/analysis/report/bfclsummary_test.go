package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema/record"
)

// bfclRecs builds runs of model on BFCL cases: for each category, one
// outcome list per case (one outcome per seed).
func bfclRecs(model string, cats map[string][][]record.Outcome) []record.Record {
	var out []record.Record
	for _, cat := range sortedKeys(cats) {
		for i, seeds := range cats[cat] {
			for s, o := range seeds {
				kase := fmt.Sprintf("%s_%d", cat, i)
				out = append(out, record.Record{ID: fmt.Sprintf("%s/%s/%d", model, kase, s), Case: kase, Outcome: o,
					Tags: []string{"bfcl", cat, "python"}, Cell: record.Cell{Model: model, Seed: s + 1}})
			}
		}
	}
	return out
}

// TestBFCLSummaries checks BFCL's summary columns on a hand-computed
// example: the numbers, the weights, the MOVER interval from the
// categories' own intervals, and which summaries are partial.
func TestBFCLSummaries(t *testing.T) {
	t.Parallel()
	P, F := record.Pass, record.Fail
	recs := bfclRecs("m", map[string][][]record.Outcome{
		"simple_python":    {{P}, {P}},            // 1
		"simple_java":      {{F}},                 // 0
		"live_simple":      {{P, P}, {F, F}},      // 2/4 = .5, 2 entries
		"live_multiple":    {{P}, {P}, {F}},       // 2/3, 3 entries
		"irrelevance":      {{P}, {F}},            // .5
		"live_irrelevance": {{P}, {P}},            // 1
		"live_relevance":   {{P, F}, {P, P}, {F}}, // 3/5
	})
	recs = append(recs, bfclRecs("n", map[string][][]record.Outcome{
		"simple_python":     {{P}, {P}, {P}},      // 1
		"simple_javascript": {{F}},                // 0
		"multiple":          {{P}, {F}, {F}, {F}}, // .25
	})...)
	s := summarize(t, recs)

	cat, all := map[string]BFCLRow{}, map[string]BFCLRow{}
	for _, r := range s.BFCL {
		all[r.Model+" "+r.Category] = r
		if r.Model == "m" {
			cat[r.Category] = r
		}
	}
	if cat["live_simple"].Entries != 2 || cat["live_multiple"].Entries != 3 {
		t.Fatalf("entries: %+v", cat)
	}
	got := map[string]BFCLSummary{}
	var names []string
	for _, b := range s.BFCLSummaries {
		got[b.Model+" "+b.Name] = b
		names = append(names, b.Model+" "+b.Name)
	}
	wantNames := []string{"m non_live_simple", "m non_live", "m live", "m irrelevance", "m relevance", "m single_turn_overall",
		"n non_live_simple", "n non_live", "n single_turn_overall"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("summaries %v, want %v", names, wantNames)
	}

	// Rates and weights, by hand:
	//   Non-Live Simple = mean(simple_python 1, simple_java 0) = .5 (no javascript)
	//   Non-Live        = Simple alone (no multiple, parallel, parallel_multiple) = .5
	//   Live            = (2·.5 + 3·2/3) / 5 = .6, weights .4 and .6
	//   Irrelevance     = mean(.5, 1) = .75
	//   Relevance       = live_relevance = .6
	//   Single-turn     = (.5 + .6 + .75) / 3 = .61666…
	// and for n, where the nesting shows (not a mean of the three
	// categories, .41666…, nor one weighted by entries, .5):
	//   Non-Live        = mean(mean(1, 0), .25) = .375
	third := 1.0 / 3
	want := []struct {
		key     string
		rate    float64
		weights map[string]float64
		missing []string
	}{
		{"m non_live_simple", 0.5, map[string]float64{"simple_python": 0.5, "simple_java": 0.5}, []string{"simple_javascript"}},
		{"m non_live", 0.5, map[string]float64{"simple_python": 0.5, "simple_java": 0.5}, []string{"simple_javascript", "multiple", "parallel", "parallel_multiple"}},
		{"m live", 0.6, map[string]float64{"live_simple": 0.4, "live_multiple": 0.6}, []string{"live_parallel", "live_parallel_multiple"}},
		{"m irrelevance", 0.75, map[string]float64{"irrelevance": 0.5, "live_irrelevance": 0.5}, nil},
		{"m relevance", 0.6, map[string]float64{"live_relevance": 1}, nil},
		{"m single_turn_overall", 1.85 / 3, map[string]float64{
			"simple_python": third / 2, "simple_java": third / 2, "live_simple": 0.4 * third, "live_multiple": 0.6 * third,
			"irrelevance": third / 2, "live_irrelevance": third / 2,
		}, []string{"simple_javascript", "multiple", "parallel", "parallel_multiple", "live_parallel", "live_parallel_multiple"}},
		{"n non_live", 0.375, map[string]float64{"simple_python": 0.25, "simple_javascript": 0.25, "multiple": 0.5}, []string{"simple_java", "parallel", "parallel_multiple"}},
		{"n single_turn_overall", 0.375, map[string]float64{"simple_python": 0.25, "simple_javascript": 0.25, "multiple": 0.5},
			[]string{"simple_java", "parallel", "parallel_multiple", "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "irrelevance", "live_irrelevance"}},
	}
	for _, w := range want {
		b := got[w.key]
		if math.Abs(b.Rate-w.rate) > 1e-12 {
			t.Errorf("%s: rate %v, want %v", w.key, b.Rate, w.rate)
		}
		if !slices.Equal(b.Missing, w.missing) || b.Partial != (len(w.missing) > 0) {
			t.Errorf("%s: missing %v partial %v, want %v", w.key, b.Missing, b.Partial, w.missing)
		}
		if len(b.Parts) != len(w.weights) {
			t.Errorf("%s: parts %+v, want weights %v", w.key, b.Parts, w.weights)
		}
		// The interval: MOVER over the categories' own intervals, by hand.
		var down, up float64
		for _, p := range b.Parts {
			if math.Abs(p.Weight-w.weights[p.Category]) > 1e-12 {
				t.Errorf("%s: %s weight %v, want %v", w.key, p.Category, p.Weight, w.weights[p.Category])
			}
			c := all[b.Model+" "+p.Category].Tally
			down += math.Pow(p.Weight*(c.Rate-c.Lo), 2)
			up += math.Pow(p.Weight*(c.Hi-c.Rate), 2)
		}
		if math.Abs(b.Lo-(w.rate-math.Sqrt(down))) > 1e-12 || math.Abs(b.Hi-(w.rate+math.Sqrt(up))) > 1e-12 {
			t.Errorf("%s: interval [%v, %v], want [%v, %v]", w.key, b.Lo, b.Hi, w.rate-math.Sqrt(down), w.rate+math.Sqrt(up))
		}
		if !(b.Lo < b.Rate && b.Rate < b.Hi) || b.Interval != IntervalMover {
			t.Errorf("%s: %+v", w.key, b)
		}
	}
	// A summary of one category is that category's accuracy and interval.
	if r, c := got["m relevance"], cat["live_relevance"].Tally; math.Abs(r.Lo-c.Lo) > 1e-12 || math.Abs(r.Hi-c.Hi) > 1e-12 {
		t.Errorf("relevance [%v, %v], live_relevance [%v, %v]", r.Lo, r.Hi, c.Lo, c.Hi)
	}
	// Combining categories narrows the interval below the widest part's.
	if o, l := got["m single_turn_overall"], cat["live_multiple"].Tally; !(o.Hi-o.Lo < l.Hi-l.Lo) {
		t.Errorf("overall [%v, %v] not narrower than live_multiple [%v, %v]", o.Lo, o.Hi, l.Lo, l.Hi)
	}
	if o := got["m single_turn_overall"]; !slices.Equal(o.Omits, []string{"multi_turn (weight 30): not in these runs", "agentic (weight 40): never imported"}) || o.Label == "Overall Acc" {
		t.Errorf("the single-turn overall must say what it leaves out: %+v", o)
	}

	var js bytes.Buffer
	if err := s.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		BFCLSummaries []BFCLSummary `json:"bfcl_summaries"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.BFCLSummaries) != len(wantNames) {
		t.Errorf("summary.json bfcl_summaries: %v %d", err, len(back.BFCLSummaries))
	}
}

// TestBFCLMultiTurnSummaries: Multi Turn Overall Acc is the plain mean
// of the four multi-turn categories (not weighted by entries), and with
// multi-turn present the overall is Non-Live, Live, Irrelevance and Multi
// Turn 10:10:10:30, saying that only the agentic part is left out; the
// single-turn overall is then not shown.
func TestBFCLMultiTurnSummaries(t *testing.T) {
	t.Parallel()
	P, F := record.Pass, record.Fail
	recs := bfclRecs("m", map[string][][]record.Outcome{
		"simple_python":           {{P}, {F}},           // .5
		"irrelevance":             {{P}},                // 1
		"multi_turn_base":         {{P}, {P}, {F}, {F}}, // .5, 4 entries
		"multi_turn_miss_func":    {{P}},                // 1, 1 entry
		"multi_turn_miss_param":   {{F}, {F}},           // 0
		"multi_turn_long_context": {{P}, {F}},           // .5
	})
	s := summarize(t, recs)
	got := map[string]BFCLSummary{}
	for _, b := range s.BFCLSummaries {
		got[b.Name] = b
	}
	if _, ok := got["single_turn_overall"]; ok {
		t.Error("the single-turn overall shown beside multi-turn")
	}
	mt := got["multi_turn"]
	if mt.Label != "Multi Turn Overall Acc" || math.Abs(mt.Rate-0.5) > 1e-12 || mt.Partial || len(mt.Parts) != 4 || mt.Parts[0].Weight != 0.25 {
		t.Errorf("multi_turn %+v", mt)
	}
	// Non-Live .5 (simple alone), Irrelevance 1, Multi Turn .5; Live
	// absent: (10·.5 + 10·1 + 30·.5) / 50 = .6.
	o := got["overall_without_agentic"]
	if math.Abs(o.Rate-0.6) > 1e-12 || !slices.Equal(o.Omits, []string{"agentic (weight 40): never imported"}) || !o.Partial {
		t.Errorf("overall %+v", o)
	}
	if w := o.Parts[len(o.Parts)-1]; w.Category != "multi_turn_long_context" || math.Abs(w.Weight-0.15) > 1e-12 {
		t.Errorf("multi-turn part weight %+v, want 30/50/4", w)
	}
	var md bytes.Buffer
	if err := s.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Multi Turn Overall Acc | 50.0% [", "Overall without agentic, not Overall Acc (partial)", "left out: agentic (weight 40): never imported"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// TestBFCLSummaryReports: report.md and report.html show the summaries
// beside the category table, a partial one labelled with what it lacks,
// and escape what came from the runs.
func TestBFCLSummaryReports(t *testing.T) {
	t.Parallel()
	P, F := record.Pass, record.Fail
	recs := bfclRecs("<b>m</b>", map[string][][]record.Outcome{
		"live_simple":   {{P}, {F}},
		"live_multiple": {{P}, {P}, {F}},
	})
	s := summarize(t, recs)
	var md strings.Builder
	if err := s.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	m := md.String()
	i, j := strings.Index(m, "## BFCL categories"), strings.Index(m, "### BFCL summaries")
	if i < 0 || j < i {
		t.Fatalf("report.md lacks the BFCL summaries after the categories:\n%s", m)
	}
	for _, want := range []string{
		"| Live Acc (partial) | 60.0% [",
		"`live_simple` 40.0%, `live_multiple` 60.0%",
		"| `live_parallel`, `live_parallel_multiple` |",
		"Single-turn overall, not Overall Acc (partial)",
		"left out: multi_turn (weight 30): not in these runs; agentic (weight 40): never imported",
		"BFCL categories not in these runs: simple_python,",
	} {
		if !strings.Contains(m[j:], want) {
			t.Errorf("report.md lacks %q:\n%s", want, m[j:])
		}
	}
	if strings.Contains(m[j:], "| Irrelevance Detection") {
		t.Errorf("a summary with no category present is shown:\n%s", m[j:])
	}
	var html strings.Builder
	if err := s.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	h := html.String()
	if !strings.Contains(h, `id="bfcl-summary-table"`) || !strings.Contains(h, "Live Acc (partial)") {
		t.Error("report.html lacks the BFCL summary table")
	}
	if strings.Contains(h, "<b>m</b>") || !strings.Contains(h, "&lt;b&gt;m&lt;/b&gt;") {
		t.Error("report.html does not escape the model name")
	}
}
