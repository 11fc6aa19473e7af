package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
)

// truncationSuite is the scenario of a real Ollama 0.17.4
// (backend/ollama/testdata/wire/truncation.txt): a case offered only its
// needed tool fits, offered 30 tools its prompt is 15,591 tokens, and
// num_ctx is 4096. The fake cuts the prompt as Ollama does: a 200 with
// prompt_eval_count 4096 and an empty reply.
func truncationSuite(t *testing.T) *fakeollama.Server {
	fake := fakeollama.Start(t, fakeollama.Options{
		Models:  []fakeollama.Model{{Name: "qwen3:0.6b", ContextLength: 40960}},
		Context: 4096,
		PromptTokens: func(req *api.ChatRequest) int {
			if len(req.Tools) > 1 {
				return 15591
			}
			return 300
		},
		Script: func(req *api.ChatRequest) fakeollama.Reply {
			if res, ok := fakeollama.LastToolResult(req); ok {
				return fakeollama.Reply{Content: "It is " + res + "."}
			}
			return fakeollama.Reply{ToolCalls: []fakeollama.ToolCall{{Name: "calculate", Args: `{"expression": "2 + 3"}`}}}
		},
	})
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/sum.yaml", []byte(`
id: sum
prompt: What is 2 + 3?
needs: [calculate]
expect:
  calls: [{tool: calculate}]
  answer: {$contains: "5"}
`), 0o644)
	os.WriteFile("run.cue", []byte(fmt.Sprintf(`
name: "trunc"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: ollama: {host: %q, num_ctx: 4096}
matrix: {models: ["qwen3:0.6b"], tools: [{name: "needed"}, {name: "n30", count: 30}]}
limits: {retries: 2, concurrency: 1}
`, fake.URL)), 0o644)
	return fake
}

// TestContextCheckStopsBeforeAnyRun: the longest prompt of subset n30
// does not fit num_ctx; run stops saying which num_ctx would, and leaves
// no result directory.
func TestContextCheckStopsBeforeAnyRun(t *testing.T) {
	fake := truncationSuite(t)
	_, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff})
	want := "subset n30 needs 15,591 prompt tokens; num_ctx is 4096: set backend.ollama.num_ctx to at least 16384"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run error = %v; want it to say %q", err, want)
	}
	if strings.Contains(err.Error(), "subset needed") {
		t.Errorf("the subset that fits is named too: %v", err)
	}
	if _, serr := os.Stat("results"); !os.IsNotExist(serr) {
		t.Errorf("a result directory was left behind (%v)", serr)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d chat requests ran; want none", n)
	}
}

// TestTruncatedRunsAreErrors: with the check skipped, the runs whose
// prompt Ollama cuts are context_truncated errors, tried once and not
// scored; those that fit pass.
func TestTruncatedRunsAreErrors(t *testing.T) {
	truncationSuite(t)
	res, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff, SkipContextCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readRuns(t, res.Dir) {
		switch r.Cell.Tools {
		case "needed":
			if r.Outcome != "pass" {
				t.Errorf("needed: %s %+v", r.Outcome, r.Error)
			}
		default:
			if r.Outcome != "error" || r.Error == nil || r.Error.Kind != backend.KindContextTruncated || r.Attempts != 1 || len(r.Reasons) != 0 {
				t.Errorf("n30: outcome %s, error %+v, %d attempts, reasons %v; want one context_truncated attempt, unscored", r.Outcome, r.Error, r.Attempts, r.Reasons)
			} else if !strings.Contains(r.Error.Message, "needs 15,591 tokens") || !strings.Contains(r.Error.Message, "at least 16384") {
				t.Errorf("n30: message %q does not say what fits", r.Error.Message)
			}
		}
	}
}
