package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

func testCases(n int) []*schema.Case {
	cs := make([]*schema.Case, n)
	for i := range cs {
		cs[i] = &schema.Case{ID: fmt.Sprintf("case-%d", i), Tags: []string{fmt.Sprintf("t%d", i%2)}, Prompt: "p", RunDigest: fmt.Sprintf("digest-%d", i)}
	}
	return cs
}

func testConfig() *schema.Config {
	return &schema.Config{Name: "t", Matrix: schema.Matrix{Tools: []schema.ToolSubset{{Name: "needed"}, {Name: "n8", Count: 8}}}.
		With(cell.Model, "m1", "m2").
		With(cell.Seed, "1", "2", "3").
		With(cell.Temperature, "0", "0.7").
		With(cell.Confirm, "approve", "deny").
		With(cell.Descriptions, "default", "terse")}
}

func TestDecodeMatchesNaiveProduct(t *testing.T) {
	cfg := testConfig()
	cases := testCases(3)
	p, err := New(cfg, cases)
	if err != nil {
		t.Fatal(err)
	}
	want := 2 * 3 * 3 * 2 * 2 * 2 * 2
	if p.Len() != int64(want) {
		t.Fatalf("Len = %d, want %d", p.Len(), want)
	}
	var i int64
	ids := map[string]bool{}
	// The scheduling order, written out: run indexes and shards depend on
	// it, so it must not change.
	m := cfg.Matrix
	for _, model := range m.Values(cell.Model) {
		for _, c := range cases {
			for _, seed := range []int{1, 2, 3} {
				for _, temp := range []float64{0, 0.7} {
					for _, ts := range m.Tools {
						for _, conf := range []cell.ConfirmMode{"approve", "deny"} {
							for _, d := range m.Values(cell.Descriptions) {
								r := p.Run(i)
								if r.Index != i || r.Case != c || r.Cell.Model != model || r.Cell.Seed != seed ||
									r.Cell.Temperature != temp || r.Cell.Tools != ts.Name || r.Subset.Count != ts.Count ||
									r.Cell.Confirm != conf || r.Cell.Descriptions != d {
									t.Fatalf("Run(%d) = %+v, want %s %s %d %v %s %s %s", i, r, model, c.ID, seed, temp, ts.Name, conf, d)
								}
								if len(r.ID) != 16 || ids[r.ID] {
									t.Fatalf("Run(%d).ID = %q: bad or duplicate", i, r.ID)
								}
								if p.ID(i) != r.ID {
									t.Fatalf("ID(%d) != Run(%d).ID", i, i)
								}
								ids[r.ID] = true
								i++
							}
						}
					}
				}
			}
		}
	}
}

func TestIDsStableAndContentSensitive(t *testing.T) {
	cases := testCases(2)
	p1, _ := New(testConfig(), cases)
	p2, _ := New(testConfig(), testCases(2))
	for i := range p1.Len() {
		if p1.ID(i) != p2.ID(i) {
			t.Fatalf("ID(%d) differs between identical plans", i)
		}
	}
	// Same ids whatever the axis order in the config: identity is the
	// cell, not its position.
	cfg := testConfig()
	cfg.Matrix.Set(cell.Model, "m2", "m1")
	p3, _ := New(cfg, testCases(2))
	set := map[string]bool{}
	for i := range p1.Len() {
		set[p1.ID(i)] = true
	}
	for i := range p3.Len() {
		if !set[p3.ID(i)] {
			t.Fatalf("reordered models changed id of run %d", i)
		}
	}
	// Changing a case's content changes its runs' ids, and only those.
	changed := testCases(2)
	changed[1].RunDigest = "other"
	p4, _ := New(testConfig(), changed)
	for i := range p1.Len() {
		same := p1.ID(i) == p4.ID(i)
		if r := p1.Run(i); (r.Case.ID == "case-1") == same {
			t.Fatalf("run %d (%s): id same=%v after changing case-1", i, r.Case.ID, same)
		}
	}
}

func TestShardPartitions(t *testing.T) {
	p, _ := New(testConfig(), testCases(5))
	for _, n := range []int{1, 2, 3, 7, 1000} {
		seen := map[string]int{}
		for i := range n {
			s := p.Shard(Shard{Index: i, Count: n})
			for j := range s.Len() {
				r := s.Run(j)
				if r.ID != p.ID(r.Index) {
					t.Fatalf("shard %d/%d run %d: index %d id mismatch", i, n, j, r.Index)
				}
				seen[r.ID]++
			}
		}
		if int64(len(seen)) != p.Len() {
			t.Fatalf("n=%d: shards cover %d of %d runs", n, len(seen), p.Len())
		}
		for id, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: run %s in %d shards", n, id, c)
			}
		}
	}
	for _, bad := range []string{"4/4", "-1/2", "1", "a/b", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) succeeded", bad)
		}
	}
	if s, err := ParseShard("2/4"); err != nil || s != (Shard{2, 4}) {
		t.Errorf("ParseShard(2/4) = %v, %v", s, err)
	}
}

