package engine

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// dupsServer is a stdio MCP server in sh that lists the tool echo twice
// (mcp-go's server cannot), knows no server/discover (so the client
// falls back to initialize) and answers every other request with {}.
const dupsServer = `while IFS= read -r l; do
  id=$(printf '%s' "$l" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  [ -z "$id" ] && continue
  case "$l" in
  *'"method":"initialize"'*) r='{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"dups","version":"1"}}' ;;
  *'"method":"tools/list"'*) r='{"tools":[{"name":"echo","description":"first","inputSchema":{"type":"object"}},{"name":"echo","description":"second","inputSchema":{"type":"object"}},{"name":"other","inputSchema":{"type":"object"}}]}' ;;
  *'"method":"server/discover"'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id"; continue ;;
  *) r='{}' ;;
  esac
  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$r"
done`

// TestDuplicateToolNamesWarn: a server listing two tools of one name is
// warned about once, at preflight, naming the tool; the job runs with the
// first. Before, the duplicate was accepted silently.
func TestDuplicateToolNamesWarn(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/c.yaml", []byte("id: wrong\nprompt: Hi.\nneeds: [echo]\nexpect: {no_calls: true}\n"), 0o644)
	os.WriteFile("server.sh", []byte(dupsServer+"\n"), 0o644)
	os.WriteFile("dups.cue", []byte(`
name: "dups"
cases: ["cases/*.yaml"]
server: command: ["sh", "server.sh"]
backend: replay: "unused"
matrix: {models: ["m"], seeds: [1, 2]}
`), 0o644)
	var progress strings.Builder
	res, err := Run(context.Background(), Options{ConfigPath: "dups.cue", Backend: &scripted{}, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 2 || res.Errors != 0 {
		b, _ := os.ReadFile(res.Dir + "/runs.jsonl")
		t.Errorf("result %+v, want 2 runs without errors:\n%s", res, b)
	}
	const want = "warning: the MCP server (dups 1) lists more than one tool named echo; only the first of each is offered\n"
	if n := strings.Count(progress.String(), want); n != 1 {
		t.Errorf("progress has the warning %d times, want once:\n%s", n, progress.String())
	}
}
