package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/anthropic"
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
		Server    struct{ Name, Connection string }
		ProbeOnly []string `json:"probe_only"`
		Tools     []struct {
			Name       string
			Parameters map[string]any
			Gated      bool
		}
	}
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout.String())
	}
	if out.Server.Name != "toolward" || out.Server.Connection != "url: "+url || len(out.Tools)+len(out.ProbeOnly) != len(srv.ToolNames()) || !slices.Contains(out.ProbeOnly, "state_tickets") {
		t.Fatalf("server %+v, %d tools and probe-only %v, want %d in all", out.Server, len(out.Tools), out.ProbeOnly, len(srv.ToolNames()))
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
	// Control characters show as visible escapes, as the reports show them;
	// newlines and tabs of a multi-line description stay.
	if got := textSafe("Reads a file.\n\tSafe.\x1b]0;pwned\x07"); got != `Reads a file.
	Safe.\x1b]0;pwned\x07` {
		t.Errorf("textSafe = %q", got)
	}
}

// TestToolsAnthropic: --backend anthropic shows every tool exactly as
// the anthropic backend encodes it (anthropic.EncodeTool), and an
// anthropic config picks that conversion by itself.
func TestToolsAnthropic(t *testing.T) {
	srv, err := mcpserver.New(mcpserver.Options{NoBundledCatalog: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler(mcpserver.HTTPOptions{}))
	defer hs.Close()
	url := hs.URL + mcpserver.Path
	var stdout, stderr strings.Builder
	if code := Main([]string{"tools", "--url", url, "--backend", "anthropic", "--format", "json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var out struct {
		Backend string
		Tools   []struct {
			Name, Description string
			Parameters        json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatal(err)
	}
	var mcpOut struct {
		Tools []struct {
			Name, Description string
			Parameters        json.RawMessage
		}
	}
	stdout.Reset()
	if code := Main([]string{"tools", "--url", url, "--backend", "mcp", "--format", "json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	json.Unmarshal([]byte(stdout.String()), &mcpOut)
	if out.Backend != "anthropic" || len(out.Tools) == 0 || len(out.Tools) != len(mcpOut.Tools) {
		t.Fatalf("backend %q, %d tools (mcp %d)", out.Backend, len(out.Tools), len(mcpOut.Tools))
	}
	for i, tl := range out.Tools {
		m := mcpOut.Tools[i]
		wire, err := anthropic.EncodeTool(backend.Tool{Name: m.Name, Description: m.Description, InputSchema: m.Parameters})
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			Name, Description string
			InputSchema       json.RawMessage `json:"input_schema"`
		}
		json.Unmarshal(wire, &w)
		if tl.Name != w.Name || tl.Description != w.Description || !jsonEqual(tl.Parameters, w.InputSchema) {
			t.Errorf("%s: shown as %s %s, sent as %s", tl.Name, tl.Description, tl.Parameters, wire)
		}
	}

	dir := t.TempDir()
	cfg := dir + "/c.cue"
	os.WriteFile(cfg, []byte("name: \"c\"\ncases: [\""+dir+"/*.yaml\"]\nserver: url: \""+url+"\"\nbackend: anthropic: {}\nmatrix: models: [\"claude-sonnet-4-6\"]\n"), 0o644)
	os.WriteFile(dir+"/a.yaml", []byte("id: a\nprompt: p\nexpect: {}\n"), 0o644)
	stdout.Reset()
	if code := Main([]string{"tools", cfg}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "parameters as backend anthropic sends them") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
