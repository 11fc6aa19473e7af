package plan

import (
	"github.com/toolward/toolward/schema/record"
)

// Locator finds a record's run in a plan in O(1), without walking the
// plan: a run id is a hash and cannot be inverted, but a record also
// carries its case and cell, which give the run's position (one value
// index per axis, in the plan's mixed radix, outermost axis first). The
// id at that position must then equal the record's, so a record whose
// case or cell was edited, or that another plan wrote, is never taken for
// a run of this one. Building a locator costs the sum of the axis
// lengths, not their product.
type Locator struct {
	p      *Plan
	start  int64              // Run.Index of the plan's first run (its shard's start)
	names  []string           // axis names, outermost first
	pos    []map[string]int64 // per axis: value -> index
	stride []int64
}

// NewLocator returns a Locator for p.
func NewLocator(p *Plan) *Locator {
	axes := p.Axes()
	l := &Locator{p: p, names: make([]string, len(axes)), pos: make([]map[string]int64, len(axes)), stride: make([]int64, len(axes))}
	s := int64(1)
	for a := len(axes) - 1; a >= 0; a-- {
		vs := axes[a].Values
		l.names[a] = axes[a].Name
		l.pos[a] = make(map[string]int64, len(vs))
		for i := len(vs) - 1; i >= 0; i-- {
			l.pos[a][vs[i]] = int64(i) // the first of equal values wins; equal values give equal ids
		}
		l.stride[a] = s
		s *= int64(len(vs))
	}
	if p.Len() > 0 {
		l.start = p.Run(0).Index
	}
	return l
}

// Index returns the position in p (0 <= i < p.Len()) of rec's run, and
// false when p does not hold it: no run of p has rec's case and cell, or
// the one that has them has another id (its case's run digest changed).
func (l *Locator) Index(rec *record.Record) (int64, bool) {
	i, m := l.Find(rec)
	return i, m == Found
}

// Match says how a record relates to a plan.
type Match int

const (
	// Absent: no run of the plan has the record's case and cell.
	Absent Match = iota
	// Changed: the plan's run with the record's case and cell has another
	// id, so what that run shows the model is no longer what the record's
	// run was shown (the case's prompt, system, messages, needs, avoid or
	// user block, the simulator's settings, or the tool subset's
	// definition changed).
	Changed
	// Found: the plan holds the record's run, id and all.
	Found
)

// Find returns the position of rec's run in p and how rec matches it;
// the position is meaningful only for Found and Changed.
func (l *Locator) Find(rec *record.Record) (int64, Match) {
	g := int64(0)
	for a, name := range l.names {
		d, ok := l.pos[a][axisValue(rec, name)]
		if !ok {
			return 0, Absent
		}
		g += d * l.stride[a]
	}
	i := g - l.start
	switch {
	case i < 0 || i >= l.p.Len():
		return 0, Absent
	case l.p.ID(i) != rec.ID:
		return i, Changed
	}
	return i, Found
}

// axisValue spells rec's value on the named axis as Axes does (the
// cell's axes as package schema/cell formats them); "" for an axis a
// record does not carry.
func axisValue(rec *record.Record, axis string) string {
	if axis == AxisCase {
		return rec.Case
	}
	return rec.Cell.Value(axis)
}
