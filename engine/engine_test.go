package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/replay"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

const testCases = `
id: add
prompt: What is 2 + 3?
needs: [add]
expect:
  calls: [{tool: add, args: {a: 2, b: 3}}]
  answer: {$contains: "5"}
---
id: wipe
prompt: Wipe the scratch table.
needs: [wipe]
expect:
  calls: [{tool: wipe}]
  answer: {$contains: wiped}
  when:
    - confirm: deny
      answer: {$contains: declined}
---
id: wrong
prompt: What is 2 + 3?
needs: [add]
expect:
  calls: [{tool: add, args: {a: 2, b: 3}}]
  answer: {$contains: "5"}
---
id: flaky
prompt: What is 2 + 3?
needs: [add]
expect:
  answer: {$contains: "5"}
---
id: down
prompt: What is 2 + 3?
needs: [add]
expect:
  answer: {$contains: "5"}
`

const testConfig = `
name: "e2e"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: replay: "cassettes"
matrix: {
	models: ["m1", "m2"]
	seeds: [1, 2]
	confirm: ["approve", "deny"]
	tools: [{name: "needed"}, {name: "n2", count: 2}]
}
limits: {max_iterations: 4, retries: 2, concurrency: 2}
`

// setup writes a suite into a temporary working directory.
func setup(t testing.TB) {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll("cases", 0o755)
	os.MkdirAll("cassettes", 0o755)
	os.WriteFile("cases/suite.yaml", []byte(testCases), 0o644)
	os.WriteFile("e2e.cue", []byte(testConfig), 0o644)
}

// testServer has add (read-only) and wipe (destructive, no annotations).
func testServer(schema.Builtin) (*server.MCPServer, error) {
	s := server.NewMCPServer("test", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("add", mcp.WithNumber("a"), mcp.WithNumber("b"), mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(jsonNum(req.GetFloat("a", 0) + req.GetFloat("b", 0))), nil
		})
	s.AddTool(mcp.NewTool("wipe"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("wiped 3 rows"), nil
	})
	return s, nil
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

// scripted plays a model per case: add and wipe call their tool and
// answer from its result; wrong answers without a tool; flaky fails its
// first attempt of each run; down always fails. It counts finished runs
// (final answers) and calls onAnswer after each.
type scripted struct {
	mu       sync.Mutex
	attempts map[string]int // flaky: first turns seen per cell
	answers  atomic.Int64
	onAnswer func(n int64)
}

func cellString(k backend.Key) string {
	b, _ := json.Marshal(k.Cell)
	return k.Case + string(b)
}

func (s *scripted) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k := req.Key
	last := req.Messages[len(req.Messages)-1]
	reply := func(m backend.Message) (*backend.Response, error) {
		if len(m.ToolCalls) == 0 {
			n := s.answers.Add(1)
			if s.onAnswer != nil {
				s.onAnswer(n)
			}
		}
		return &backend.Response{Message: m, TokensIn: 7, TokensOut: 3}, nil
	}
	switch k.Case {
	case "down":
		return nil, &backend.Error{Kind: backend.KindUnavailable, Msg: "connection refused", Retryable: true}
	case "flaky":
		if k.Turn == 0 {
			s.mu.Lock()
			if s.attempts == nil {
				s.attempts = map[string]int{}
			}
			s.attempts[cellString(k)]++
			n := s.attempts[cellString(k)]
			s.mu.Unlock()
			if n == 1 {
				return nil, &backend.Error{Kind: backend.KindUnavailable, Msg: "stream broken", Retryable: true}
			}
		}
		return reply(backend.Message{Content: "It is 5."})
	case "wrong":
		return reply(backend.Message{Content: "It is 6."})
	case "add":
		if k.Turn == 0 {
			return reply(backend.Message{ToolCalls: []backend.ToolCall{{Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)}}})
		}
		return reply(backend.Message{Content: "The sum is " + last.Content + "."})
	case "wipe":
		if k.Turn == 0 {
			return reply(backend.Message{ToolCalls: []backend.ToolCall{{Name: "wipe", Arguments: json.RawMessage(`{}`)}}})
		}
		if strings.Contains(last.Content, "declined") {
			return reply(backend.Message{Content: "The user declined, nothing was wiped."})
		}
		return reply(backend.Message{Content: "Done: " + last.Content})
	}
	return nil, errors.New("unexpected case " + k.Case)
}

