package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/mcpserver"
	"github.com/toolward/toolward/schema/record"
)

// notesEnv, when set, makes the test binary package notes's stateful
// server on stdio (TestMain).
const notesEnv = "TOOLWARD_ENGINE_TEST_NOTES_SERVER"

const notesCase = `
id: remember
prompt: Remember the fact I give you, then tell me everything you know.
needs: [remember, recall]
expect:
  calls: [{tool: remember}, {tool: recall}]
  state:
    - tool: recall
      result: {facts: [seeded, {$regex: '^fact-\d+$'}]}
`

// rememberModel stores fact-<seed>, recalls, and answers with what it
// recalled.
type rememberModel struct{}

func (rememberModel) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	switch req.Key.Turn {
	case 0:
		args, _ := json.Marshal(map[string]string{"fact": fmt.Sprintf("fact-%d", req.Seed)})
		return &backend.Response{Message: backend.Message{ToolCalls: []backend.ToolCall{{Name: "remember", Arguments: args}}}}, nil
	case 1:
		return &backend.Response{Message: backend.Message{ToolCalls: []backend.ToolCall{{Name: "recall", Arguments: json.RawMessage(`{}`)}}}}, nil
	}
	return &backend.Response{Message: backend.Message{Content: req.Messages[len(req.Messages)-1].Content}}, nil
}

// notesConfig runs the case over seeds 1..n against the test binary as
// the notes server, with the server block given.
func notesConfig(n int, server string) string {
	seeds := make([]string, n)
	for i := range seeds {
		seeds[i] = fmt.Sprint(i + 1)
	}
	return fmt.Sprintf(`
name: "notes"
cases: ["cases/*.yaml"]
server: %s
backend: replay: "cassettes"
matrix: {models: ["m"], seeds: [%s]}
limits: {max_iterations: 4, concurrency: 8}
`, server, strings.Join(seeds, ", "))
}

func setupNotes(t *testing.T, n int, server string) {
	t.Helper()
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.MkdirAll("seed", 0o755)
	os.WriteFile("cases/notes.yaml", []byte(notesCase), 0o644)
	os.WriteFile("seed/notes.json", []byte(`["seeded"]`), 0o644)
	os.WriteFile("notes.cue", []byte(notesConfig(n, server)), 0o644)
}

