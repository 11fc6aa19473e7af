package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

// Filter keeps the runs whose value on Key matches one of Globs.
//
// Keys are the axis names (AxisNames; a cell axis also by its short label,
// as reports spell it: "temp") and tag, which keeps the cases carrying a
// matching tag.
// Globs are patterns of the one selector language (package schema/cell),
// matched against the value as ids and cassettes spell it: * (any run of
// characters, '/' included), ? (one character), \ (the next character
// literally), and on seed and temperature numbers compare by value
// ("temperature=0.70" keeps 0.7). Filters on different keys AND
// together; several filters on the same key OR together (see Merge).
type Filter struct {
	Key   string
	Globs []string
}

// ParseFilter parses "key=glob", e.g. "case=sql-*", "model=qwen3:0.6b".
func ParseFilter(s string) (Filter, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" || v == "" {
		return Filter{}, fmt.Errorf("filter %q: want key=glob, e.g. case=sql-* or model=qwen3:0.6b", s)
	}
	for _, a := range cell.Axes {
		if k == a.Short {
			k = a.Name
		}
	}
	if k != "tag" && !slices.Contains(AxisNames, k) {
		keys := append(slices.Clone(AxisNames), "tag")
		if sug := matchers.Suggest(k, keys); sug != "" {
			return Filter{}, fmt.Errorf("filter %q: unknown key %q (did you mean %q? keys: %s)", s, k, sug, strings.Join(keys, ", "))
		}
		return Filter{}, fmt.Errorf("filter %q: unknown key %q (want one of %s)", s, k, strings.Join(keys, ", "))
	}
	f := Filter{Key: k, Globs: []string{v}}
	if _, err := f.selector(); err != nil {
		return Filter{}, fmt.Errorf("filter %q: %w", s, err)
	}
	return f, nil
}

// selector compiles the filter's globs.
func (f Filter) selector() (cell.Selector, error) { return cell.NewSelector(f.Key, f.Globs...) }

// String is the inverse of ParseFilter (alternatives joined by '|').
func (f Filter) String() string { return f.Key + "=" + strings.Join(f.Globs, "|") }

// Merge groups filters by key, so repeated keys OR together; the order of
// keys is that of first appearance.
func Merge(fs []Filter) []Filter {
	var out []Filter
	idx := map[string]int{}
	for _, f := range fs {
		if i, ok := idx[f.Key]; ok {
			out[i].Globs = append(out[i].Globs, f.Globs...)
			continue
		}
		idx[f.Key] = len(out)
		out = append(out, Filter{Key: f.Key, Globs: slices.Clone(f.Globs)})
	}
	return out
}

// Filter returns the plan narrowed by fs (a new plan, unsharded). Filtering
// narrows the axes, so the result is still a lazy product. A filter that
// leaves an axis empty is an error naming it, since an empty plan is
// almost always a typo.
func (p *Plan) Filter(fs []Filter) (*Plan, error) {
	q := *p
	q.vals = slices.Clone(p.vals)
	for _, f := range Merge(fs) {
		sel, err := f.selector()
		if err != nil {
			return nil, fmt.Errorf("filter %s: %w", f, err)
		}
		n, err := q.narrow(&sel)
		if err != nil {
			return nil, fmt.Errorf("filter %s: %w", f, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("filter %s matches nothing; the %s values are: %s", f, f.Key, p.values(f.Key))
		}
	}
	if err := q.encode(); err != nil {
		return nil, err
	}
	return &q, nil
}

// narrow keeps the values of the selector's axis that it matches (for
// "tag", the cases with a matching tag) and returns how many are left.
func (p *Plan) narrow(sel *cell.Selector) (int, error) {
	if sel.Axis == "tag" {
		p.cases = keep(p.cases, func(c *schema.Case) bool { return slices.ContainsFunc(c.Tags, sel.Match) })
		return len(p.cases), nil
	}
	a := slices.Index(AxisNames, sel.Axis)
	if a < 0 {
		return 0, fmt.Errorf("unknown key %q", sel.Axis)
	}
	vals := p.vals[a]
	mask := make([]bool, len(vals))
	n := 0
	for i, v := range vals {
		if mask[i] = sel.Match(v); mask[i] {
			n++
		}
	}
	switch a {
	case caseAxis:
		p.cases = keepMask(p.cases, mask)
	case toolsAxis:
		p.subsets = keepMask(p.subsets, mask)
	}
	p.vals[a] = keepMask(vals, mask) // encode spells the case and tools axes again
	return n, nil
}

// values lists the plan's values on a filter key, for error messages.
func (p *Plan) values(key string) string {
	var vs []string
	if key == "tag" {
		seen := map[string]bool{}
		for _, c := range p.cases {
			for _, t := range c.Tags {
				if !seen[t] {
					seen[t] = true
					vs = append(vs, t)
				}
			}
		}
	} else {
		vs = p.Values(key)
	}
	if len(vs) > 10 {
		return strings.Join(vs[:10], ", ") + fmt.Sprintf(", … (%d more)", len(vs)-10)
	}
	return strings.Join(vs, ", ")
}

// keepMask returns the elements of in whose mask entry is set.
func keepMask[T any](in []T, mask []bool) []T {
	var out []T
	for i, v := range in {
		if mask[i] {
			out = append(out, v)
		}
	}
	return out
}

func keep[T any](in []T, f func(T) bool) []T {
	var out []T
	for _, v := range in {
		if f(v) {
			out = append(out, v)
		}
	}
	return out
}
