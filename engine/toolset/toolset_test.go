package toolset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolward/toolward/schema"
)

func serverTools(n int) []Tool {
	ts := make([]Tool, n)
	for i := range ts {
		ts[i] = Tool{Name: fmt.Sprintf("tool_%02d", i), Description: "d"}
	}
	return ts
}

func names(ts []Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func TestCountIsPrefixStableAndKeepsNeeds(t *testing.T) {
	all := serverTools(40)
	needs := []string{"tool_03", "tool_17"}
	var prev []string
	for _, n := range []int{2, 8, 16, 32, 40, 100} {
		got, err := Select(all, "case-a", needs, nil, schema.ToolSubset{Name: fmt.Sprint("n", n), Count: n})
		if err != nil {
			t.Fatal(err)
		}
		want := min(max(n, 2), 40)
		if len(got) != want {
			t.Fatalf("n%d: %d tools, want %d", n, len(got), want)
		}
		ns := names(got)
		for _, need := range needs {
			if !slices.Contains(ns, need) {
				t.Fatalf("n%d lacks need %s", n, need)
			}
		}
		for _, p := range prev {
			if !slices.Contains(ns, p) {
				t.Fatalf("n%d lacks %s offered at the smaller count", n, p)
			}
		}
		prev = ns
	}
	// The draw depends on the case, not on anything else.
	a, _ := Select(all, "case-a", needs, nil, schema.ToolSubset{Name: "n8", Count: 8, Order: "given"})
	b, _ := Select(all, "case-b", needs, nil, schema.ToolSubset{Name: "n8", Count: 8, Order: "given"})
	if slices.Equal(names(a), names(b)) {
		t.Fatal("two cases drew identical distractors (possible, but not with this seed)")
	}
	a2, _ := Select(all, "case-a", needs, nil, schema.ToolSubset{Name: "n8", Count: 8, Order: "given"})
	if !slices.Equal(names(a), names(a2)) {
		t.Fatal("draw not deterministic")
	}
	if !slices.Equal(names(a)[:2], needs) {
		t.Fatalf("given order starts %v, want needs first", names(a))
	}
}

func TestShuffleDeterministic(t *testing.T) {
	all := serverTools(20)
	s := schema.ToolSubset{Name: "all"}
	x, _ := Select(all, "c", nil, nil, s)
	y, _ := Select(all, "c", nil, nil, s)
	if !slices.Equal(names(x), names(y)) {
		t.Fatal("shuffle differs between calls")
	}
	if slices.Equal(names(x), names(all)) {
		t.Fatal("all, shuffled, kept the server's order")
	}
	g, _ := Select(all, "c", nil, nil, schema.ToolSubset{Name: "all", Order: "given"})
	if !slices.Equal(names(g), names(all)) {
		t.Fatalf("given order = %v", names(g))
	}
}

func TestIncludeNeededAndMissing(t *testing.T) {
	all := serverTools(5)
	got, err := Select(all, "c", []string{"tool_01"}, nil, schema.ToolSubset{Name: "x", Include: []string{"tool_04", "tool_01"}, Order: "given"})
	if err != nil || !slices.Equal(names(got), []string{"tool_01", "tool_04"}) {
		t.Fatalf("include = %v, %v", names(got), err)
	}
	got, err = Select(all, "c", []string{"tool_02"}, nil, schema.ToolSubset{Name: "needed"})
	if err != nil || !slices.Equal(names(got), []string{"tool_02"}) {
		t.Fatalf("needed = %v, %v", names(got), err)
	}
	_, err = Select(all, "c", []string{"tool_02", "nope"}, nil, schema.ToolSubset{Name: "needed"})
	var me *MissingError
	if !errors.As(err, &me) || !slices.Equal(me.Missing, []string{"nope"}) {
		t.Fatalf("missing need: err = %v", err)
	}
	if _, err := Select(all, "c", nil, nil, schema.ToolSubset{Name: "weird"}); err == nil {
		t.Fatal("unknown subset kind: want error")
	}
}

func TestDescriptions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "terse.yaml")
	os.WriteFile(p, []byte("tool_01: Short.\n"), 0o644)
	d, err := LoadDescriptions(p)
	if err != nil {
		t.Fatal(err)
	}
	all := serverTools(3)
	got := d.Apply(all)
	if got[1].Description != "Short." || got[0].Description != "d" || all[1].Description != "d" {
		t.Fatalf("Apply: %+v (orig %+v)", got, all)
	}
	os.WriteFile(p, []byte("- a list\n"), 0o644)
	if _, err := LoadDescriptions(p); err == nil {
		t.Fatal("list: want error")
	}
	if _, err := LoadDescriptions(filepath.Join(dir, "none.yaml")); err == nil {
		t.Fatal("missing file: want error")
	}
}

// TestAvoidNeverDrawn: tools a case avoids are never offered as
// distractors, under count or all, whatever the count; the other tools
// are drawn as before.
func TestAvoidNeverDrawn(t *testing.T) {
	all := serverTools(12)
	needs := []string{"tool_00"}
	avoid := []string{"tool_05", "tool_07", "not_on_server"}
	for _, s := range []schema.ToolSubset{{Name: "n4", Count: 4}, {Name: "n11", Count: 11}, {Name: "n50", Count: 50}, {Name: "all"}} {
		got, err := Select(all, "c", needs, avoid, s)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		ns := names(got)
		if slices.Contains(ns, "tool_05") || slices.Contains(ns, "tool_07") {
			t.Errorf("%s offers an avoided tool: %v", s.Name, ns)
		}
		if !slices.Contains(ns, "tool_00") {
			t.Errorf("%s lacks the needed tool: %v", s.Name, ns)
		}
		if want := min(max(s.Count, 1), 10); s.Name != "all" && len(ns) != want {
			t.Errorf("%s offers %d tools, want %d", s.Name, len(ns), want)
		}
		if s.Name == "all" && len(ns) != 10 {
			t.Errorf("all offers %d tools, want the 10 not avoided", len(ns))
		}
	}
}
