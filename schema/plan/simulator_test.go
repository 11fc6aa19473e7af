package plan

import (
	"testing"

	"github.com/toolward/toolward/schema"
)

const simCase = `id: sim
prompt: Hi, the budget of the project?
needs: [query_database]
user: {instructions: Name the project only when asked.}
expect: {answer: {$contains: "450"}}
`

const scriptedCase = `id: scripted
prompt: What's the average salary in Engineering?
needs: [query_database]
user: {replies: ['And for Sales?']}
expect: {}
`

// TestSimulatorInRunIDs: the run ids of a case with a simulated user
// follow the simulator's model, temperature, stop marker and system
// prompt, and not its backend; other cases' ids ignore the simulator;
// scripted replies are part of the case's own digest. A plan rebuilt
// from config.json's digests (plan.RunDigest) gives the same ids.
func TestSimulatorInRunIDs(t *testing.T) {
	t.Parallel()
	sim, scripted, plain := parseCase(t, simCase), parseCase(t, scriptedCase), parseCase(t, pinnedCase)
	ids := func(s *schema.Simulator) [3]string {
		cfg := pinnedConfig()
		cfg.Simulator = s
		p, err := New(cfg, []*schema.Case{sim, scripted, plain})
		if err != nil {
			t.Fatal(err)
		}
		var out [3]string
		for i := range 3 {
			out[i] = p.Run(int64(i)).ID
		}
		// Rebuilt as results.Meta.Members does: id and digest only.
		var bare []*schema.Case
		for _, c := range []*schema.Case{sim, scripted, plain} {
			bare = append(bare, &schema.Case{ID: c.ID, RunDigest: RunDigest(cfg, c)})
		}
		q, err := New(cfg, bare)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if q.Run(int64(i)).ID != out[i] {
				t.Errorf("rebuilt plan: run %d id %s, want %s", i, q.Run(int64(i)).ID, out[i])
			}
		}
		return out
	}
	base := &schema.Simulator{Model: "u1", Temperature: 0, Stop: "###STOP###", System: "Play {instructions}"}
	b := ids(base)
	for _, tc := range []struct {
		name    string
		edit    func(s *schema.Simulator)
		changes bool
	}{
		{"model", func(s *schema.Simulator) { s.Model = "u2" }, true},
		{"temperature", func(s *schema.Simulator) { s.Temperature = 0.7 }, true},
		{"stop", func(s *schema.Simulator) { s.Stop = "<END>" }, true},
		{"system", func(s *schema.Simulator) { s.System = "Be the user: {instructions}" }, true},
		{"backend", func(s *schema.Simulator) { s.Backend = &schema.Backend{Replay: "x"} }, false},
	} {
		s := *base
		tc.edit(&s)
		got := ids(&s)
		if (got[0] != b[0]) != tc.changes || got[1] != b[1] || got[2] != b[2] {
			t.Errorf("%s: ids %v, base %v; simulated case should change: %v, others never", tc.name, got, b, tc.changes)
		}
	}
	other := parseCase(t, `id: scripted
prompt: What's the average salary in Engineering?
needs: [query_database]
user: {replies: ['And for Marketing?']}
expect: {}
`)
	if RunDigest(pinnedConfig(), other) == RunDigest(pinnedConfig(), scripted) {
		t.Error("another scripted reply keeps the run digest")
	}
}
