package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/internal/analysis/rescore"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

// counterServer keeps one counter per MCP session: load (probe-only)
// sets it, add adds to it and says the total, late and secret say their
// names, state (probe-only) reads it. load refuses {fail: true}.
func counterServer(schema.Builtin) (*server.MCPServer, error) {
	var mu sync.Mutex
	counts := map[string]int{}
	id := func(ctx context.Context) string { return server.ClientSessionFromContext(ctx).SessionID() }
	probeOnly := func(t mcp.Tool) mcp.Tool {
		t.Meta = mcp.NewMetaFromMap(map[string]any{schema.ProbeOnlyMeta: true})
		return t
	}
	s := server.NewMCPServer("counter", "1", server.WithToolCapabilities(false))
	s.AddTool(probeOnly(mcp.NewTool("load", mcp.WithNumber("start"), mcp.WithBoolean("fail"))), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.GetBool("fail", false) {
			return mcp.NewToolResultError("no such scenario"), nil
		}
		mu.Lock()
		defer mu.Unlock()
		counts[id(ctx)] = req.GetInt("start", 0)
		return mcp.NewToolResultText("loaded"), nil
	})
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("Adds n."), mcp.WithNumber("n")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		counts[id(ctx)] += req.GetInt("n", 0)
		return mcp.NewToolResultText(fmt.Sprintf("total %d", counts[id(ctx)])), nil
	})
	for _, name := range []string{"late", "secret"} {
		s.AddTool(mcp.NewTool(name, mcp.WithDescription("The "+name+" tool. Note: server text.")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(name + " ran"), nil
		})
	}
	s.AddTool(probeOnly(mcp.NewTool("state")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		return mcp.NewToolResultText(fmt.Sprintf(`{"count": %d}`, counts[id(ctx)])), nil
	})
	return s, nil
}

// counterCase is a three-turn conversation on counterServer: the world
// is loaded with 10, turn 0 adds 1, turn 1 (where late joins the tools)
// adds 2 and calls late, turn 2 calls nothing. The runs' cases differ by
// what the model does (counterModel).
const counterCase = `
id: %s
prompt: Add one.
needs: [add]
setup: [{tool: load, args: {start: 10%s}}]
execute_unoffered: true
user:
  replies: [Now add two., Thanks.]
  add_tools: [{turn: 1, tools: [late], descriptions: {late: The late tool.}}]
expect:
  turns:
    - state: [{tool: state, equals: golden}]
      contains_golden_results: true
    - state: [{tool: state, equals: golden}]
      contains_golden_results: true
    - state: [{tool: state, equals: initial, ignore: [count]}, {tool: state, result: {count: 13}}]
golden:
  turns:
    - calls: [{tool: add, args: {n: 1}}]
      answer: "11"
    - calls: [{tool: add, args: {n: 2}}, {tool: late}]
      answer: "13"
    - answer: ok
`

// counterModel plays each case: "good" follows the golden (and calls
// secret, which was never offered, in turn 1); "early" does turn 1's
// work in turn 0 (same end state, but turn 0's state differs); "wrongn"
// adds 5 in turn 0 and nothing more. It records the tools each request
// offered, by case and turn.
type counterModel struct {
	mu      sync.Mutex
	offered map[string][][]backend.Tool
}

func (m *counterModel) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	m.mu.Lock()
	m.offered[req.Key.Case] = append(m.offered[req.Key.Case], req.Tools)
	m.mu.Unlock()
	users := 0
	for _, msg := range req.Messages {
		if msg.Role == "user" {
			users++
		}
	}
	last := req.Messages[len(req.Messages)-1]
	call := func(calls ...string) (*backend.Response, error) {
		var tcs []backend.ToolCall
		for _, c := range calls {
			name, args, _ := strings.Cut(c, " ")
			if args == "" {
				args = "{}"
			}
			tcs = append(tcs, backend.ToolCall{Name: name, Arguments: json.RawMessage(args)})
		}
		return &backend.Response{Message: backend.Message{ToolCalls: tcs}}, nil
	}
	answer := func() (*backend.Response, error) {
		return &backend.Response{Message: backend.Message{Content: "done: " + last.Content}}, nil
	}
	if last.Role == "tool" {
		return answer()
	}
	switch c := req.Key.Case; {
	case c == "good" && users == 1:
		return call(`add {"n":1}`)
	case c == "good" && users == 2:
		return call(`add {"n":2}`, "late", "secret")
	case c == "early" && users == 1:
		return call(`add {"n":3}`, "late")
	case c == "wrongn" && users == 1:
		return call(`add {"n":5}`)
	}
	return answer()
}