func noBackoff(int) time.Duration { return time.Millisecond }

func readRuns(t *testing.T, dir string) []record.Record {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, results.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record.Record
	r := record.NewReader(f, "runs.jsonl")
	for r.Scan() {
		rec, err := r.Record()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, *rec)
	}
	return out
}

// planIDs returns the sorted run ids of config's plan.
func planIDs(t *testing.T, config string) []string {
	t.Helper()
	l, err := Load(config, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range l.Plan.Len() {
		ids = append(ids, l.Plan.ID(i))
	}
	slices.Sort(ids)
	return ids
}

func TestRunEndToEnd(t *testing.T) {
	setup(t)
	var prog strings.Builder
	res, err := Run(context.Background(), Options{
		ConfigPath: "e2e.cue", Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff, Progress: &prog,
	})
	if err != nil {
		t.Fatal(err)
	}
	const total = 5 * 2 * 2 * 2 * 2
	if res.Planned != total || res.Ran != total || res.Interrupted || res.Errors != total/5 {
		t.Fatalf("result %+v", res)
	}
	recs := readRuns(t, res.Dir)
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
		want := map[string]string{"add": "pass", "wipe": "pass", "wrong": "fail", "flaky": "pass", "down": "error"}[r.Case]
		if string(r.Outcome) != want {
			t.Errorf("%s %+v: outcome %s, want %s (%v %v)", r.Case, r.Cell, r.Outcome, want, r.Reasons, r.Error)
		}
		switch r.Case {
		case "flaky":
			if r.Attempts != 2 {
				t.Errorf("flaky attempts = %d, want 2", r.Attempts)
			}
		case "down":
			if r.Attempts != 3 || r.Error == nil || r.Error.Kind != "backend" {
				t.Errorf("down: attempts %d, error %+v", r.Attempts, r.Error)
			}
		case "wrong":
			if len(r.Reasons) == 0 || r.Reasons[0].Code != "missing_call" {
				t.Errorf("wrong: reasons %v", r.Reasons)
			}
		case "wipe":
			c := r.Trace.Calls[0]
			if r.Cell.Confirm == "deny" && (c.Confirm != "denied" || !c.IsError) {
				t.Errorf("wipe deny: call %+v", c)
			}
			if r.Cell.Confirm == "approve" && (c.Confirm != "approved" || c.Result != "wiped 3 rows") {
				t.Errorf("wipe approve: call %+v", c)
			}
		case "add":
			if r.Trace.Answer != "The sum is 5." || r.Tokens.In != 14 || len(r.Trace.Turns) != 2 {
				t.Errorf("add trace %+v", r.Trace)
			}
			// n2 offers add plus the one other tool.
			if want := map[string]int{"needed": 1, "n2": 2}[r.Cell.Tools]; r.Cell.ToolCount != want || len(r.Trace.Offered) != want {
				t.Errorf("add %s: %d tools offered", r.Cell.Tools, r.Cell.ToolCount)
			}
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, planIDs(t, "e2e.cue")) {
		t.Fatalf("runs.jsonl ids differ from the plan's")
	}
	// Runs are fed grouped by model, all m1 runs before m2's: with 2
	// workers, at most one m1 run is still in flight when the first m2
	// run starts, so the records switch model at most 3 times.
	switches := 0
	for i := 1; i < len(recs); i++ {
		if recs[i].Cell.Model != recs[i-1].Cell.Model {
			switches++
		}
	}
	if switches > 3 {
		t.Errorf("records switch model %d times; runs are not grouped by model", switches)
	}
	meta, err := results.ReadMeta(res.Dir)
	if err != nil || meta.Planned != total || len(meta.Cases) != 5 || meta.ConfigDigest == "" {
		t.Fatalf("meta %+v, %v", meta, err)
	}
	if !strings.Contains(prog.String(), "80/80 runs") {
		t.Errorf("progress output %q", prog.String())
	}
}

func TestKillAndResume(t *testing.T) {
	setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	be := &scripted{onAnswer: func(n int64) {
		if n == 20 {
			cancel()
		}
	}}
	res, err := Run(ctx, Options{ConfigPath: "e2e.cue", Backend: be, Builtin: testServer, Backoff: noBackoff, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted {
		t.Fatalf("not interrupted: %+v", res)
	}
	first := readRuns(t, res.Dir)
	if len(first) == 0 || len(first) >= 80 {
		t.Fatalf("%d records after the kill", len(first))
	}
	// Simulate a crash mid-write too: a truncated last line.
	f, _ := os.OpenFile(filepath.Join(res.Dir, results.RunsFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"version":1,"id":"deadbeef","outcome":"pa`)
	f.Close()

	kept := map[string]bool{}
	for _, r := range first {
		if r.Outcome != record.Error {
			kept[r.ID] = true
		}
	}
	res2, err := Run(context.Background(), Options{ResumeDir: res.Dir, Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Skipped != int64(len(kept)) || res2.Ran != 80-int64(len(kept)) || res2.Interrupted {
		t.Fatalf("resume result %+v (kept %d)", res2, len(kept))
	}
	all := readRuns(t, res.Dir)
	var ids []string
	seen := map[string]bool{}
	for i, r := range all {
		if seen[r.ID] {
			t.Fatalf("id %s twice in runs.jsonl", r.ID)
		}
		seen[r.ID] = true
		ids = append(ids, r.ID)
		if i < len(kept) != kept[r.ID] {
			t.Fatalf("record %d (%s): kept=%v; the resumed job must run exactly the missing runs", i, r.ID, kept[r.ID])
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, planIDs(t, "e2e.cue")) {
		t.Fatalf("after resume: %d ids, plan has %d", len(ids), len(planIDs(t, "e2e.cue")))
	}
	// Resuming a complete job runs nothing.
	res3, err := Run(context.Background(), Options{ResumeDir: res.Dir, Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff})
	if err != nil || res3.Ran != 80-res3.Skipped || res3.Errors != res3.Ran {
		t.Fatalf("second resume: %+v, %v", res3, err)
	}
}

func TestStopFinishesInFlight(t *testing.T) {
	setup(t)
	stop := make(chan struct{})
	var once sync.Once
	be := &scripted{onAnswer: func(n int64) {
		if n == 10 {
			once.Do(func() { close(stop) })
		}
	}}
	res, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: be, Builtin: testServer, Backoff: noBackoff, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Ran == 0 || res.Ran >= 80 {
		t.Fatalf("result %+v", res)
	}
	if n := len(readRuns(t, res.Dir)); int64(n) != res.Ran {
		t.Fatalf("%d records, %d ran: runs in flight must be recorded", n, res.Ran)
	}
}

type failingPreflight struct{ scripted }

func (f *failingPreflight) Preflight(ctx context.Context, models []string) (*backend.Info, error) {
	return nil, &backend.Error{Kind: backend.KindModelMissing, Msg: `model "m1" not found; run: ollama pull m1`}
}

func TestPreflightFailureRunsNothing(t *testing.T) {
	setup(t)
	_, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: &failingPreflight{}, Builtin: testServer})
	if err == nil || !strings.Contains(err.Error(), "ollama pull m1") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat("results"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a result directory was created: %v", err)
	}
}

func TestFiltersShardsAndMissingTool(t *testing.T) {
	setup(t)
	res, err := Run(context.Background(), Options{
		ConfigPath: "e2e.cue", Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff,
		Filters: []string{"case=add", "model=m2"}, Shard: "1/2",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Planned != 4 || res.Ran != 4 || res.Pass != 4 {
		t.Fatalf("result %+v", res)
	}
	for _, r := range readRuns(t, res.Dir) {
		if r.Case != "add" || r.Cell.Model != "m2" {
			t.Fatalf("filtered run %+v", r)
		}
	}
	// A case needing a tool the server lacks stops the job before any
	// run (TestMissingToolStopsTheJob).
	os.WriteFile("cases/suite.yaml", []byte(testCases+"---\nid: ghost\nprompt: x\nneeds: [teleport]\nexpect: {calls: [{tool: teleport}]}\n"), 0o644)
	_, err = Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: &scripted{}, Builtin: testServer, Filters: []string{"case=ghost"}})
	if err == nil || !strings.Contains(err.Error(), `"teleport"`) {
		t.Fatalf("ghost: %v", err)
	}
}

// TestRecordThenReplay records a job's model replies as cassettes and
// replays them: every run gets the same outcome, without the model.
func TestRecordThenReplay(t *testing.T) {
	setup(t)
	res, err := Run(context.Background(), Options{
		ConfigPath: "e2e.cue", Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff,
		Filters: []string{"case=add", "case=wipe", "case=wrong", "case=flaky"}, RecordDir: "recorded",
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := replay.New("recorded")
	if err != nil {
		t.Fatal(err)
	}
	res2, err := Run(context.Background(), Options{
		ConfigPath: "e2e.cue", Backend: rep, Builtin: testServer, Backoff: noBackoff,
		Filters: []string{"case=add", "case=wipe", "case=wrong", "case=flaky"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, r := range readRuns(t, res.Dir) {
		want[r.ID] = string(r.Outcome) + " " + r.Trace.Answer
	}
	got := readRuns(t, res2.Dir)
	if len(got) != len(want) || len(got) != 64 {
		t.Fatalf("%d replayed runs, %d recorded", len(got), len(want))
	}
	for _, r := range got {
		if g := string(r.Outcome) + " " + r.Trace.Answer; g != want[r.ID] {
			t.Errorf("%s %s: replayed %q, recorded %q", r.Case, r.ID, g, want[r.ID])
		}
	}
}

func TestServerFailureLeavesNoDirectory(t *testing.T) {
	setup(t)
	broken := func(schema.Builtin) (*server.MCPServer, error) { return nil, errors.New("corpus missing") }
	_, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: &scripted{}, Builtin: broken})
	if err == nil || !strings.Contains(err.Error(), "corpus missing") {
		t.Fatalf("err = %v", err)
	}
	ents, _ := os.ReadDir("results/e2e")
	if len(ents) != 0 {
		t.Fatalf("result directory left behind: %v", ents)
	}
}

// capture answers at once and keeps the tools each cell was offered.
type capture struct {
	mu    sync.Mutex
	tools map[string][]backend.Tool // descriptions set -> tools
}

func (c *capture) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	c.mu.Lock()
	c.tools[req.Key.Cell["descriptions"]] = req.Tools
	c.mu.Unlock()
	return &backend.Response{Message: backend.Message{Content: "5"}}, nil
}

func TestDescriptionSetsReachTheModel(t *testing.T) {
	setup(t)
	os.WriteFile("short.yaml", []byte("add: Adds.\n"), 0o644)
	os.WriteFile("desc.cue", []byte(`
name: "desc"
cases: ["cases/*.yaml"]
filter: ["case=add"]
server: builtin: {}
backend: replay: "cassettes"
description_sets: short: "short.yaml"
matrix: {models: ["m"], descriptions: ["default", "short"], tools: [{name: "all", order: "given"}]}
`), 0o644)
	c := &capture{tools: map[string][]backend.Tool{}}
	if _, err := Run(context.Background(), Options{ConfigPath: "desc.cue", Backend: c, Builtin: describedServer}); err != nil {
		t.Fatal(err)
	}
	def, short := c.tools["default"], c.tools["short"]
	if len(def) != 2 || len(short) != 2 || def[0].Name != "add" || short[0].Name != "add" {
		t.Fatalf("tools: default %+v, short %+v", def, short)
	}
	if def[0].Description != "Adds two numbers a and b." || short[0].Description != "Adds." {
		t.Errorf("add described as %q (default) and %q (short)", def[0].Description, short[0].Description)
	}
	if short[1].Description != def[1].Description || !strings.Contains(string(def[0].InputSchema), `"a"`) {
		t.Errorf("wipe: %q vs %q; schema %s", short[1].Description, def[1].Description, def[0].InputSchema)
	}
}

func describedServer(schema.Builtin) (*server.MCPServer, error) {
	s, _ := testServer(schema.Builtin{})
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("Adds two numbers a and b."), mcp.WithNumber("a"), mcp.WithNumber("b"), mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("5"), nil
		})
	return s, nil
}

func TestStopBeforeStartRunsNothing(t *testing.T) {
	setup(t)
	stop := make(chan struct{})
	close(stop)
	res, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: &scripted{}, Builtin: testServer, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 0 || !res.Interrupted || res.Remaining() != 80 {
		t.Fatalf("result %+v", res)
	}
}
