package report

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// runTable is the report's one table of counts: every record is folded
// into it once, as a run of its case in its cell (with the case's tags),
// and the breakdowns by model, seed, cell, axis value, tag, BFCL
// category and tool subset are each a projection of it (project), as
// benchstat builds every comparison from one table. What a record
// carries beyond its outcome (tokens, latencies, reasons, examples,
// cost, throttling) is folded by the aggregator's own steps.
//
// A row is a few numbers: the distinct cells and tag lists are kept
// once each (interned, their strings copied, so that no row holds on to
// the line it was read from).
type runTable struct {
	rows   map[rowKey]int32 // → index in counts
	order  []rowKey         // in the order first seen, for first-seen orders
	counts []runCounts
	cells  []cell.Cell
	cellOf map[cell.Cell]int32
	tags   [][]string
	tagsOf map[string]int32 // by the tags joined with tagSep
	buf    []byte
	n      int64 // records folded
}

// rowKey is a row of the table: a case (with the tags its record
// carried) in a whole cell, seed and tool count included, by number.
type rowKey struct{ c, cell, tags int32 }

// runKey is a row as the projections read it.
type runKey struct {
	c    caseRef
	cell cell.Cell
	tags []string
}

const tagSep = "\x00"

// runCounts are a row's runs by outcome; lastScored is the index of the
// row's last record that was not an error (-1: none), for the
// projections that keep what the last such record said.
type runCounts struct {
	pass, fail, errs int32
	lastScored       int64
}

func (n *runCounts) add(outcome record.Outcome, i int64) {
	switch outcome {
	case record.Pass:
		n.pass++
	case record.Fail:
		n.fail++
	default:
		n.errs++
		return
	}
	n.lastScored = i
}

// add folds one record in, whose outcome the aggregator has checked.
func (t *runTable) add(rec *record.Record, c caseRef, outcome record.Outcome) {
	if t.rows == nil {
		t.rows, t.cellOf, t.tagsOf = map[rowKey]int32{}, map[cell.Cell]int32{}, map[string]int32{}
	}
	k := rowKey{c: c.n, cell: t.cell(rec.Cell), tags: t.tagList(rec.Tags)}
	i, ok := t.rows[k]
	if !ok {
		i = int32(len(t.counts))
		t.rows[k] = i
		t.order = append(t.order, k)
		t.counts = append(t.counts, runCounts{lastScored: -1})
	}
	t.counts[i].add(outcome, t.n)
	t.n++
}

// cell returns the number of cell c, interning a copy of it.
func (t *runTable) cell(c cell.Cell) int32 {
	i, ok := t.cellOf[c]
	if !ok {
		v := reflect.ValueOf(&c).Elem()
		for f := range v.NumField() {
			if fv := v.Field(f); fv.Kind() == reflect.String && fv.CanSet() {
				fv.SetString(strings.Clone(fv.String()))
			}
		}
		i = int32(len(t.cells))
		t.cells = append(t.cells, c)
		t.cellOf[c] = i
	}
	return i
}

// tagList returns the number of the tag list tags, interning a copy.
func (t *runTable) tagList(tags []string) int32 {
	t.buf = t.buf[:0]
	for i, tag := range tags {
		if i > 0 {
			t.buf = append(t.buf, tagSep...)
		}
		t.buf = append(t.buf, tag...)
	}
	if i, ok := t.tagsOf[string(t.buf)]; ok {
		return i
	}
	i := int32(len(t.tags))
	t.tags = append(t.tags, cloneStrings(tags))
	t.tagsOf[string(t.buf)] = i
	return i
}

// cloneStrings returns a copy of ss and of its strings, nil for none.
func cloneStrings(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.Clone(s)
	}
	return out
}

// row returns row k as the projections read it, with its counts.
func (a *aggregator) row(k rowKey) (runKey, runCounts) {
	t := &a.table
	return runKey{c: caseRef{&a.caseNums, k.c}, cell: t.cells[k.cell], tags: t.tags[k.tags]}, t.counts[t.rows[k]]
}

// caseID returns the case id of k.
func (k runKey) caseID() string { return k.c.nums.names[k.c.n] }

