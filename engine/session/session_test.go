package session

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

// testServer is a tiny MCP server: lookup (read-only, structured result),
// wipe (destructive, asks the user through elicitation), ask (not gated,
// elicits and answers with the user's action), slow (sleeps until
// cancelled), and fail (returns an isError result). calls counts
// tool invocations that reached the server.
func testServer(calls *atomic.Int64) *server.MCPServer {
	s := server.NewMCPServer("t", "1", server.WithToolCapabilities(false), server.WithElicitation())
	s.AddTool(mcp.NewTool("lookup", mcp.WithDescription("Looks up a key."),
		mcp.WithString("key", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			k := req.GetString("key", "")
			return mcp.NewToolResultStructured(map[string]any{"key": k, "value": 42}, "value of "+k+" is 42"), nil
		})
	s.AddTool(mcp.NewTool("wipe", mcp.WithDescription("Deletes everything.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			r, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
				Message: "Really wipe?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
					"confirm": map[string]any{"type": "boolean"}}},
			}})
			if err != nil {
				return nil, err
			}
			if r.Action != mcp.ElicitationResponseActionAccept {
				return mcp.NewToolResultError("cancelled by user"), nil
			}
			if c, _ := r.Content.(map[string]any); c["confirm"] != true {
				return mcp.NewToolResultError("not confirmed"), nil
			}
			return mcp.NewToolResultText("wiped"), nil
		})
	s.AddTool(mcp.NewTool("ask", mcp.WithDestructiveHintAnnotation(false)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			r, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
				Message:         "Go on?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
			}})
			if err != nil {
				return nil, err
			}
			return mcp.NewToolResultText("answer: " + string(r.Action)), nil
		})
	s.AddTool(mcp.NewTool("slow", mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDestructiveHintAnnotation(false)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return mcp.NewToolResultError("boom"), nil
		})
	return s
}

