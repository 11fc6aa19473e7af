package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

const initializeJSON = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

func TestHTTP(t *testing.T) {
	s := shared(t)
	ts := httptest.NewServer(s.HTTPHandler(HTTPOptions{Token: "s3cret", MaxBodyBytes: 64 << 10}))
	defer ts.Close()
	url := ts.URL + Path

	// A real MCP client with the token.
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	// Protocol 2025-11-25 has sessions; 2026-07-28 (below) is stateless.
	start(t, c, mcp.ProtocolVersion20251125)
	if r := call(t, c, "calculate", map[string]any{"expression": "708000 * 0.12"}); text(r) != "84960" {
		t.Errorf("calculate over HTTP: %s", text(r))
	}
	// The session keeps its sandbox across requests.
	wantOK(t, call(t, c, "delete_employee", map[string]any{"employee_id": 7}))
	r := call(t, c, "query_database", map[string]any{"sql": "SELECT COUNT(*) AS n FROM employees WHERE id = 7"})
	if !strings.Contains(text(r), `"n":0`) {
		t.Errorf("delete not visible in the same HTTP session: %s", text(r))
	}
	c.Close()

	// A stateless (2026-07-28) client with an elicitation handler: the
	// confirmation travels as a multi round-trip request.
	e := &elicitor{action: mcp.ElicitationResponseActionDecline}
	trans, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	c = client.NewClient(trans, client.WithElicitationHandler(e))
	start(t, c, mcp.LATEST_PROTOCOL_VERSION)
	wantToolError(t, call(t, c, "delete_employee", map[string]any{"employee_id": 7}), "The user declined")
	if len(e.asked) != 1 {
		t.Errorf("elicitation over HTTP asked %d times", len(e.asked))
	}
	c.Close()

	post := func(host, auth, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("", "Bearer s3cret", initializeJSON); code != http.StatusOK || !strings.Contains(body, `"serverInfo"`) {
		t.Errorf("raw initialize: %d %s", code, body)
	}
	if code, _ := post("", "", initializeJSON); code != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", code)
	}
	if code, _ := post("", "Bearer wrong", initializeJSON); code != http.StatusUnauthorized {
		t.Errorf("wrong token: status %d, want 401", code)
	}
	if code, body := post("evil.example:80", "Bearer s3cret", initializeJSON); code != http.StatusForbidden || !strings.Contains(body, "evil.example") {
		t.Errorf("foreign Host: status %d %s, want 403", code, body)
	}
	if code, _ := post("localhost:1234", "Bearer s3cret", initializeJSON); code != http.StatusOK {
		t.Errorf("localhost Host: status %d, want 200", code)
	}
	if code, _ := post("", "Bearer s3cret", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", 100<<10)+`"}}`); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: status %d, want 413", code)
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeJSON))
	req.Header.Set("Authorization", "Bearer s3cret")
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin: status %d, want 403", resp.StatusCode)
	}
}

func TestCheckListenAddr(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:8765": true, "localhost:0": true, "[::1]:80": true,
		"0.0.0.0:8765": false, ":8765": false, "192.168.1.5:80": false, "example.com:80": false, "nonsense": false} {
		if err := CheckListenAddr(addr, false); (err == nil) != ok {
			t.Errorf("CheckListenAddr(%q) = %v", addr, err)
		}
	}
	if err := CheckListenAddr("0.0.0.0:8765", true); err != nil {
		t.Errorf("allow remote: %v", err)
	}
}

func TestListenAndServeHTTP(t *testing.T) {
	s := shared(t)
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- s.ListenAndServeHTTP(ctx, "127.0.0.1:0", HTTPOptions{}, func(a net.Addr) { addrc <- a })
	}()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatal(err)
	}
	c, err := client.NewStreamableHttpClient(fmt.Sprintf("http://%s%s", addr, Path))
	if err != nil {
		t.Fatal(err)
	}
	c.Start(ctx)
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	wantOK(t, call(t, c, "list_documents", nil))
	c.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if err := s.ListenAndServeHTTP(context.Background(), "0.0.0.0:0", HTTPOptions{}, nil); err == nil || !strings.Contains(err.Error(), "not a loopback") {
		t.Errorf("non-loopback accepted: %v", err)
	}
}

// TestStdioSubprocess builds the toolward binary and speaks raw MCP
// JSON-RPC with `toolward serve` over its stdin and stdout.
func TestStdioSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "toolward")
	build := exec.Command("go", "build", "-o", bin, "./cmd/toolward")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/toolward: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "serve", "--no-distractors")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(msg string) {
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	type response struct {
		ID     any             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	recv := func() response {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("server closed stdout; stderr:\n%s", stderr.String())
			}
			var r response
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("not JSON-RPC: %q", l)
			}
			return r
		case <-time.After(60 * time.Second): // a hang guard, not a speed check
			t.Fatal("no response from toolward serve")
		}
		return response{}
	}

	send(initializeJSON)
	if r := recv(); r.ID != 1.0 || !strings.Contains(string(r.Result), `"name":"toolward"`) {
		t.Fatalf("initialize: %+v %s", r, r.Result)
	}
	// A notification gets no reply: the next line must answer the ping.
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if r := recv(); r.ID != "p" {
		t.Fatalf("after a notification, got %+v instead of the ping reply", r)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	r := recv()
	var list struct{ Tools []mcp.Tool }
	if err := json.Unmarshal(r.Result, &list); err != nil || len(list.Tools) != 11 {
		t.Fatalf("tools/list: %v %s", err, r.Result)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"708000 * 0.12"}}}`)
	if r := recv(); r.ID != 3.0 || !strings.Contains(string(r.Result), `"text":"84960"`) {
		t.Fatalf("calculate: %+v %s", r, r.Result)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"query_database","arguments":{"sql":"DROP TABLE employees"}}}`)
	if r := recv(); !strings.Contains(string(r.Result), `"isError":true`) || !strings.Contains(string(r.Result), "read-only") {
		t.Fatalf("write query: %+v %s", r, r.Result)
	}
	send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"calculate","arguments":{}}}`)
	if r := recv(); !strings.Contains(string(r.Result), `"isError":true`) || !strings.Contains(string(r.Result), "missing required argument") {
		t.Fatalf("missing argument: %+v %s", r, r.Result)
	}
	send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}`)
	if r := recv(); r.Error == nil || r.Error.Code != mcp.INVALID_PARAMS {
		t.Fatalf("unknown tool: %+v", r)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve exited with %v; stderr:\n%s", err, stderr.String())
	}
	if _, ok := <-lines; ok {
		t.Error("output after the last response")
	}
}
