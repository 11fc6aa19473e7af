package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolward/toolward/engine/backend"
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
	setupNotes(t, 200, server)
	res, err := Run(context.Background(), Options{ConfigPath: "notes.cue", Backend: rememberModel{}, Backoff: noBackoff, Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 200 || res.Pass != 200 {
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
	left, _ := filepath.Glob(filepath.Join(tmp, "toolward-run-*"))
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
