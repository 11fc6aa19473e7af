package diff

import (
	"slices"
	"testing"

	"github.com/toolward/toolward/schema/cell"
)

// TestOrderFollowsAxes: listed runs order by every axis of the table, the
// seed last (the report's cell, then the repetition).
func TestOrderFollowsAxes(t *testing.T) {
	t.Parallel()
	names := cell.Names()
	if len(order) != len(names) || order[len(order)-1] != cell.Seed {
		t.Fatalf("order %v, want the axes %v with the seed last", order, names)
	}
	if !slices.Equal(slices.Sorted(slices.Values(order)), slices.Sorted(slices.Values(names))) {
		t.Errorf("order %v is not a permutation of %v", order, names)
	}
	for i := 1; i < len(order)-1; i++ {
		if slices.Index(names, order[i-1]) > slices.Index(names, order[i]) {
			t.Errorf("order %v: %s before %s, against the table", order, order[i-1], order[i])
		}
	}
}
