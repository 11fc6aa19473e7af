package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/fixtures/fakes/raceexit"
)

// stdioRole, when set, makes the test binary the server as `toolward
// serve --no-distractors` runs it: New without the bundled distractors,
// ServeStdio on stdin and stdout (TestStdioSubprocess).
const stdioRole = "TOOLWARD_MCPSERVER_TEST_STDIO"

func TestMain(m *testing.M) {
	// Every structured result the tests see is checked against its
	// tool's output schema.
	extraServerOptions = []server.ServerOption{server.WithOutputSchemaValidation()}
	// The stdio server process exits without the race runtime's second.
	raceexit.Setenv()
	if os.Getenv(stdioRole) != "" {
		s, err := New(Options{NoBundledCatalog: true})
		if err == nil {
			err = s.ServeStdio(context.Background(), os.Stdin, os.Stdout, os.Stderr)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var (
	srvOnce sync.Once
	srv     *Server
	srvErr  error
)

// shared returns a Server with default options, built once per test binary.
func shared(t testing.TB) *Server {
	t.Helper()
	srvOnce.Do(func() { srv, srvErr = New(Options{}) })
	if srvErr != nil {
		t.Fatal(srvErr)
	}
	return srv
}

// connect starts an initialized in-process client session.
func connect(t testing.TB, s *Server, opts ...client.ClientOption) *client.Client {
	t.Helper()
	return connectVersion(t, s, mcp.LATEST_PROTOCOL_VERSION, opts...)
}

// connectVersion is connect with a chosen protocol version.
func connectVersion(t testing.TB, s *Server, version string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClientWithOptions(s.MCPServer(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	start(t, c, version)
	return c
}

// start starts c and initializes it with the protocol version, closing it
// when the test ends.
func start(t testing.TB, c *client.Client, version string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
}

// call calls a tool; a JSON-RPC error fails the test.
func call(t testing.TB, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := rawCall(c, name, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return res
}

func rawCall(c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return c.CallTool(context.Background(), req)
}

func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured decodes a result's structuredContent into v.
func structured(t testing.TB, r *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
}

func wantOK(t testing.TB, r *mcp.CallToolResult) {
	t.Helper()
	if r.IsError {
		t.Fatalf("unexpected isError result: %s", text(r))
	}
}

func wantToolError(t testing.TB, r *mcp.CallToolResult, substr string) {
	t.Helper()
	if !r.IsError || !strings.Contains(text(r), substr) {
		t.Fatalf("want isError result containing %q, got isError=%v %q", substr, r.IsError, text(r))
	}
}

func TestCalculateTool(t *testing.T) {
	c := connect(t, shared(t))
	for expr, want := range map[string]string{"2 + 3 * 4": "14", "708000 * 0.12": "84960", "(1 + 2) / 4": "0.75"} {
		r := call(t, c, "calculate", map[string]any{"expression": expr})
		wantOK(t, r)
		if text(r) != want {
			t.Errorf("calculate(%q) = %q, want %q", expr, text(r), want)
		}
		var out struct {
			Result float64 `json:"result"`
		}
		structured(t, r, &out)
		if fmt.Sprint(out.Result) != want {
			t.Errorf("calculate(%q) structured result = %v", expr, out.Result)
		}
	}
	wantToolError(t, call(t, c, "calculate", map[string]any{"expression": "__import__('os').system('x')"}), "function calls are not allowed")
	wantToolError(t, call(t, c, "calculate", map[string]any{"expression": "1/0"}), "division by zero")
	wantToolError(t, call(t, c, "calculate", map[string]any{"expression": "9**9**9**9"}), "overflows")
	wantToolError(t, call(t, c, "calculate", map[string]any{"expression": strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000)}), "argument expression: maxLength")
}
