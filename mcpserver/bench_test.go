package mcpserver

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// benchSession measures what the engine pays per run: a new in-process
// client (its own session and sandbox), initialize, optionally
// tools/list, one tool call, close.
func benchSession(b *testing.B, s *Server, list bool, tool string, args map[string]any) {
	ctx := context.Background()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "0"}
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	b.ReportAllocs()
	for b.Loop() {
		c, err := client.NewInProcessClientWithOptions(s.MCPServer())
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Initialize(ctx, init); err != nil {
			b.Fatal(err)
		}
		if list {
			if _, err := c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
				b.Fatal(err)
			}
		}
		if r, err := c.CallTool(ctx, req); err != nil || r.IsError {
			b.Fatal(err, r)
		}
		c.Close()
	}
}

var calcArgs = map[string]any{"expression": "708000 * 0.12"}

// BenchmarkSession: session + initialize + tools/list (all 143 tools) +
// calculate. tools/list dominates: mcp-go encodes the 65 KB list on the
// server and decodes it again in the client.
func BenchmarkSession(b *testing.B) { benchSession(b, shared(b), true, "calculate", calcArgs) }

// BenchmarkSessionRealTools: as BenchmarkSession with only the 11 real
// tools listed.
func BenchmarkSessionRealTools(b *testing.B) {
	s, err := New(Options{NoBundledCatalog: true})
	if err != nil {
		b.Fatal(err)
	}
	benchSession(b, s, true, "calculate", calcArgs)
}

// BenchmarkSessionNoList: session + initialize + calculate, for an engine
// that lists the (static) tools once per server rather than per session.
func BenchmarkSessionNoList(b *testing.B) { benchSession(b, shared(b), false, "calculate", calcArgs) }

// BenchmarkSessionFirstQuery: session + initialize + a first
// query_database call, which makes the session's database copy.
func BenchmarkSessionFirstQuery(b *testing.B) {
	benchSession(b, shared(b), false, "query_database", map[string]any{"sql": "SELECT COUNT(*) FROM employees"})
}

// BenchmarkNew: loading everything (tool definitions, 132 distractors,
// corpus index, database template), which a process pays once.
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