// TestIsolationPerRun: 200 runs under 8 workers against a command
// server whose state is a file: with isolation "run" each run gets a
// fresh process in a fresh directory, seeded, whose file {run_dir} names,
// so each sees only the seed and its own fact (in its trace and in the
// probe), and no run directory is left behind.
func TestIsolationPerRun(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := fmt.Sprintf(`{command: [%q], env: {%s: "1", NOTES_FILE: "{run_dir}/notes.json"}, isolation: "run", seed: "seed", warm: 8}`, exe, notesEnv)
	n := 200
	if testing.Short() {
		n = 24 // each run starts a process
	}
	setupNotes(t, n, server)
	res, err := Run(context.Background(), Options{ConfigPath: "notes.cue", Backend: rememberModel{}, Backoff: noBackoff, Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != int64(n) || res.Pass != int64(n) {
		t.Fatalf("result %+v", res)
	}
	for _, r := range readRuns(t, res.Dir) {
		want := fmt.Sprintf(`{"facts":["seeded","fact-%d"]}`, r.Cell.Seed)
		if r.Trace.Calls[1].Result != want {
			t.Fatalf("seed %d recalled %s, want %s (state leaked between runs)", r.Cell.Seed, r.Trace.Calls[1].Result, want)
		}
		got, _ := json.Marshal(r.State.Probes[0].Got.Value)
		if string(got) != want || r.Outcome != record.Pass {
			t.Fatalf("seed %d: probe saw %s, outcome %s %v", r.Cell.Seed, got, r.Outcome, r.Reasons)
		}
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "toolward-*"))
	if len(left) > 0 {
		t.Fatalf("run directories left behind: %v", left)
	}
}

// TestIsolationSharedRefused: the same case against the server without
// isolation (its runs share the file) is refused before anything runs,
// saying how to isolate; without probes, the shared runs do see each
// other's facts, which is what the refusal guards against.
func TestIsolationSharedRefused(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := fmt.Sprintf(`{command: [%q], env: {%s: "1", NOTES_FILE: "notes.json"}}`, exe, notesEnv)
	setupNotes(t, 4, server)
	_, err = Run(context.Background(), Options{ConfigPath: "notes.cue", Backend: rememberModel{}, Backoff: noBackoff})
	if err == nil || !strings.Contains(err.Error(), "share its state") || !strings.Contains(err.Error(), `isolation: "run"`) {
		t.Fatalf("err = %v", err)
	}
	// Without the probe the job runs, and the file accumulates facts.
	b, _ := os.ReadFile("cases/notes.yaml")
	os.WriteFile("cases/notes.yaml", []byte(strings.Split(string(b), "  state:")[0]), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "notes.cue", Backend: rememberModel{}, Backoff: noBackoff, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	recs := readRuns(t, res.Dir)
	if last := recs[len(recs)-1].Trace.Calls[1].Result; strings.Count(last, "fact-") != 4 {
		t.Fatalf("shared server: last run recalled %s, want all 4 facts", last)
	}
}

// bundledHTTP serves the bundled server over streamable HTTP, its
// sandboxes per MCP session, and counts the requests to /reset.
func bundledHTTP(t *testing.T) (url string, resets *atomic.Int64) {
	t.Helper()
	srv, err := mcpserver.New(mcpserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	resets = &atomic.Int64{}
	mux := http.NewServeMux()
	// A run holds its session while a replay for an equals probe opens
	// another: more sessions than workers.
	mux.Handle("/mcp", srv.HTTPHandler(mcpserver.HTTPOptions{MaxSessions: 32}))
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			resets.Add(1)
		}
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL, resets
}

// TestIsolationURLSession: against a url server that keeps state per
// MCP session, isolation "session" gives each of 32 runs under 8 workers
// its own session: every run sees only its own ticket.
func TestIsolationURLSession(t *testing.T) {
	url, _ := bundledHTTP(t)
	setupTickets(t)
	cfg := strings.Replace(ticketConfig, `server: builtin: {}`, fmt.Sprintf(`server: {url: %q, isolation: "session"}`, url+"/mcp"), 1)
	os.WriteFile("tickets.cue", []byte(cfg), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "tickets.cue", Backend: ticketModel{}, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 32 || res.Errors != 0 {
		t.Fatalf("result %+v", res)
	}
	for _, r := range readRuns(t, res.Dir) {
		tickets := r.State.Probes[0].Got.Value.(map[string]any)["tickets"].([]any)
		if r.Cell.Confirm == "approve" && (len(tickets) != 1 || tickets[0].(map[string]any)["ticket_id"] != "TCK-1001") {
			t.Fatalf("%s seed %d: tickets %v (runs shared a session)", r.Case, r.Cell.Seed, tickets)
		}
	}
}

// TestIsolationURLReset: server.reset is done before every run, and
// before every replay for an equals probe; with state probes it is
// refused while more than one run is in flight.
func TestIsolationURLReset(t *testing.T) {
	url, resets := bundledHTTP(t)
	setupTickets(t)
	server := fmt.Sprintf(`server: {url: %q, isolation: "session", reset: {http: %q}}`, url+"/mcp", url+"/reset")
	cfg := strings.Replace(ticketConfig, `server: builtin: {}`, server, 1)
	cfg = strings.Replace(cfg, "seeds: [1, 2, 3, 4, 5, 6, 7, 8]", "seeds: [1, 2]", 1)
	os.WriteFile("tickets.cue", []byte(cfg), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "tickets.cue", Backend: ticketModel{}, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	// 8 runs, and one replay per case, confirm mode and kind: golden for
	// ticket-high (approve) and ticket-low (approve, deny), initial for
	// ticket-high (deny).
	if res.Ran != 8 || res.Errors != 0 || resets.Load() != 8+4 {
		t.Fatalf("result %+v, %d resets", res, resets.Load())
	}
	// Without session isolation, the reset alone isolates one run at a
	// time: refused at concurrency 8.
	os.WriteFile("tickets.cue", []byte(strings.Replace(cfg, `isolation: "session", `, "", 1)), 0o644)
	_, err = Run(context.Background(), Options{ConfigPath: "tickets.cue", Backend: ticketModel{}, Backoff: noBackoff})
	if err == nil || !strings.Contains(err.Error(), "isolates runs only one at a time") {
		t.Fatalf("err = %v", err)
	}
}
