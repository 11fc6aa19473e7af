package engine

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
)

// TestRunOptionsAxis: each cell's requests carry its options set over
// the backend's settings, and its records name the set ("" for default).
func TestRunOptionsAxis(t *testing.T) {
	var mu sync.Mutex
	think := map[string]bool{} // options seen, as "think|num_ctx"
	script := calcScript()
	fake := fakeollama.Start(t, fakeollama.Options{Script: func(req *api.ChatRequest) fakeollama.Reply {
		mu.Lock()
		think[fmt.Sprintf("%v|%v", req.Think.Value, req.Options["num_ctx"])] = true
		mu.Unlock()
		return script(req)
	}})
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/calc.yaml", []byte(calcCases), 0o644)
	os.WriteFile("fake.cue", []byte(fmt.Sprintf(`
name: "fake"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: ollama: {host: %q, num_ctx: 2048}
options_sets: deep: ollama: {think: "high", num_ctx: 8192}
matrix: {models: [%q], options: ["default", "deep"]}
filter: ["case=sum"]
limits: {retries: 0}
`, fake.URL, fakeollama.DefaultModel)), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "fake.cue", Builtin: Bundled, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	recs := readRuns(t, res.Dir)
	opts := map[string]string{}
	for _, r := range recs {
		if r.Outcome != "pass" {
			t.Errorf("%s %s: %s %v", r.Case, r.Cell.Options, r.Outcome, r.Reasons)
		}
		opts[r.Cell.Options] = r.ID
	}
	if len(recs) != 2 || opts[""] == "" || opts["deep"] == "" {
		t.Fatalf("records by options: %v", opts)
	}
	if !think["false|2048"] || !think["high|8192"] || len(think) != 2 {
		t.Errorf("requests' think|num_ctx: %v", think)
	}
}

// TestRunOptionsReplayWhen: a cassette's `when` and a case's `when`
// select cells by options set: the deep cell replays its own run and is
// judged by its own expectation, the default cell by the case's.
func TestRunOptionsReplayWhen(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll("cases", 0o755)
	os.MkdirAll("cassettes", 0o755)
	os.WriteFile("cases/q.yaml", []byte(`id: q
prompt: How many?
expect:
  answer: {$contains: "four"}
  when:
    - options: deep
      answer: {$contains: "five"}
`), 0o644)
	os.WriteFile("cassettes/q.yaml", []byte(`case: q
runs:
  - when: {options: deep}
    turns: [{content: "five"}]
  - turns: [{content: "four"}]
`), 0o644)
	os.WriteFile("r.cue", []byte(`
name: "r"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: replay: "cassettes"
options_sets: deep: ollama: think: true
matrix: {models: ["m"], options: ["default", "deep"]}
`), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "r.cue", Builtin: Bundled, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	recs := readRuns(t, res.Dir)
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs {
		if r.Outcome != "pass" {
			t.Errorf("options %q: %s %v (answer %q)", r.Cell.Options, r.Outcome, r.Reasons, r.Trace.Answer)
		}
	}
}
