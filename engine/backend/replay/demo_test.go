package replay

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
)

// demoFailures are the demo cassettes' deliberate failures: case id ->
// whether the scripted model fails in a cell. Keep in step with
// fixtures/cassettes/demo/README.md.
var demoFailures = map[string]func(c demoCell) bool{
	"calc-power-of-two":         func(demoCell) bool { return true },
	"irr-translate":             func(demoCell) bool { return true },
	"sql-largest-department":    func(c demoCell) bool { return c.seed == 2 && c.temperature == "0.7" },
	"search-gateway-rate-limit": func(c demoCell) bool { return c.descriptions == "terse" },
}

// demoCell is one cell of configs/demo.cue, less the tool subset, which no
// demo cassette selects on.
type demoCell struct {
	seed                               int
	temperature, confirm, descriptions string
}

func demoCells() []demoCell {
	var out []demoCell
	for _, seed := range []int{1, 2} {
		for _, temp := range []string{"0", "0.7"} {
			for _, confirm := range []string{"approve", "deny"} {
				for _, desc := range []string{"default", "terse"} {
					out = append(out, demoCell{seed, temp, confirm, desc})
				}
			}
		}
	}
	return out
}

// gated are the bundled server's tools a confirm gate applies to.
var gated = map[string]bool{"update_salary": true, "delete_employee": true, "create_ticket": true, "send_email": true}

// TestDemoCassettes replays every demo cassette for the cells of the demo
// config (seeds, temperatures, confirm modes, description sets), scores the replies
// with the case's own expectations, and checks each passes or fails as
// intended. Tool results do not matter to the scorer, so none are needed.
func TestDemoCassettes(t *testing.T) {
	root := filepath.Join("..", "..", "..") // the repository
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
		for _, cell := range demoCells() {
			key := backend.Key{Case: id, Cell: map[string]string{
				"model": "scripted-demo", "seed": strconv.Itoa(cell.seed), "temperature": cell.temperature,
				"tools": "needed", "confirm": cell.confirm, "descriptions": cell.descriptions,
			}}
			var tr matchers.Trace
			for turn := 0; ; turn++ {
				key.Turn = turn
				resp, err := r.Chat(context.Background(), &backend.Request{Key: key})
				if err != nil {
					t.Fatalf("%s %+v: %v", id, cell, err)
				}
				if len(resp.Message.ToolCalls) == 0 {
					tr.Answer = resp.Message.Content
					break
				}
				for _, call := range resp.Message.ToolCalls {
					mc := matchers.Call{Tool: call.Name, Denied: cell.confirm == "deny" && gated[call.Name]}
					if err := json.Unmarshal(call.Arguments, &mc.Args); err != nil {
						mc.Malformed = true
					}
					tr.Calls = append(tr.Calls, mc)
				}
			}
			temp, _ := strconv.ParseFloat(cell.temperature, 64)
			c, _ := matchers.Cell{Model: "scripted-demo", Temperature: temp, Tools: "needed", Descriptions: cell.descriptions}.With("confirm", cell.confirm)
			v := exp.Score(tr, c)
			fails, listed := demoFailures[id]
			wantPass := !listed || !fails(cell)
			if v.Pass != wantPass {
				t.Errorf("%s %+v: pass = %v, want %v; reasons %v", id, cell, v.Pass, wantPass, v.Reasons)
			}
		}
	}
}
