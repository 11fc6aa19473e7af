package main

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/mcpserver"
)

// TestToolsURLHeader: toolward tools --url reaches a streamable HTTP
// server with the --header values on every request (here the bundled
// server behind a bearer token), and fails with exit 1 without them.
func TestToolsURLHeader(t *testing.T) {
	srv, err := mcpserver.New(mcpserver.Options{NoBundledCatalog: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler(mcpserver.HTTPOptions{Token: "s3cret"}))
	defer hs.Close()
	url := hs.URL + mcpserver.Path

	var stdout, stderr strings.Builder
	if code := Main([]string{"tools", "--url", url, "--header", "Authorization=Bearer s3cret", "--format", "json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var out struct {
		Server struct{ Name, Connection string }
		Tools  []struct {
			Name       string
			Parameters map[string]any
			Gated      bool
		}
	}
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout.String())
	}
	if out.Server.Name != "toolward" || out.Server.Connection != "url: "+url || len(out.Tools) != len(srv.ToolNames()) {
		t.Fatalf("server %+v, %d tools, want %d", out.Server, len(out.Tools), len(srv.ToolNames()))
	}
	for _, tl := range out.Tools {
		if tl.Parameters["type"] != "object" {
			t.Errorf("%s: parameters %v", tl.Name, tl.Parameters)
		}
		if tl.Name == "update_salary" && !tl.Gated {
			t.Errorf("update_salary is not gated")
		}
	}

	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"tools", "--url", url}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "connecting to the MCP server") {
		t.Fatalf("without the token: exit %d\n%s", code, stderr.String())
	}
}

func TestGateReason(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		a     mcp.ToolAnnotation
		gated bool
		why   string
	}{
		{mcp.ToolAnnotation{}, true, "no readOnlyHint or destructiveHint (MCP defaults: may write, destructive)"},
		{mcp.ToolAnnotation{ReadOnlyHint: &yes, DestructiveHint: &yes}, false, "readOnlyHint: true"},
		{mcp.ToolAnnotation{ReadOnlyHint: &no, DestructiveHint: &no}, false, "destructiveHint: false"},
		{mcp.ToolAnnotation{DestructiveHint: &yes}, true, "destructiveHint: true"},
		{mcp.ToolAnnotation{ReadOnlyHint: &no}, true, "readOnlyHint: false, no destructiveHint (MCP default: destructive)"},
	} {
		if g, why := gate(tc.a); g != tc.gated || why != tc.why || g != session.Gated(tc.a) {
			t.Errorf("gate(%+v) = %v, %q", tc.a, g, why)
		}
	}
}

func TestTextSafe(t *testing.T) {
	if got := textSafe("Reads a file.\n\tSafe.\x1b]0;pwned\x07"); got != "Reads a file.\n\tSafe.\uFFFD]0;pwned\uFFFD" {
		t.Errorf("textSafe = %q", got)
	}
}
