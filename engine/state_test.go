package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/internal/analysis/rescore"
	"github.com/toolward/toolward/schema/record"
)

// ticketCases ask for a ticket; the scripted model files it with the
// priority the case id ends in. The probes check the end state.
const ticketCases = `
id: ticket-high
prompt: File a high-priority ticket about the broken login.
needs: [create_ticket]
expect:
  state:
    - tool: state_tickets
      result: {tickets: [{priority: high, status: open}]}
    - tool: state_tickets
      equals: golden
      ignore: ["tickets[*].body"]
  when:
    - confirm: deny
      state: [{tool: state_tickets, equals: initial}]
golden:
  calls: [{tool: create_ticket, args: {title: Login is broken, body: Users cannot log in., priority: high}}]
  answer: Filed.
---
id: ticket-low
prompt: File a high-priority ticket about the broken login.
needs: [create_ticket]
expect:
  state:
    - tool: state_tickets
      equals: golden
golden:
  calls: [{tool: create_ticket, args: {title: Login is broken, body: Users cannot log in., priority: high}}]
  answer: Filed.
`

const ticketConfig = `
name: "tickets"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: replay: "cassettes"
matrix: {models: ["m"], seeds: [1, 2, 3, 4, 5, 6, 7, 8], confirm: ["approve", "deny"], tools: [{name: "all"}]}
limits: {max_iterations: 4, concurrency: 8}
`

// ticketModel files one ticket, with the priority the case id ends in,
// then answers.
type ticketModel struct{}

func (ticketModel) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	if req.Key.Turn == 0 {
		prio := req.Key.Case[strings.LastIndex(req.Key.Case, "-")+1:]
		args, _ := json.Marshal(map[string]any{"title": "Login is broken", "body": "Seed " + string(rune('0'+req.Seed)), "priority": prio})
		return &backend.Response{Message: backend.Message{ToolCalls: []backend.ToolCall{{Name: "create_ticket", Arguments: args}}}}, nil
	}
	return &backend.Response{Message: backend.Message{Content: "Filed."}}, nil
}

func setupTickets(t *testing.T) {
	t.Helper()
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/tickets.yaml", []byte(ticketCases), 0o644)
	os.WriteFile("tickets.cue", []byte(ticketConfig), 0o644)
}

