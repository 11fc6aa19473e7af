package report

import (
	"encoding/json"
	"maps"
	"slices"
	"sort"

	"github.com/toolward/toolward/internal/analysis/stats"
	"github.com/toolward/toolward/schema/results"
)

// Paired comparisons and the tool-count curve, both computed from the
// per-cell, per-case counts: a unit is one case in one cell (seeds
// pooled), and every estimate is clustered by case.

// maxComparedModels bounds the all-pairs model comparison (n models give
// n(n−1)/2 rows); with more models only the first ones are compared.
const maxComparedModels = 8

// axisValue returns the value of axis in k, as the reports spell it.
func axisValue(k CellKey, axis string) string { return k.Cell.Value(axis) }

// withAxis returns k with axis set to v (k unchanged when v does not
// parse).
func withAxis(k CellKey, axis, v string) CellKey {
	c, err := k.Cell.With(axis, v)
	if err != nil {
		return k
	}
	return KeyOf(c)
}

// compare pairs the cells with axis = va against the same cells with
// axis = vb (within model, unless model is ""), case by case, over the
// cases in keep (all when nil), and returns the paired difference va − vb.
func (a *aggregator) compare(axis, va, vb, model string, keep map[string]bool) Comparison {
	c := Comparison{Axis: axis, Model: model, A: va, B: vb}
	byCase := map[string]*stats.Cluster{}
	var sumA, sumB, units, within float64
	keys := slices.Collect(maps.Keys(a.cells))
	a.sortCells(keys)
	for _, k := range keys {
		if axisValue(k, axis) != va || (model != "" && k.Model != model) {
			continue
		}
		other := a.cells[withAxis(k, axis, vb)]
		if other == nil {
			continue
		}
		for _, kase := range a.cells[k].caseOrder {
			pa, pb := a.cells[k].perCase[kase], other.perCase[kase]
			if pb == nil || pa[1] == 0 || pb[1] == 0 || (keep != nil && !keep[kase]) {
				continue
			}
			ra, rb := float64(pa[0])/float64(pa[1]), float64(pb[0])/float64(pb[1])
			cl := entry(byCase, kase, zero[stats.Cluster])
			cl.Sum += ra - rb
			cl.N++
			within += runNoise(ra, pa[1]) + runNoise(rb, pb[1])
			sumA += ra
			sumB += rb
			units++
		}
	}
	var cs []stats.Cluster
	for _, kase := range sortedKeys(byCase) {
		cs = append(cs, *byCase[kase])
	}
	d := stats.PairedDiff(cs)
	c.Diff = newDifference(d)
	if units > 0 {
		c.RateA, c.RateB = sumA/units, sumB/units
		runs, cases := stats.MDDMoreRunsOrCases(d, within/(units*units))
		c.Diff.MDDTwiceRuns, c.Diff.MDDTwiceCases = finite(runs), finite(cases)
	}
	return c
}

// runNoise estimates the sampling variance of a pass rate r observed over
// m runs of one case, r(1−r)/(m−1) (unbiased); 0 when m < 2, where it
// cannot be told.
func runNoise(r float64, m int) float64 {
	if m < 2 {
		return 0
	}
	return r * (1 - r) / float64(m-1)
}

// comparisons lists the paired comparisons the reports show: every pair
// of models, and for every other axis that varies (seeds excepted: they
// are replicates, not treatments) each value against the first, pooled
// over models and, with several models, within each.
func (a *aggregator) comparisons(s *Summary) []Comparison {
	var out []Comparison
	var models []string
	for _, m := range s.Models {
		models = append(models, m.Model)
	}
	if len(models) > maxComparedModels {
		models = models[:maxComparedModels]
	}
	add := func(c Comparison) {
		if c.Diff.Units > 0 { // nothing paired: nothing to say
			out = append(out, c)
		}
	}
	for i := range models {
		for j := i + 1; j < len(models); j++ {
			add(a.compare("model", models[i], models[j], "", nil))
		}
	}
	for _, b := range s.Breakdowns {
		if b.Axis == "seed" {
			continue
		}
		for _, v := range b.Values[1:] {
			add(a.compare(b.Axis, v, b.Values[0], "", nil))
			if len(s.Models) < 2 {
				continue
			}
			for _, m := range s.Models {
				add(a.compare(b.Axis, v, b.Values[0], m.Model, nil))
			}
		}
	}
	return out
}

