package replay

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
)

// demoFailures are the demo cassettes' deliberate failures: case id ->
// seeds that fail (nil: every seed). Keep in step with
// fixtures/cassettes/demo/README.md.
var demoFailures = map[string][]int{
	"calc-power-of-two":      nil,
	"sql-largest-department": {2},
	"irr-translate":          nil,
}

// gated are the bundled server's tools a confirm gate applies to.
var gated = map[string]bool{"update_salary": true, "delete_employee": true, "create_ticket": true, "send_email": true}

// TestDemoCassettes replays every demo cassette for the cells of the demo
// config (seeds 1 and 2, confirm approve and deny), scores the replies
// with the case's own expectations, and checks each passes or fails as
// intended. Tool results do not matter to the scorer, so none are needed.
func TestDemoCassettes(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	if _, err := os.Stat(filepath.Join(root, "cases")); err != nil {
		t.Skip("no cases directory")
	}
	r, err := New(filepath.Join(root, "fixtures", "cassettes", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := schema.LoadCases([]string{filepath.Join(root, "cases", "**", "*.yaml")})
	if err != nil {
		t.Fatalf("loading cases: %v", err)
	}
	byID := map[string]*schema.Case{}
	for _, c := range cases {
		byID[c.ID] = c
	}
	if len(r.cases) < 6 {
		t.Errorf("only %d demo cassettes", len(r.cases))
	}
	for id := range r.cases {
		c, ok := byID[id]
		if !ok {
			t.Errorf("cassette for unknown case %q", id)
			continue
		}
		exp, err := matchers.CompileExpect(c.Expect)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		for _, seed := range []int{1, 2} {
			for _, confirm := range []string{"approve", "deny"} {
				key := backend.Key{Case: id, Cell: map[string]string{
					"model": "demo-model", "seed": strconv.Itoa(seed), "temperature": "0",
					"tools": "needed", "confirm": confirm, "descriptions": "default",
				}}
				var tr matchers.Trace
				for turn := 0; ; turn++ {
					key.Turn = turn
					resp, err := r.Chat(context.Background(), &backend.Request{Key: key})
					if err != nil {
						t.Fatalf("%s seed %d %s: %v", id, seed, confirm, err)
					}
					if len(resp.Message.ToolCalls) == 0 {
						tr.Answer = resp.Message.Content
						break
					}
					for _, call := range resp.Message.ToolCalls {
						mc := matchers.Call{Tool: call.Name, Denied: confirm == "deny" && gated[call.Name]}
						if err := json.Unmarshal(call.Arguments, &mc.Args); err != nil {
							mc.Malformed = true
						}
						tr.Calls = append(tr.Calls, mc)
					}
				}
				v := exp.Score(tr, matchers.Cell{Model: "demo-model", Tools: "needed", Confirm: confirm, Descriptions: "default"})
				seeds, failing := demoFailures[id]
				wantPass := !failing
				if failing && seeds != nil {
					wantPass = true
					for _, s := range seeds {
						if s == seed {
							wantPass = false
						}
					}
				}
				if v.Pass != wantPass {
					t.Errorf("%s seed %d confirm %s: pass = %v, want %v; reasons %v", id, seed, confirm, v.Pass, wantPass, v.Reasons)
				}
			}
		}
	}
}