// TestConversationWorldFeatures runs the case fields issue 25 §2 adds on
// an in-process server: setup calls before the conversation (and before
// the golden's replay), tools added at a user turn with the case's
// description, a call to a tool never offered executed (execute_unoffered),
// per-turn state probes against the golden's turns 0..i, the golden's
// results contained in the run's so far, and a failing setup as an
// infrastructure error.
func TestConversationWorldFeatures(t *testing.T) {
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	var docs []string
	for _, id := range []string{"good", "early", "wrongn"} {
		docs = append(docs, fmt.Sprintf(counterCase, id, ""))
	}
	docs = append(docs, fmt.Sprintf(counterCase, "badsetup", ", fail: true"))
	os.WriteFile("cases/c.yaml", []byte(strings.Join(docs, "---\n")), 0o644)
	os.WriteFile("c.cue", []byte(`
name: "counter"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: replay: "cassettes"
matrix: models: ["m"]
limits: {max_iterations: 4, concurrency: 2}
`), 0o644)
	m := &counterModel{offered: map[string][][]backend.Tool{}}
	res, err := Run(context.Background(), Options{ConfigPath: "c.cue", Backend: m, Builtin: counterServer, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]record.Record{}
	for _, r := range readRuns(t, res.Dir) {
		runs[r.Case] = r
	}
	good := runs["good"]
	if good.Outcome != record.Pass {
		t.Fatalf("good: %s %v %+v", good.Outcome, good.Reasons, good.Error)
	}
	if len(good.Trace.Setup) != 1 || good.Trace.Setup[0].Tool != "load" || good.Trace.Setup[0].Result != "loaded" {
		t.Errorf("setup in the trace: %+v", good.Trace.Setup)
	}
	// The opening's requests offer add alone; from the first reply on,
	// late too, with the case's description.
	names := func(ts []backend.Tool) string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name+"="+t.Description)
		}
		return strings.Join(out, ",")
	}
	if got := names(m.offered["good"][0]); got != "add=Adds n." {
		t.Errorf("turn 0 offered %s", got)
	}
	if got := names(m.offered["good"][2]); got != "add=Adds n.,late=The late tool." {
		t.Errorf("turn 1 offered %s", got)
	}
	if u := good.Trace.Users; len(u) != 3 || strings.Join(u[1].Added, ",") != "late" {
		t.Errorf("users: %+v", u)
	}
	var secret *record.Call
	for i, c := range good.Trace.Calls {
		if c.Tool == "secret" {
			secret = &good.Trace.Calls[i]
		}
	}
	if secret == nil || !secret.Unoffered || secret.NotOffered || secret.Result != "secret ran" {
		t.Errorf("unoffered call: %+v", secret)
	}
	st := good.State
	if st == nil || len(st.Turns) != 3 || st.Turns[1][0].Got.Value.(map[string]any)["count"] != json.Number("13") ||
		st.Turns[1][0].Want == nil || st.Turns[2][0].Want.Value.(map[string]any)["count"] != json.Number("10") {
		t.Errorf("state: %+v", st)
	}
	if st != nil && fmt.Sprint(st.GoldenResults) != "[[total 11] [total 13 late ran] []]" {
		t.Errorf("golden results: %v", st.GoldenResults)
	}
	// toolward show prints what the harness did around the conversation.
	var shown strings.Builder
	if err := report.WriteTrace(&shown, &good); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"setup 0: load {\"start\":10} (not shown to the model)", "user 0 (the case's prompt):", "user 1 (scripted reply):", "tools added: late", "call 3: secret  [not offered, executed]", "state after user turn 1 (probes, not shown to the model):\n  probe 0: state {}\n    want (the same probe on a fresh server):\n      {\n        \"count\": 13\n      }\n    result:\n      {\n        \"count\": 13\n      }\n    verdict: ok\n", "golden results of user turn 1"} {
		if !strings.Contains(shown.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, shown.String())
		}
	}
	// early ends where the golden does, but turn 0's state and results
	// differ from the golden's turn 0 (BFCL checks every turn).
	early := runs["early"]
	if early.Outcome != record.Fail || !hasReason(early.Reasons, "state_mismatch", "expect.turns[0].state[0] (state): differs from the golden state: count: want 11, got 13") ||
		!hasReason(early.Reasons, "missing_result", `expect.turns[0].contains_golden_results: 1 of the golden's 1 results not among the run's results so far: "total 11"`) {
		t.Errorf("early: %s %v", early.Outcome, early.Reasons)
	}
	if hasReason(early.Reasons, "state_mismatch", "expect.turns[1]") {
		t.Errorf("early: turn 1 ends in the golden's state, yet: %v", early.Reasons)
	}
	wrong := runs["wrongn"]
	if wrong.Outcome != record.Fail || !hasReason(wrong.Reasons, "state_mismatch", "expect.turns[1].state[0] (state): differs from the golden state: count: want 13, got 15") {
		t.Errorf("wrongn: %s %v", wrong.Outcome, wrong.Reasons)
	}
	bad := runs["badsetup"]
	if bad.Outcome != record.Error || bad.Error == nil || bad.Error.Kind != "setup" || !strings.Contains(bad.Error.Message, "setup[0] (load) returned an error: no such scenario") || bad.Attempts != 1 {
		t.Errorf("badsetup: %s %+v attempts %d", bad.Outcome, bad.Error, bad.Attempts)
	}
	if len(m.offered["badsetup"]) != 0 {
		t.Errorf("the model was asked %d times after a failed setup", len(m.offered["badsetup"]))
	}

	// toolward score judges the stored turn probes again under an edited
	// matcher, and keeps runs out whose turn probe calls changed.
	b, _ := os.ReadFile("cases/c.yaml")
	edited := strings.ReplaceAll(string(b), "{tool: state, result: {count: 13}}", "{tool: state, result: {count: 99}}")
	os.WriteFile("cases/c.yaml", []byte(edited), 0o644)
	sr, err := rescore.Dir(res.Dir, rescore.DirOptions{Out: "rescored"})
	if err != nil {
		t.Fatal(err)
	}
	if sr.KeptOut() != 0 {
		t.Fatalf("rescore kept %d out: %+v", sr.KeptOut(), sr.Reprobe)
	}
	for _, r := range readRuns(t, "rescored") {
		if r.Case == "good" && (r.Outcome != record.Fail || !hasReason(r.Reasons, "state_mismatch", "expect.turns[2].state[1] (state): count: want 99, got 13")) {
			t.Errorf("re-scored good: %s %v", r.Outcome, r.Reasons)
		}
	}
	os.WriteFile("cases/c.yaml", []byte(strings.ReplaceAll(edited, "{tool: state, result: {count: 99}}", "{tool: state, args: {x: 1}, result: {count: 99}}")), 0o644)
	sr, err = rescore.Dir(res.Dir, rescore.DirOptions{Out: "reprobed"})
	if err != nil {
		t.Fatal(err)
	}
	if sr.Reprobe["good"] != 1 {
		t.Errorf("a changed turn probe call left the stored results judged: %+v", sr.Reprobe)
	}
}

func hasReason(rs []matchers.Reason, code, detail string) bool {
	for _, r := range rs {
		if r.Code == code && strings.Contains(r.Detail, detail) {
			return true
		}
	}
	return false
}

// TestSetupAndAddedToolsChecked: before any run, a setup call or an added
// tool naming no tool of the server stops the job at its place.
func TestSetupAndAddedToolsChecked(t *testing.T) {
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	src := strings.NewReplacer("{tool: load,", "{tool: nosuch,", "tools: [late], descriptions: {late: The late tool.}", "tools: [state]").Replace(fmt.Sprintf(counterCase, "c", ""))
	os.WriteFile("cases/c.yaml", []byte(src), 0o644)
	os.WriteFile("c.cue", []byte("name: \"c\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"cassettes\"\nmatrix: models: [\"m\"]\n"), 0o644)
	_, err := Run(context.Background(), Options{ConfigPath: "c.cue", Backend: &counterModel{offered: map[string][][]backend.Tool{}}, Builtin: counterServer, Backoff: noBackoff})
	for _, want := range []string{`setup[0].tool: the server lists no tool "nosuch" for this setup call`, `user.add_tools[0].tools[0]: tool "state" is kept from the model for state probes`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v, want %q", err, want)
		}
	}
}