// headlineComparison compares the two models with the highest pass rates,
// the better first; nil with fewer than two models.
func (a *aggregator) headlineComparison(s *Summary) *Comparison {
	if len(s.Models) < 2 {
		return nil
	}
	ms := slices.Clone(s.Models)
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Rate > ms[j].Rate })
	c := a.compare("model", ms[0].Model, ms[1].Model, "", nil)
	return &c
}

// toolCurve builds each model's pass rate per tool subset over the cases
// that had scored runs in every subset the model ran, so that each point
// of a line holds the same cases and the line's shape is the tool
// count's, not the case mix's. Nil with fewer than two subsets.
func (a *aggregator) toolCurve() *ToolCurve {
	subsets := sortAxisValues("tools", slices.Collect(maps.Keys(a.subsetTools)), a)
	if len(subsets) < 2 {
		return nil
	}
	// model → subset → case counts, pooled over the other axes.
	per := map[string]map[string]caseCounts{}
	for k, ca := range a.cells {
		bySubset := entry(per, k.Model, func() map[string]caseCounts { return map[string]caseCounts{} })
		cc := entry(bySubset, k.Tools, func() caseCounts { return caseCounts{} })
		for kase, pc := range ca.perCase {
			sum := entry(cc, kase, zero[[2]int])
			sum[0] += pc[0]
			sum[1] += pc[1]
		}
	}
	tc := &ToolCurve{}
	union := map[string]bool{}
	for _, model := range sortedKeys(per) {
		common, all := commonCases(per[model])
		ser := Series{Model: model, Cases: len(common), Dropped: all - len(common)}
		maps.Copy(union, common)
		for i, name := range subsets {
			pt := Point{Subset: name}
			if cc := per[model][name]; cc != nil && len(common) > 0 {
				pt.Tally = restrictedTally(cc, common)
				if i > 0 && per[model][subsets[0]] != nil {
					d := a.compare("tools", name, subsets[0], model, common).Diff
					pt.VsFirst = &d
				}
			}
			ser.Points = append(ser.Points, pt)
		}
		tc.Series = append(tc.Series, ser)
	}
	for _, name := range subsets {
		tc.Subsets = append(tc.Subsets, subsetSpread(name, a.subsetTools[name], union))
	}
	return tc
}

// commonCases returns the cases with scored runs in every subset of
// bySubset, and how many cases ran in any.
func commonCases(bySubset map[string]caseCounts) (map[string]bool, int) {
	all := map[string]bool{}
	for _, cc := range bySubset {
		for kase, pc := range cc {
			if pc[1] > 0 {
				all[kase] = true
			}
		}
	}
	common := maps.Clone(all)
	for kase := range all {
		for _, cc := range bySubset {
			if pc := cc[kase]; pc == nil || pc[1] == 0 {
				delete(common, kase)
			}
		}
	}
	return common, len(all)
}

// subsetSpread summarises the tool counts a subset offered to the cases
// in keep: the median places the point, min and max its spread.
func subsetSpread(name string, counts map[string]int, keep map[string]bool) Subset {
	var xs []float64
	for kase, n := range counts {
		if keep[kase] {
			xs = append(xs, float64(n))
		}
	}
	sub := Subset{Name: name, Cases: len(xs)}
	if len(xs) == 0 {
		return sub
	}
	sort.Float64s(xs)
	sub.Typical = stats.Quantile(xs, 0.5)
	sub.Min, sub.Max = int(xs[0]), int(xs[len(xs)-1])
	return sub
}

// restrictedTally is the pooled tally of the cases in keep (scored runs
// only: errors are not in the per-case counts).
func restrictedTally(cc caseCounts, keep map[string]bool) Tally {
	sub := caseCounts{}
	var t Tally
	for kase, pc := range cc {
		if !keep[kase] {
			continue
		}
		sub[kase] = pc
		t.Pass += pc[0]
		t.Fail += pc[1] - pc[0]
		t.Runs += pc[1]
	}
	t.finishPooled(sub)
	return t
}

// configToolOrder returns the tool subsets of the config in dir's
// config.json, in the config's order; nil when there is none (readConfig
// reports a broken file).
func (c *configFile) toolOrder() []string {
	if c.err != nil {
		return nil
	}
	var m results.Meta
	if json.Unmarshal(c.b, &m) != nil || m.Config == nil {
		return nil
	}
	var names []string
	for _, t := range m.Config.Matrix.Tools {
		names = append(names, t.Name)
	}
	return names
}
