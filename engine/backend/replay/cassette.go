package replay

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

// run is one run of a loaded cassette, its selectors compiled.
type run struct {
	*schema.CassetteRun
	when []cell.Selector
}

// compile prepares the selectors of r; the parser (schema.ParseCassettes)
// has already rejected any pattern that does not compile.
func compile(r *schema.CassetteRun) run {
	out := run{CassetteRun: r, when: make([]cell.Selector, len(r.When))}
	for i, w := range r.When {
		out.when[i], _ = cell.NewSelector(w.Axis, w.Patterns...)
	}
	return out
}

// matches reports whether every selector accepts the cell, given as
// formatted values by axis name.
func (r *run) matches(values map[string]string) bool {
	for i := range r.when {
		if s := &r.when[i]; !s.Match(values[s.Axis]) {
			return false
		}
	}
	return true
}

// formatCell renders a cell for messages, axes in sorted order.
func formatCell(cell map[string]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(cell)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", k, cell[k])
	}
	b.WriteByte('}')
	return b.String()
}

func formatWhen(sel []schema.CassetteSelector) string {
	if len(sel) == 0 {
		return "{} (every cell)"
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range sel {
		if i > 0 {
			b.WriteString(", ")
		}
		if len(s.Patterns) == 1 {
			fmt.Fprintf(&b, "%s: %s", s.Axis, s.Patterns[0])
		} else {
			fmt.Fprintf(&b, "%s: [%s]", s.Axis, strings.Join(s.Patterns, ", "))
		}
	}
	b.WriteByte('}')
	return b.String()
}
