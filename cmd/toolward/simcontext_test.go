package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
)

// TestRunSimulatorContext: `toolward run` with a simulated user whose
// opening does not fit its context stops before any run with the
// message (exit 1, no result directory); with --no-context-check it
// runs, and the run whose simulator prompt Ollama cut is an
// infrastructure error a retry cannot fix, not a failure.
func TestRunSimulatorContext(t *testing.T) {
	fake := fakeollama.Start(t, fakeollama.Options{
		Models:  []fakeollama.Model{{Name: "m", ContextLength: 40960}, {Name: "u", ContextLength: 40960}},
		Context: 4096,
		PromptTokens: func(req *api.ChatRequest) int {
			if req.Model == "u" {
				return 5000
			}
			return 300
		},
		Script: fakeollama.PerModel(map[string]fakeollama.Script{
			"m": func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Content: "It is 5."} },
			"u": func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Content: "Thanks! ###STOP###"} },
		}),
	})
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/sim.yaml", []byte(`
id: sim
prompt: What is 2 + 3?
needs: [calculate]
user:
  instructions: You want 2 + 3. Once you have it, end the conversation.
  max_turns: 2
expect:
  answer: {$contains: "5"}
`), 0o644)
	os.WriteFile("c.cue", []byte(fmt.Sprintf(`
name: "sim"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: ollama: {host: %q, num_ctx: 4096}
simulator: model: "u"
matrix: models: ["m"]
`, fake.URL)), 0o644)

	var stdout, stderr strings.Builder
	code := Main([]string{"run", "c.cue", "--out", "out"}, &stdout, &stderr)
	want := "simulated user: its system prompt and the opening of case sim need 5,000 prompt tokens; num_ctx is 4096: set backend.ollama.num_ctx to at least 8192 (simulator model u)"
	if code != 1 || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "--no-context-check skips this check") {
		t.Fatalf("exit %d; want 1 and the message %q\nstderr:\n%s", code, want, stderr.String())
	}
	if _, err := os.Stat("out"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a result directory was made: %v", err)
	}

	stdout.Reset()
	stderr.Reset()
	code = Main([]string{"run", "c.cue", "--out", "out", "--no-context-check"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), "1 runs: 0 pass, 0 fail, 1 error") ||
		!strings.Contains(stderr.String(), "1 runs ended in infrastructure errors that a retry cannot fix") {
		t.Fatalf("--no-context-check: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile("out/runs.jsonl")
	if err != nil || !strings.Contains(string(b), `"kind":"context_truncated"`) || !strings.Contains(string(b), "simulated user: ollama at") {
		t.Errorf("runs.jsonl (%v):\n%s", err, b)
	}
}