// project rebuilds every breakdown the table holds: the totals, each
// model's tally by seed and temperature, the cells (seeds pooled), each
// case's tally in all and per cell, each axis by model, the tool count
// of each case in each subset, the tags and the BFCL categories.
func (a *aggregator) project() {
	a.totals = pooled{}
	a.cells = map[CellKey]*cellAgg{}
	a.subsetTools = map[string]map[string]int{}
	a.toolsRanks = nil
	a.tags = tagAgg{}
	a.bfcl = bfclAgg{}
	for _, ax := range axisNames {
		a.axes[ax] = map[string]map[string]*pooled{}
	}
	for _, m := range a.models {
		m.tally, m.seeds, m.tempSeeds = pooled{}, map[int]*pooled{}, map[float64]map[int]*pooled{}
	}
	for _, cs := range a.cases {
		cs.tally = Tally{}
		for _, cc := range cs.cells {
			cc.Tally = Tally{}
		}
	}
	lastScored := map[[2]string]int64{} // (subset, case) → record index
	for _, rk := range a.table.order {
		k, n := a.row(rk)
		c, id := k.cell, k.caseID()
		a.totals.addCounts(k.c, n)
		a.projectModel(k, n)
		a.projectCell(k, n, id)
		cs := a.cases[id] // made by addCase
		cs.tally.addCounts(n)
		cs.cells[KeyOf(c)].Tally.addCounts(n)
		st := entry(a.subsetTools, c.Tools, func() map[string]int { return map[string]int{} })
		// An errored run may not have listed its tools: the count is
		// the last scored run's.
		if sk := [2]string{c.Tools, id}; n.lastScored >= 0 && n.lastScored >= lastScored[sk] {
			st[id] = c.ToolCount
			lastScored[sk] = n.lastScored
		}
		for _, ax := range axisNames {
			byModel := entry(a.axes[ax], c.Model, func() map[string]*pooled { return map[string]*pooled{} })
			pooledAt(byModel, c.Value(ax)).addCounts(k.c, n)
		}
		a.tags.add(c.Model, k.tags, k.c, n)
		a.bfcl.add(c.Model, k.tags, k.c, id, n)
	}
}

// projectModel counts row k for its model, by seed and by temperature
// and seed.
func (a *aggregator) projectModel(k runKey, n runCounts) {
	c := k.cell
	m := a.model(c.Model)
	m.tally.addCounts(k.c, n)
	pooledAt(m.seeds, c.Seed).addCounts(k.c, n)
	ts := entry(m.tempSeeds, c.Temperature, func() map[int]*pooled { return map[int]*pooled{} })
	pooledAt(ts, c.Seed).addCounts(k.c, n)
}

// projectCell counts row k in its cell (seeds pooled), the cell's
// cases in the order first seen.
func (a *aggregator) projectCell(k runKey, n runCounts, id string) {
	c := k.cell
	key := KeyOf(c)
	ca := entry(a.cells, key, func() *cellAgg {
		return &cellAgg{minTools: c.ToolCount, maxTools: c.ToolCount, seeds: map[int]bool{}, perCase: caseCounts{}}
	})
	ca.tally.addCounts(n)
	ca.minTools = min(ca.minTools, c.ToolCount)
	ca.maxTools = max(ca.maxTools, c.ToolCount)
	ca.seeds[c.Seed] = true
	pc := ca.perCase[id]
	if pc == nil {
		pc = &[2]int{}
		ca.perCase[id] = pc
		ca.caseOrder = append(ca.caseOrder, id)
	}
	pc[0] += int(n.pass)
	pc[1] += int(n.pass + n.fail)
}

// addCounts adds a row's runs to t.
func (t *Tally) addCounts(n runCounts) {
	t.Pass += int(n.pass)
	t.Fail += int(n.fail)
	t.Error += int(n.errs)
	t.Runs += int(n.pass + n.fail + n.errs)
}

// addCounts adds a row's runs, of case c, to p.
func (p *pooled) addCounts(c caseRef, n runCounts) {
	p.nums = c.nums
	if int(c.n) >= len(p.perCase) {
		p.perCase = append(p.perCase, make([][3]int32, int(c.n)+1-len(p.perCase))...)
	}
	p.Tally.addCounts(n)
	pc := &p.perCase[c.n]
	if pc[2] == 0 {
		p.cases++
	}
	pc[2] += n.pass + n.fail + n.errs
	pc[0] += n.pass
	pc[1] += n.pass + n.fail
}

// labelKey is a row of a breakdown by model and one label of a case
// (a tag, a BFCL category).
type labelKey struct{ model, label string }

// byLabel is a projection of the run table by model and label.
type byLabel map[labelKey]*pooled

// add counts a row's runs, of case c, under k.
func (b *byLabel) add(k labelKey, c caseRef, n runCounts) {
	if *b == nil {
		*b = byLabel{}
	}
	pooledAt(*b, k).addCounts(c, n)
}

// sorted returns b's keys by model, then label.
func (b byLabel) sorted() []labelKey {
	keys := slices.Collect(maps.Keys(b))
	slices.SortFunc(keys, func(x, y labelKey) int {
		return cmp.Or(strings.Compare(x.model, y.model), strings.Compare(x.label, y.label))
	})
	return keys
}

// uniqueTags returns tags without "" and without repeats, in order.
func uniqueTags(tags []string) []string {
	var out []string
	for i, tag := range tags {
		if tag != "" && !slices.Contains(tags[:i], tag) {
			out = append(out, tag)
		}
	}
	return out
}
