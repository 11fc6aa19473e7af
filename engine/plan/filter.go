package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/toolward/toolward/schema"
)

// Filter keeps the runs whose value on Key matches one of Globs.
//
// Keys are the axis names (model, case, seed, temperature, tools, confirm,
// descriptions) and tag, which keeps the cases carrying a matching tag.
// Globs use * (any run of characters, '/' included) and ? (one character).
// Filters on different keys AND together; several filters on the same key
// OR together (see Merge).
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
	if k == "temp" {
		k = AxisTemperature
	}
	if k != "tag" && !slices.Contains(AxisNames, k) {
		return Filter{}, fmt.Errorf("filter %q: unknown key %q (want one of %s, tag)", s, k, strings.Join(AxisNames, ", "))
	}
	return Filter{Key: k, Globs: []string{v}}, nil
}

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
	for _, f := range Merge(fs) {
		match := func(s string) bool {
			for _, g := range f.Globs {
				if Glob(g, s) {
					return true
				}
			}
			return false
		}
		var n int
		switch f.Key {
		case AxisModel:
			q.models = keep(q.models, match)
			n = len(q.models)
		case AxisCase:
			q.cases = keep(q.cases, func(c *schema.Case) bool { return match(c.ID) })
			n = len(q.cases)
		case "tag":
			q.cases = keep(q.cases, func(c *schema.Case) bool { return slices.ContainsFunc(c.Tags, match) })
			n = len(q.cases)
		case AxisSeed:
			q.seeds = keep(q.seeds, func(v int) bool { return match(strconv.Itoa(v)) })
			n = len(q.seeds)
		case AxisTemperature:
			q.temps = keep(q.temps, func(v float64) bool { return match(FormatFloat(v)) })
			n = len(q.temps)
		case AxisTools:
			q.tools = keep(q.tools, func(v schema.ToolSubset) bool { return match(v.Name) })
			n = len(q.tools)
		case AxisConfirm:
			q.confirm = keep(q.confirm, match)
			n = len(q.confirm)
		case AxisDescriptions:
			q.descs = keep(q.descs, match)
			n = len(q.descs)
		default:
			return nil, fmt.Errorf("filter %s: unknown key %q", f, f.Key)
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
		for _, a := range p.Axes() {
			if a.Name == key {
				vs = a.Values
			}
		}
	}
	if len(vs) > 10 {
		return strings.Join(vs[:10], ", ") + fmt.Sprintf(", … (%d more)", len(vs)-10)
	}
	return strings.Join(vs, ", ")
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

// Glob reports whether s matches pattern, where * matches any run of
// characters and ? any one character; everything else is literal.
func Glob(pattern, s string) bool {
	// Iterative matcher with single-star backtracking.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
