package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/schema/record"
)

// hungServer is a stdio MCP server in sh that works until a tool is
// called, then hangs: it never answers the call, and every later start
// of it never answers the handshake (the file "hung" marks the state).
const hungServer = `[ -e hung ] && exec sleep 300
while IFS= read -r l; do
  id=$(printf '%s' "$l" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  [ -z "$id" ] && continue
  case "$l" in
  *'"method":"server/discover"'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id"; continue ;;
  *'"method":"initialize"'*) r='{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"hung","version":"1"}}' ;;
  *'"method":"tools/list"'*) r='{"tools":[{"name":"add","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object"}}]}' ;;
  *'"method":"tools/call"'*) : > hung; exec sleep 300 ;;
  *) r='{}' ;;
  esac
  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$r"
done`

// TestHungServerCostsCallTimeout: with a hung server, every attempt of a
// run ends at limits.call_timeout, the retry's handshake included, as a
// timeout infrastructure error, not at limits.run_timeout. Before, the
// retry's handshake waited for the run timeout.
func TestHungServerCostsCallTimeout(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/c.yaml", []byte("id: add\nprompt: What is 2 + 3?\nneeds: [add]\nexpect: {calls: [{tool: add}]}\n"), 0o644)
	os.WriteFile("server.sh", []byte(hungServer+"\n"), 0o644)
	os.WriteFile("hung.cue", []byte(`
name: "hung"
cases: ["cases/*.yaml"]
server: command: ["sh", "server.sh"]
backend: replay: "unused"
matrix: models: ["m"]
limits: {retries: 1, call_timeout: "100ms", run_timeout: "5s"}
`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second) // a safety net only
	defer cancel()
	res, err := Run(ctx, Options{ConfigPath: "hung.cue", Backend: &scripted{}, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	runs := readRuns(t, res.Dir)
	if len(runs) != 1 {
		t.Fatalf("%d runs recorded, want 1", len(runs))
	}
	r := runs[0]
	if r.Outcome != record.Error || r.Attempts != 2 || r.Error == nil || r.Error.Kind != "timeout" ||
		!strings.Contains(r.Error.Message, "initialize handshake within 100ms") {
		t.Fatalf("run: outcome %s, attempts %d, error %+v", r.Outcome, r.Attempts, r.Error)
	}
}

// TestWarmPoolHungHandshake: an isolation "run" server whose later starts
// never answer the handshake: the run waiting for the warm pool's start
// ends at its run_timeout with an error saying the server never finished
// its handshake and how long the start had waited and is given, not "run
// exceeded limits.run_timeout: context deadline exceeded".
func TestWarmPoolHungHandshake(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	t.Chdir(t.TempDir())
	wd, _ := os.Getwd()
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/c.yaml", []byte("id: add\nprompt: What is 2 + 3?\nneeds: [add]\nexpect: {calls: [{tool: add}]}\n"), 0o644)
	// The first start (Open's) answers and marks the file; every later
	// start, the warm pool's, hangs before its handshake.
	marker := filepath.Join(wd, "started")
	os.WriteFile("server.sh", []byte("[ -e "+marker+" ] && exec sleep 300\n: > "+marker+"\n"+hungServer+"\n"), 0o644)
	os.WriteFile("warm.cue", []byte(`
name: "warm"
cases: ["cases/*.yaml"]
server: {command: ["sh", "`+filepath.Join(wd, "server.sh")+`"], isolation: "run", warm: 1}
backend: replay: "unused"
matrix: models: ["m"]
limits: {retries: 0, run_timeout: "1s"}
`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second) // a safety net only
	defer cancel()
	res, err := Run(ctx, Options{ConfigPath: "warm.cue", Backend: &scripted{}, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	runs := readRuns(t, res.Dir)
	if len(runs) != 1 {
		t.Fatalf("%d runs recorded, want 1", len(runs))
	}
	r := runs[0]
	if r.Outcome != record.Error || r.Error == nil || r.Error.Kind != "timeout" ||
		!strings.Contains(r.Error.Message, "never finished its initialize handshake: the warm pool had started it ") ||
		!strings.Contains(r.Error.Message, "(a warm start is given 2m0s;") || strings.Contains(r.Error.Message, "run exceeded limits.run_timeout") {
		t.Fatalf("run: outcome %s, error %+v", r.Outcome, r.Error)
	}
}