// TestStateProbesBundled runs state probes on the bundled server under 8
// workers: every run sees exactly its own ticket (a fresh sandbox per
// run: the ticket is always TCK-1001), the state tools are never offered
// to the model (tools: all), the equals probes compare with the golden's
// replay (or, denied, with the initial state), and a wrong priority fails
// with state_mismatch and a want/got diff.
func TestStateProbesBundled(t *testing.T) {
	setupTickets(t)
	res, err := Run(context.Background(), Options{ConfigPath: "tickets.cue", Backend: ticketModel{}, Builtin: Bundled, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 32 || res.Errors != 0 {
		t.Fatalf("result %+v", res)
	}
	for _, r := range readRuns(t, res.Dir) {
		for _, name := range r.Trace.Offered {
			if strings.HasPrefix(name, "state_") {
				t.Fatalf("%s: state tool %s offered to the model", r.ID, name)
			}
		}
		if r.State == nil || r.State.Digest == "" {
			t.Fatalf("%s %s: no state recorded", r.Case, r.Cell.Confirm)
		}
		got := r.State.Probes[0].Got.Value.(map[string]any)["tickets"].([]any)
		deny := r.Cell.Confirm == "deny"
		switch {
		case deny && len(got) != 0:
			t.Errorf("%s deny: tickets %v, want none", r.Case, got)
		case !deny && (len(got) != 1 || got[0].(map[string]any)["ticket_id"] != "TCK-1001"):
			t.Errorf("%s seed %d: tickets %v, want the run's own TCK-1001 alone (leaked state?)", r.Case, r.Cell.Seed, got)
		}
		want := record.Pass
		if r.Case == "ticket-low" && !deny {
			want = record.Fail
		}
		if r.Outcome != want {
			t.Errorf("%s %s: outcome %s, want %s: %v", r.Case, r.Cell.Confirm, r.Outcome, want, r.Reasons)
		}
		if r.Outcome == record.Fail {
			if len(r.Reasons) != 1 || r.Reasons[0].Code != "state_mismatch" ||
				!strings.Contains(r.Reasons[0].Detail, `tickets[0].priority: want "high", got "low"`) {
				t.Errorf("%s: reasons %v", r.Case, r.Reasons)
			}
			if r.State.Probes[len(r.State.Probes)-1].Want == nil {
				t.Errorf("equals probe without its reference result")
			}
		}
	}
	// The reports show the state diff of a failing run, want against got.
	if _, err := report.Build(res.Dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(res.Dir, "report.md"))
	if !strings.Contains(string(md), "## End-state mismatches") || !strings.Contains(string(md), `tickets[0].priority: want "high", got "low"`) {
		t.Errorf("report.md has no state diff:\n%s", md)
	}
	html, _ := os.ReadFile(filepath.Join(res.Dir, "report.html"))
	for _, want := range []string{"end state (probes, not shown to the model)", "want (the same probe on a fresh server", "state_mismatch", "tickets[0].priority: want &#34;high&#34;, got &#34;low&#34;"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestStateRescoreAndReprobe: editing a probe's matcher re-judges the
// stored probe results with no server (rescore.Dir is given none); editing
// a probe's call keeps the runs out of the re-score, and resume runs them
// again, since their results measured something else.
func TestStateRescoreAndReprobe(t *testing.T) {
	setupTickets(t)
	res, err := Run(context.Background(), Options{ConfigPath: "tickets.cue", Backend: ticketModel{}, Builtin: Bundled, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) {
		t.Helper()
		b, _ := os.ReadFile("cases/tickets.yaml")
		s := strings.Replace(string(b), old, new, 1)
		if s == string(b) {
			t.Fatalf("%q not in the cases", old)
		}
		os.WriteFile("cases/tickets.yaml", []byte(s), 0o644)
	}
	// A matcher edit: ticket-high's approve runs now fail, from the record.
	edit("result: {tickets: [{priority: high, status: open}]}", "result: {tickets: [{priority: urgent}]}")
	sr, err := rescore.Dir(res.Dir, rescore.DirOptions{Out: "rescored"})
	if err != nil {
		t.Fatal(err)
	}
	if sr.KeptOut() != 0 || sr.Rescored != 32 {
		t.Fatalf("rescore: %+v", sr)
	}
	fails := 0
	for _, r := range readRuns(t, "rescored") {
		if r.Case == "ticket-high" && r.Cell.Confirm == "approve" {
			if r.Outcome != record.Fail || !strings.Contains(r.Reasons[0].Detail, `want "urgent", got "high"`) {
				t.Errorf("re-scored %s: %s %v", r.ID, r.Outcome, r.Reasons)
			}
			fails++
		}
	}
	if fails != 8 {
		t.Fatalf("%d re-scored ticket-high approve runs, want 8", fails)
	}
	// A call edit: the probe now asks another tool; its stored results
	// are stale in the approve cells (the deny override is unchanged).
	edit("    - tool: state_tickets\n      equals: golden\n      ignore", "    - tool: state_outbox\n      equals: golden\n      ignore")
	sr, err = rescore.Dir(res.Dir, rescore.DirOptions{Out: "reprobed"})
	if err != nil {
		t.Fatal(err)
	}
	if sr.Reprobe["ticket-high"] != 8 || sr.KeptOut() != 8 {
		t.Fatalf("reprobe: %+v", sr.Reprobe)
	}
	var prog strings.Builder
	rr, err := Run(context.Background(), Options{ResumeDir: res.Dir, Backend: ticketModel{}, Builtin: Bundled, Backoff: noBackoff, Progress: &prog})
	if err != nil {
		t.Fatal(err)
	}
	if rr.Ran != 8 || !strings.Contains(prog.String(), "case ticket-high changed what its state probes call") {
		t.Fatalf("resume ran %d: %s", rr.Ran, prog.String())
	}
}