// openBuiltin opens testServer in process, closed when the test ends.
func openBuiltin(t *testing.T, calls *atomic.Int64) *Source {
	t.Helper()
	src, err := Open(context.Background(), Options{Server: schema.Server{Builtin: &schema.Builtin{}}, Builtin: testServer(calls)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func TestBuiltinToolsAndGate(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int64
	src := openBuiltin(t, &calls)
	var names []string
	gated := map[string]bool{}
	for _, tl := range src.Tools() {
		names = append(names, tl.Name)
		gated[tl.Name] = tl.Gated
		if !strings.Contains(string(tl.InputSchema), `"type":"object"`) {
			t.Errorf("%s schema = %s", tl.Name, tl.InputSchema)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"ask", "fail", "lookup", "slow", "wipe"}) {
		t.Fatalf("tools = %v", names)
	}
	if gated["lookup"] || !gated["wipe"] || gated["ask"] || gated["fail"] || gated["slow"] {
		t.Fatalf("gated = %v", gated)
	}

	for _, tc := range []struct {
		mode, tool    string
		confirm, text string
		isErr         bool
		elicit        []string
		reached       bool
	}{
		{"auto", "wipe", "", "wiped", false, []string{"accept"}, true},
		{"approve", "wipe", Approved, "wiped", false, []string{"accept"}, true},
		{"deny", "wipe", Denied, "The user declined to run wipe.", true, nil, false},
		{"deny", "lookup", "", "value of k is 42", false, nil, true},
		{"deny", "fail", "", "boom", true, nil, true},
		{"deny", "ask", "", "answer: decline", false, []string{"decline"}, true},
		{"approve", "ask", "", "answer: accept", false, []string{"accept"}, true},
	} {
		sess, err := src.Session(ctx, cell.ConfirmMode(tc.mode))
		if err != nil {
			t.Fatal(err)
		}
		before := calls.Load()
		res, err := sess.Call(ctx, tc.tool, map[string]any{"key": "k"}, time.Second)
		sess.Close()
		if err != nil {
			t.Fatalf("%s %s: %v", tc.mode, tc.tool, err)
		}
		if res.Confirm != tc.confirm || res.Text != tc.text || res.IsError != tc.isErr || !slices.Equal(res.Elicitations, tc.elicit) {
			t.Errorf("%s %s: got %+v", tc.mode, tc.tool, res)
		}
		if reached := calls.Load() > before; reached != tc.reached {
			t.Errorf("%s %s: reached server = %v", tc.mode, tc.tool, reached)
		}
		if tc.tool == "lookup" {
			m, _ := res.Structured.(map[string]any)
			if m["value"] != 42.0 {
				t.Errorf("structured = %#v", res.Structured)
			}
		}
	}
}

func TestCallTimeoutIsInfraError(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int64
	src := openBuiltin(t, &calls)
	sess, err := src.Session(ctx, "auto")
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	_, err = sess.Call(ctx, "slow", nil, 20*time.Millisecond)
	var se *Error
	if !errors.As(err, &se) || se.Kind != "timeout" || !se.Retryable {
		t.Fatalf("err = %v, want timeout *Error", err)
	}
	if _, err := src.Session(ctx, "sometimes"); err == nil {
		t.Fatal("unknown confirm mode: want error")
	}
}

// TestHTTPPoolAndHeaders: over streamable HTTP, connections are reused
// between sessions and every request carries the configured headers.
func TestHTTPPoolAndHeaders(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int64
	var unheaded atomic.Int64 // requests without the configured header
	mcpHandler := server.NewStreamableHTTPServer(testServer(&calls))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test") != "1" {
			unheaded.Add(1)
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	defer hs.Close()
	src, err := Open(ctx, Options{Server: schema.Server{URL: hs.URL, Headers: map[string]string{"X-Test": "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if len(src.Tools()) != 5 {
		t.Fatalf("tools = %d", len(src.Tools()))
	}
	for range 3 {
		sess, err := src.Session(ctx, "auto")
		if err != nil {
			t.Fatal(err)
		}
		res, err := sess.Call(ctx, "lookup", map[string]any{"key": "a"}, time.Second)
		if err != nil || res.Text != "value of a is 42" {
			t.Fatalf("lookup over http: %+v, %v", res, err)
		}
		sess.Close()
	}
	src.mu.Lock()
	n := len(src.idle)
	src.mu.Unlock()
	if n != 1 {
		t.Fatalf("idle connections = %d, want 1 (reused)", n)
	}
	if n := unheaded.Load(); n > 0 {
		t.Fatalf("%d requests lacked the configured header", n)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, Options{Server: schema.Server{}}); err == nil {
		t.Fatal("no server: want error")
	}
	if _, err := Open(ctx, Options{Server: schema.Server{Builtin: &schema.Builtin{}}}); err == nil {
		t.Fatal("builtin without server: want error")
	}
	if _, err := Open(ctx, Options{Server: schema.Server{Command: []string{"/nonexistent/toolward-test-server"}}}); err == nil {
		t.Fatal("missing command: want error")
	}
}

func TestFill(t *testing.T) {
	got := Fill(map[string]any{"type": "object", "properties": map[string]any{
		"ok": map[string]any{"type": "boolean"}, "n": map[string]any{"type": "integer"},
		"c": map[string]any{"type": "string", "enum": []any{"x", "y"}}, "d": map[string]any{"type": "string", "default": "z"},
	}})
	if got["ok"] != true || got["n"] != 1 || got["c"] != "x" || got["d"] != "z" {
		t.Fatalf("Fill = %v", got)
	}
}

// TestURLErrors: a URL without the endpoint's path gets a hint naming the
// URL to try, and a refused connection says "failed to send request"
// once.
func TestURLErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var calls atomic.Int64
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(testServer(&calls)))
	hs := httptest.NewServer(mux)
	_, err := Open(ctx, Options{Server: schema.Server{URL: hs.URL + "/"}})
	if err == nil || !strings.Contains(err.Error(), "try "+hs.URL+"/mcp") {
		t.Errorf("URL without /mcp: %v", err)
	}
	_, err = Open(ctx, Options{Server: schema.Server{URL: hs.URL + "/api"}})
	if err == nil || !strings.Contains(err.Error(), "check the URL's path /api") {
		t.Errorf("URL with a wrong path: %v", err)
	}
	hs.Close()
	_, err = Open(ctx, Options{Server: schema.Server{URL: hs.URL + "/mcp"}})
	if err == nil || strings.Count(err.Error(), "failed to send request") != 1 {
		t.Errorf("refused connection: %v", err)
	}
}
