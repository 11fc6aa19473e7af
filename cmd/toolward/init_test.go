package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// recordingServer is an MCP server with a read-only tool (read_note) and
// a write tool (write_file, no annotations: the MCP defaults say it may
// write); it records every call that reaches it.
type recordingServer struct {
	mu    sync.Mutex
	calls map[string][]map[string]any
}

func (r *recordingServer) handler() *server.StreamableHTTPServer {
	s := server.NewMCPServer("recorder", "1", server.WithToolCapabilities(false))
	rec := func(name string) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.calls[name] = append(r.calls[name], req.GetArguments())
			return mcp.NewToolResultText("done"), nil
		}
	}
	s.AddTool(mcp.NewTool("read_note", mcp.WithDescription("Reads a note."), mcp.WithString("title", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(true)), rec("read_note"))
	s.AddTool(mcp.NewTool("write_file", mcp.WithDescription("Writes a file."),
		mcp.WithString("path", mcp.Required()), mcp.WithString("content", mcp.Required())), rec("write_file"))
	return server.NewStreamableHTTPServer(s)
}

func (r *recordingServer) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls[name])
}

// TestScaffoldSendsNoPlaceholderWrites: a suite from toolward init, run
// offline against a server whose write tool records its calls, sends the
// write tool nothing until the user writes the call: not while the
// cassettes are skeletons (validate reports them, replay refuses them),
// and not once their todo lines are deleted with nothing written (the
// write tool's cassette has no call); the user's own call then arrives.
func TestScaffoldSendsNoPlaceholderWrites(t *testing.T) {
	rs := &recordingServer{calls: map[string][]map[string]any{}}
	hs := httptest.NewServer(rs.handler())
	defer hs.Close()
	dir := filepath.Join(t.TempDir(), "suite")
	main := func(args ...string) (int, string) {
		t.Helper()
		var stdout, stderr strings.Builder
		code := Main(args, &stdout, &stderr)
		return code, stdout.String() + stderr.String()
	}
	if code, out := main("init", dir, "--url", hs.URL+"/mcp"); code != 0 {
		t.Fatalf("init: exit %d\n%s", code, out)
	}
	edit := func(name string, f func(string) string) {
		t.Helper()
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	todoLine := regexp.MustCompile(`(?m)^\s*todo: .*\n`)
	dropTodo := func(s string) string { return todoLine.ReplaceAllString(s, "") }
	// The user fills in the goldens (here: deletes their todo) but not
	// the cassettes.
	edit("cases/read_note.yaml", dropTodo)
	edit("cases/write_file.yaml", dropTodo)
	replay := filepath.Join(dir, "replay.cue")
	out := filepath.Join(t.TempDir(), "res")

	code, msg := main("validate", filepath.Join(dir, "cases"), replay)
	if code != 1 || !strings.Contains(msg, "cassettes/write_file.yaml:") || !strings.Contains(msg, "fill in the cassette") ||
		!strings.Contains(msg, "cassettes/read_note.yaml:") {
		t.Errorf("validate with skeleton cassettes: exit %d\n%s", code, msg)
	}
	if code, msg := main("run", replay, "--out", out+"1"); code == 0 || !strings.Contains(msg, "fill in the cassette") {
		t.Errorf("run with skeleton cassettes: exit %d\n%s", code, msg)
	}
	if n := rs.count("write_file") + rs.count("read_note"); n != 0 {
		t.Fatalf("skeleton cassettes sent %d calls", n)
	}

	// The user deletes the cassettes' todo lines without writing the
	// call: the read-only tool gets its placeholder, the write tool
	// nothing (its case fails for want of the call).
	edit("cassettes/read_note.yaml", dropTodo)
	edit("cassettes/write_file.yaml", dropTodo)
	if code, msg := main("run", replay, "--out", out+"2"); code != 0 || !strings.Contains(msg, "2 runs: 1 pass, 1 fail") {
		t.Errorf("run without todo: exit %d\n%s", code, msg)
	}
	if rs.count("read_note") != 1 || rs.count("write_file") != 0 {
		t.Fatalf("read_note got %d calls, write_file %d; want 1 and 0", rs.count("read_note"), rs.count("write_file"))
	}

	// The user writes the call.
	edit("cassettes/write_file.yaml", func(s string) string {
		return strings.Replace(s, "  - turns:\n", "  - turns:\n      - tool_calls: [{name: write_file, arguments: {path: notes.txt, content: hello}}]\n", 1)
	})
	if code, msg := main("run", replay, "--out", out+"3"); code != 0 || !strings.Contains(msg, "2 runs: 2 pass") {
		t.Errorf("run with the call written: exit %d\n%s", code, msg)
	}
	if rs.count("write_file") != 1 || rs.calls["write_file"][0]["path"] != "notes.txt" {
		t.Errorf("write_file calls = %v", rs.calls["write_file"])
	}
}
