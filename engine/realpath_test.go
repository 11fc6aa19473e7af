package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/ollama"
	"github.com/toolward/toolward/engine/backend/replay"
	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
)

const calcCases = `
id: sum
prompt: What is 2 + 3?
needs: [calculate]
expect:
  calls: [{tool: calculate, args: {expression: {$contains: "+"}}}]
  answer: {$contains: "5"}
---
id: wrong
prompt: What is 4 + 4?
needs: [calculate]
expect:
  calls: [{tool: calculate}]
  answer: {$contains: "8"}
---
id: down
prompt: Nobody scripted this.
needs: [calculate]
expect:
  answer: {$any: true}
`

// calcScript answers sum by calling calculate and reporting its result,
// and wrong from memory, wrongly. Anything else gets a 500.
func calcScript() fakeollama.Script {
	return func(req *api.ChatRequest) fakeollama.Reply {
		var first string
		for _, m := range req.Messages {
			if m.Role == "user" {
				first = m.Content
				break
			}
		}
		switch first {
		case "What is 2 + 3?":
			if res, ok := fakeollama.LastToolResult(req); ok {
				return fakeollama.Reply{Content: "The calculator says: " + res}
			}
			return fakeollama.Reply{ToolCalls: []fakeollama.ToolCall{{Name: "calculate", Args: `{"expression": "2 + 3"}`}}}
		case "What is 4 + 4?":
			return fakeollama.Reply{Content: "It is 9."}
		}
		return fakeollama.Reply{Status: 500, Error: "unscripted"}
	}
}

// TestRunFakeOllamaBuiltin runs the real path: the Ollama backend over
// loopback HTTP to a fake server, the bundled MCP server in-process.
func TestRunFakeOllamaBuiltin(t *testing.T) {
	fake := fakeollama.Start(t, fakeollama.Options{Script: calcScript(), FailFirst: 1})
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/calc.yaml", []byte(calcCases), 0o644)
	os.WriteFile("fake.cue", []byte(fmt.Sprintf(`
name: "fake"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: ollama: host: %q
matrix: {models: [%q], seeds: [1, 2, 3]}
limits: {retries: 2, concurrency: 2}
`, fake.URL, fakeollama.DefaultModel)), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "fake.cue", Builtin: Bundled, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	recs := readRuns(t, res.Dir)
	var ids []string
	retried := 0
	for _, r := range recs {
		ids = append(ids, r.ID)
		want := map[string]string{"sum": "pass", "wrong": "fail", "down": "error"}[r.Case]
		if string(r.Outcome) != want {
			t.Errorf("%s seed %d: %s, want %s (%v %v)", r.Case, r.Cell.Seed, r.Outcome, want, r.Reasons, r.Error)
		}
		if r.Case == "down" && (r.Attempts != 3 || r.Error.Kind != backend.KindUnavailable) {
			t.Errorf("down: attempts %d, error %+v", r.Attempts, r.Error)
		}
		if r.Case != "down" && r.Attempts == 2 {
			retried++
		}
		if r.Case == "sum" {
			c := r.Trace.Calls[0]
			if m, _ := c.Structured.(map[string]any); fmt.Sprint(m["result"]) != "5" || !strings.Contains(r.Trace.Answer, "5") {
				t.Errorf("sum call %+v, answer %q", c, r.Trace.Answer)
			}
		}
	}
	if retried != 1 {
		t.Errorf("%d runs retried after the one injected failure, want 1", retried)
	}
	want := planIDs(t, "fake.cue")
	slices.Sort(ids)
	if !slices.Equal(ids, want) {
		t.Fatalf("runs.jsonl ids %v, plan %v", ids, want)
	}
	meta, _ := readMetaBackend(res.Dir)
	if !strings.Contains(meta, "0.17.4") {
		t.Errorf("config.json lacks the server version: %s", meta)
	}
}

func readMetaBackend(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	return string(b), err
}

// benchJob builds a job over one case (two model turns, one calculate
// call) with the bundled server, for measuring the harness per run.
func benchJob(b testing.TB, be backend.Backend, models ...string) (*job, *plan.Plan) {
	b.Helper()
	dir := b.TempDir()
	b.Chdir(dir)
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/calc.yaml", []byte(calcCases), 0o644)
	os.MkdirAll("cassettes", 0o755)
	os.WriteFile("cassettes/sum.yaml", []byte(`case: sum
runs:
  - turns:
      - tool_calls: [{name: calculate, arguments: {expression: "2 + 3"}}]
      - content: The sum is 5.
`), 0o644)
	os.WriteFile("bench.cue", []byte(fmt.Sprintf(`
name: "bench"
cases: ["cases/*.yaml"]
filter: ["case=sum"]
server: builtin: {}
backend: replay: "cassettes"
matrix: {models: [%q], seeds: [for i, _ in [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0] {i}]}
`, models[0])), 0o644)
	l, err := Load("bench.cue", nil, "")
	if err != nil {
		b.Fatal(err)
	}
	if be == nil {
		if be, err = replay.New("cassettes"); err != nil {
			b.Fatal(err)
		}
	}
	srv, err := Bundled(schema.Builtin{})
	if err != nil {
		b.Fatal(err)
	}
	src, err := session.Open(context.Background(), session.Options{Server: l.Config.Server, Builtin: srv})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { src.Close() })
	j := &job{
		l: l, be: be, src: src, descs: map[string]toolset.Descriptions{}, w: record.NewWriter(io.Discard),
		res: &Result{}, backoff: noBackoff, now: time.Now, tools: map[toolsKey]*toolsEntry{},
	}
	return j, l.Plan
}

