package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/fixtures/fakes/notes"
	"github.com/toolward/toolward/fixtures/fakes/raceexit"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// serverEnv, when set, makes the test binary an MCP server on stdio (the
// tools of testServer plus crash), so tests can use it as a
// `server: command:` subprocess.
const serverEnv = "TOOLWARD_ENGINE_TEST_MCP_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		// The test server's environment is what the engine hands a
		// command server; without the race runtime's exit second, a
		// graceful close does not wait for it. (The notes server is
		// mostly started per run, and killed: starting twice would cost
		// more than it saves.)
		raceexit.Restart()
	}
	if os.Getenv(notesEnv) != "" {
		if err := notes.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "notes server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(serverEnv) != "" {
		s, _ := testServer(schema.Builtin{})
		s.AddTool(mcp.NewTool("crash", mcp.WithReadOnlyHintAnnotation(true)),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				fmt.Fprintln(os.Stderr, "test server: crashing on purpose")
				os.Exit(3)
				return nil, nil
			})
		fmt.Fprintln(os.Stderr, "test server: ready")
		if os.Getenv(floodEnv) != "" {
			floodStderr()
		}
		if err := server.NewStdioServer(s).Listen(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// callNeed plays a model that calls the case's one needed tool, then
// answers with the tool's result.
type callNeed struct{}

func (callNeed) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	if req.Key.Turn == 0 {
		args := map[string]string{"add": `{"a":2,"b":3}`}[req.Key.Case]
		return &backend.Response{Message: backend.Message{ToolCalls: []backend.ToolCall{{Name: req.Key.Case, Arguments: json.RawMessage(args)}}}}, nil
	}
	return &backend.Response{Message: backend.Message{Content: "Result: " + req.Messages[len(req.Messages)-1].Content}}, nil
}

// TestCommandServerCrash runs against a stdio subprocess server: tools
// work over the pipe, the server's stderr lands in the result directory,
// and a server that dies during a tool call is an infrastructure error,
// retried on a fresh subprocess and then recorded as error, never as a
// model failure.
func TestCommandServerCrash(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/c.yaml", []byte(`
id: add
prompt: What is 2 + 3?
needs: [add]
expect:
  calls: [{tool: add, args: {a: 2, b: 3}}]
  answer: {$contains: "5"}
---
id: crash
prompt: Crash the server.
needs: [crash]
expect:
  calls: [{tool: crash}]
`), 0o644)
	os.WriteFile("cmd.cue", []byte(fmt.Sprintf(`
name: "cmd"
cases: ["cases/*.yaml"]
server: {command: [%q], env: {%s: "1"}}
backend: replay: "unused"
matrix: {models: ["m"], seeds: [1, 2]}
limits: {retries: 2, concurrency: 2}
`, exe, serverEnv)), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "cmd.cue", Backend: callNeed{}, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 4 || res.Pass != 2 || res.Errors != 2 || res.Fail != 0 {
		t.Fatalf("result %+v", res)
	}
	for _, r := range readRuns(t, res.Dir) {
		switch r.Case {
		case "add":
			if r.Outcome != record.Pass || r.Trace.Calls[0].Result != "5" {
				t.Errorf("add: %s, trace %+v", r.Outcome, r.Trace)
			}
		case "crash":
			if r.Outcome != record.Error || r.Attempts != 3 || r.Error == nil || r.Error.Kind != "mcp" || len(r.Reasons) > 0 {
				t.Errorf("crash: outcome %s, attempts %d, error %+v, reasons %v", r.Outcome, r.Attempts, r.Error, r.Reasons)
			}
		}
	}
	log, err := os.ReadFile(filepath.Join(res.Dir, results.StderrFile))
	if err != nil {
		t.Fatal(err)
	}
	// Two runs of three attempts each, every attempt on a new subprocess.
	if n := strings.Count(string(log), "crashing on purpose"); n != 6 {
		t.Errorf("%s has %d crash lines, want 6:\n%s", results.StderrFile, n, log)
	}
}

// TestCommandServerSilent: a server that never answers the handshake
// stops the job with an error instead of hanging it, and is killed at the
// start-up bound rather than given the graceful close's seconds.
func TestCommandServerSilent(t *testing.T) {
	defer func(d time.Duration) { openTimeout = d }(openTimeout)
	openTimeout = 50 * time.Millisecond
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/c.yaml", []byte("id: hi\nprompt: Hi.\nexpect: {no_calls: true}\n"), 0o644)
	os.WriteFile("silent.cue", []byte(`
name: "silent"
cases: ["cases/*.yaml"]
server: command: ["sh", "-c", "cat >/dev/null; touch stdin-closed; exec sleep 60"]
backend: replay: "unused"
matrix: models: ["m"]
`), 0o644)
	_, err := Run(context.Background(), Options{ConfigPath: "silent.cue", Backend: callNeed{}})
	if err == nil || !strings.Contains(err.Error(), "connecting to the MCP server, nothing ran: no answer within 50ms") {
		t.Fatalf("got %v", err)
	}
	// Killed, not closed gracefully: a server that got to see its stdin
	// end would have had seconds to exit before anything stopped it.
	if _, err := os.Stat("stdin-closed"); err == nil {
		t.Error("the silent server was closed gracefully (its stdin ended before it was killed)")
	}
	if _, err := os.Stat("results/silent"); err == nil {
		if ents, _ := os.ReadDir("results/silent"); len(ents) > 0 {
			t.Errorf("a result directory was left behind: %v", ents)
		}
	}
}

// TestCommandServerDiesAtStartup: a server that dies before the
// handshake stops the job with an error quoting the first lines of its
// stderr (the cause), not the last, and leaves no result directory.
func TestCommandServerDiesAtStartup(t *testing.T) {
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/c.yaml", []byte("id: hi\nprompt: Hi.\nexpect: {no_calls: true}\n"), 0o644)
	os.WriteFile("dies.cue", []byte(`
name: "dies"
cases: ["cases/*.yaml"]
server: command: ["sh", "-c", "echo 'SyntaxError: the cause' >&2; i=0; while [ $i -lt 30 ]; do echo '  at line '$i >&2; i=$((i+1)); done; echo 'Node.js v20.19.0' >&2; exit 1"]
backend: replay: "unused"
matrix: models: ["m"]
`), 0o644)
	_, err := Run(context.Background(), Options{ConfigPath: "dies.cue", Backend: callNeed{}})
	if err == nil {
		t.Fatal("want an error")
	}
	msg := err.Error()
	_, quoted, _ := strings.Cut(msg, "the server's stderr begins:\n")
	if !strings.Contains(msg, "connecting to the MCP server, nothing ran") || !strings.HasPrefix(quoted, "  SyntaxError: the cause\n    at line 0\n") || strings.Contains(quoted, "Node.js") {
		t.Errorf("error does not quote the first stderr lines:\n%s", msg)
	}
	if ents, _ := os.ReadDir("results/dies"); len(ents) > 0 {
		t.Errorf("a result directory was left behind: %v", ents)
	}
}
