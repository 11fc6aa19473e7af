package engine

import (
	"strconv"

	"github.com/toolward/toolward/engine/plan"
	"github.com/toolward/toolward/engine/record"
)

// locator finds a record's run in a plan in O(1), without walking the
// plan: a run id is a hash and cannot be inverted, but a record also
// carries its case and cell, which give the run's position (one value
// index per axis, in the plan's mixed radix, outermost axis first). The
// id at that position must then equal the record's, so a record whose
// case or cell was edited, or that another plan wrote, is never taken for
// a run of this one. Building a locator costs the sum of the axis
// lengths, not their product.
type locator struct {
	p      *plan.Plan
	start  int64              // Run.Index of the plan's first run (its shard's start)
	names  []string           // axis names, outermost first
	pos    []map[string]int64 // per axis: value -> index
	stride []int64
}

func newLocator(p *plan.Plan) *locator {
	axes := p.Axes()
	l := &locator{p: p, names: make([]string, len(axes)), pos: make([]map[string]int64, len(axes)), stride: make([]int64, len(axes))}
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

// index returns the position in p (0 <= i < p.Len()) of rec's run, and
// false when p does not hold it.
func (l *locator) index(rec *record.Record) (int64, bool) {
	g := int64(0)
	for a, name := range l.names {
		d, ok := l.pos[a][axisValue(rec, name)]
		if !ok {
			return 0, false
		}
		g += d * l.stride[a]
	}
	i := g - l.start
	if i < 0 || i >= l.p.Len() || l.p.ID(i) != rec.ID {
		return 0, false
	}
	return i, true
}

// axisValue spells rec's value on the named axis as plan.Axes does; ""
// for an axis a record does not carry.
func axisValue(rec *record.Record, axis string) string {
	c := rec.Cell
	switch axis {
	case plan.AxisModel:
		return c.Model
	case plan.AxisCase:
		return rec.Case
	case plan.AxisSeed:
		return strconv.Itoa(c.Seed)
	case plan.AxisTemperature:
		return plan.FormatFloat(c.Temperature)
	case plan.AxisTools:
		return c.Tools
	case plan.AxisConfirm:
		return c.Confirm
	case plan.AxisDescriptions:
		return c.Descriptions
	}
	return ""
}