// benchRuns executes runs on GOMAXPROCS goroutines and reports per-run
// harness time and allocation.
func benchRuns(b *testing.B, j *job, p *plan.Plan) {
	var i atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := i.Add(1)
			j.execute(context.Background(), p.Run(n%p.Len()))
		}
	})
	b.StopTimer()
	if j.res.Pass != j.res.Ran {
		b.Fatalf("%d of %d runs passed: %+v", j.res.Pass, j.res.Ran, j.res)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}

// BenchmarkRunReplay: replay backend, bundled server in-process; a run is
// two model turns and one tool call, scored and written as a record.
func BenchmarkRunReplay(b *testing.B) {
	j, p := benchJob(b, nil, "m")
	benchRuns(b, j, p)
}

// BenchmarkRunFakeOllama: the Ollama backend over loopback HTTP to the
// fake server, bundled server in-process (bench/backends.sh measures the
// whole process with the fake in a process of its own).
func BenchmarkRunFakeOllama(b *testing.B) {
	fake := fakeollama.Start(b, fakeollama.Options{Script: calcScript()})
	be, err := ollama.New(ollama.Config{Host: fake.URL})
	if err != nil {
		b.Fatal(err)
	}
	j, p := benchJob(b, be, fakeollama.DefaultModel)
	benchRuns(b, j, p)
}

// TestMemoryFlat checks that the harness keeps nothing per run: after
// 3000 runs the live heap and the goroutine count are what they were
// after 1000 (sessions, sandboxes and traces are all released).
func TestMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 3000 runs")
	}
	j, p := benchJob(t, nil, "m")
	measure := func(n int) (uint64, int) {
		for i := range n {
			j.execute(context.Background(), p.Run(int64(i)%p.Len()))
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse, runtime.NumGoroutine()
	}
	h1, g1 := measure(1000)
	h2, g2 := measure(2000)
	if h2 > h1+2<<20 || g2 > g1 {
		t.Fatalf("after 1000 runs: heap %d KB, %d goroutines; after 3000: %d KB, %d goroutines", h1>>10, g1, h2>>10, g2)
	}
	if j.res.Pass != 3000 {
		t.Fatalf("%d of 3000 runs passed", j.res.Pass)
	}
}