func TestFilter(t *testing.T) {
	p, _ := New(testConfig(), testCases(4))
	parse := func(ss ...string) []Filter {
		var fs []Filter
		for _, s := range ss {
			f, err := ParseFilter(s)
			if err != nil {
				t.Fatal(err)
			}
			fs = append(fs, f)
		}
		return fs
	}
	q, err := p.Filter(parse("case=case-[0-1]"))
	if err == nil {
		t.Fatalf("bracket is literal, want no match; got %d runs", q.Len())
	}
	q, err = p.Filter(parse("case=case-1", "case=case-3", "model=m2", "temperature=0.7", "tag=t1"))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1 * 2 * 3 * 1 * 2 * 2 * 2); q.Len() != want {
		t.Fatalf("filtered Len = %d, want %d", q.Len(), want)
	}
	all := map[string]bool{}
	for i := range p.Len() {
		all[p.ID(i)] = true
	}
	for i := range q.Len() {
		r := q.Run(i)
		if r.Cell.Model != "m2" || r.Cell.Temperature != 0.7 || (r.Case.ID != "case-1" && r.Case.ID != "case-3") {
			t.Fatalf("filtered run %+v does not match", r)
		}
		if !all[r.ID] {
			t.Fatalf("filtering changed run id %s", r.ID)
		}
	}
	q, err = p.Filter(parse("tag=t0"))
	if err != nil || q.Len() != p.Len()/2 {
		t.Fatalf("tag=t0: %v, %d runs", err, q.Len())
	}
	if _, err := p.Filter(parse("model=nope*")); err == nil || !strings.HasSuffix(err.Error(), "matches nothing; the model values are: m1, m2") {
		t.Fatalf("filter matching nothing: got %v, want an error listing the models", err)
	}
	// Short labels, as reports spell axes, are keys too; filtering the
	// tools axis keeps each run's subset with its name; p is unchanged.
	q, err = p.Filter(parse("temp=0.7", "desc=terse", "tools=n8"))
	if err != nil || q.Len() != p.Len()/8 {
		t.Fatalf("temp, desc and tools: %v, %d runs", err, q.Len())
	}
	for i := range q.Len() {
		if r := q.Run(i); r.Cell.Temperature != 0.7 || r.Cell.Descriptions != "terse" || r.Subset.Name != "n8" || r.Subset.Count != 8 || r.Cell.Tools != "n8" {
			t.Fatalf("filtered run %+v", r)
		}
	}
	if p.Len() != 2*4*3*2*2*2*2 || !slices.Equal(p.Values(cell.Tools), []string{"needed", "n8"}) || !slices.Equal(p.Values(AxisCase), []string{"case-0", "case-1", "case-2", "case-3"}) {
		t.Fatalf("filtering changed the plan: %d runs, %v", p.Len(), p.Axes())
	}
	for _, bad := range []string{"model", "=x", "colour=red", "seed=one", `model=a\`} {
		if _, err := ParseFilter(bad); err == nil {
			t.Errorf("ParseFilter(%q) succeeded", bad)
		}
	}
}

func TestErrors(t *testing.T) {
	cfg := testConfig()
	if _, err := New(cfg, nil); err == nil {
		t.Error("no cases: want error")
	}
	dup := testCases(2)
	dup[1].ID = dup[0].ID
	if _, err := New(cfg, dup); err == nil {
		t.Error("duplicate case id: want error")
	}
	cfg.Matrix.Set(cell.Model)
	if _, err := New(cfg, testCases(1)); err == nil {
		t.Error("no models: want error")
	}
}

// millionConfig is a 1,000,000-run matrix: 10 models x 100 cases x 10
// seeds x 10 temperatures x 10 subsets.
func millionConfig() (*schema.Config, []*schema.Case) {
	cfg := testConfig()
	models, seeds, temps := make([]string, 10), make([]string, 10), make([]string, 10)
	cfg.Matrix.Tools = make([]schema.ToolSubset, 10)
	for i := range 10 {
		models[i] = fmt.Sprintf("m%d", i)
		seeds[i] = fmt.Sprint(i)
		temps[i] = cell.FormatFloat(float64(i) / 10)
		cfg.Matrix.Tools[i] = schema.ToolSubset{Name: fmt.Sprintf("n%d", i), Count: i}
	}
	cfg.Matrix.Set(cell.Model, models...)
	cfg.Matrix.Set(cell.Seed, seeds...)
	cfg.Matrix.Set(cell.Temperature, temps...)
	cfg.Matrix.Set(cell.Confirm, "auto")
	cfg.Matrix.Set(cell.Descriptions, "default")
	return cfg, testCases(100)
}

// TestMillionRunsBoundedMemory checks that planning does not depend on the
// number of runs: building a 1e6-run plan allocates no more than a plan of
// the same axes with one model, and decoding a run allocates only its id.
func TestMillionRunsBoundedMemory(t *testing.T) {
	cfg, cases := millionConfig()
	var p *Plan
	big := testing.AllocsPerRun(5, func() { p, _ = New(cfg, cases) })
	if p.Len() != 1_000_000 {
		t.Fatalf("Len = %d", p.Len())
	}
	small := *cfg
	small.Matrix.Set(cell.Model, cfg.Matrix.Values(cell.Model)[:1]...)
	smallAllocs := testing.AllocsPerRun(5, func() { New(&small, cases) })
	// The big plan has 9 more axis values and 900,000 more runs: a few
	// allocations per axis value are expected (and vary a little with map
	// growth), one per run would be hundreds of thousands.
	if big > smallAllocs+200 {
		t.Fatalf("New allocs: %v for 1e6 runs vs %v for 1e5: grows with runs", big, smallAllocs)
	}
	i := int64(0)
	per := testing.AllocsPerRun(1000, func() { _ = p.Run(i % p.Len()); i += 999_983 })
	if per > 1 {
		t.Fatalf("Run allocs = %v, want <= 1 (the id)", per)
	}
	last := p.Run(p.Len() - 1)
	if last.Cell.Model != "m9" || last.Case.ID != "case-99" {
		t.Fatalf("last run = %+v", last)
	}
}

func BenchmarkPlanID(b *testing.B) {
	cfg, cases := millionConfig()
	p, _ := New(cfg, cases)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = p.ID(int64(i) % p.Len())
	}
}
