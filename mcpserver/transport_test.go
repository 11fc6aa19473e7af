package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

const initializeJSON = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// The HTTP tests serve a server of their own (fresh): a session their
// raw requests leave open would count against the shared server's
// session limit in every later test of the package.
func TestHTTP(t *testing.T) {
	s := fresh(t)
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
	s := fresh(t)
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

// TestStdioSubprocess speaks raw MCP JSON-RPC with the server in another
// process, over its stdin and stdout: the test binary in its stdioRole,
// the server as `toolward serve --no-distractors` runs it (the command's
// own flags and wiring are cmd/toolward's serve_stdio.txtar).
func TestStdioSubprocess(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), stdioRole+"=1") // GORACE included: see TestMain
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
	if err := json.Unmarshal(r.Result, &list); err != nil || len(list.Tools) != 15 { // 12 for the model, 3 state tools for probes
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
	if r := recv(); !strings.Contains(string(r.Result), `"isError":true`) || !strings.Contains(string(r.Result), "required: missing properties") {
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

// Hostile clients. Each test serves over real loopback TCP with short
// limits; every connection carries a generous deadline as a hang guard
// (a failure, not a speed check).

const hangGuard = 20 * time.Second

// fresh is a server of its own, for tests that count sessions.
func fresh(t *testing.T) *Server {
	t.Helper()
	s, err := New(Options{NoBundledCatalog: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// listen serves s over loopback TCP as ListenAndServeHTTP would, with
// opts, and returns the address.
func listen(t *testing.T, s *Server, opts HTTPOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := s.httpServer(opts)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// dial opens a raw connection with a hang guard.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(hangGuard))
	t.Cleanup(func() { c.Close() })
	return c
}

// readResp reads one response from c; it fails the test on a hang.
func readResp(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// closed reports whether the server closed c (EOF before hangGuard).
func closed(t *testing.T, br *bufio.Reader) {
	t.Helper()
	// A clean EOF, or a reset: bytes the client sent after the close may
	// make the server's kernel answer with RST. Only a read that succeeds
	// or times out means the connection is still open.
	_, err := br.ReadByte()
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("connection not closed by the server (read: %v)", err)
	}
}

func postHeaders(addr, token string, length int) string {
	h := "POST " + Path + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
	if token != "" {
		h += "Authorization: Bearer " + token + "\r\n"
	}
	return h + "Content-Length: " + fmt.Sprint(length) + "\r\n\r\n"
}

// trickle writes body one byte at a time until it is written or c fails.
func trickle(c net.Conn, body string, every time.Duration) {
	for i := range len(body) {
		if _, err := c.Write([]byte{body[i]}); err != nil {
			return
		}
		time.Sleep(every)
	}
}

// TestHTTPSlowBody: a client trickling its body is cut off with 408
// after BodyTimeout, and the connection closed; without the token it
// gets its 401 at once, before any body byte (net/http would first wait
// for the body, here for an hour), and the connection is closed within
// the body timeout.
func TestHTTPSlowBody(t *testing.T) {
	s := fresh(t)
	short := listen(t, s, HTTPOptions{Token: "s3cret", BodyTimeout: 200 * time.Millisecond})
	long := listen(t, s, HTTPOptions{Token: "s3cret", BodyTimeout: time.Hour})
	for _, tc := range []struct {
		addr, token string
		status      int
		closes      bool
	}{
		{short, "s3cret", http.StatusRequestTimeout, true},
		{short, "", http.StatusUnauthorized, true},
		{long, "", http.StatusUnauthorized, false},
	} {
		c := dial(t, tc.addr)
		if _, err := io.WriteString(c, postHeaders(tc.addr, tc.token, len(initializeJSON))); err != nil {
			t.Fatal(err)
		}
		if tc.token != "" {
			go trickle(c, initializeJSON, 20*time.Millisecond)
		}
		br := bufio.NewReader(c)
		resp, body := readResp(t, br)
		if resp.StatusCode != tc.status {
			t.Errorf("token %q: status %d %q, want %d", tc.token, resp.StatusCode, body, tc.status)
		}
		if tc.status == http.StatusRequestTimeout && !strings.Contains(body, "not received within 200ms") {
			t.Errorf("408 body: %q", body)
		}
		if tc.closes {
			closed(t, br)
		}
	}
}

// TestHTTPConnTimeouts: headers that never end and idle keep-alive
// connections are closed by the server. The keep-alive request is served
// with a header timeout of hangGuard: its headers arriving within 100 ms
// would depend on the machine's load.
func TestHTTPConnTimeouts(t *testing.T) {
	s := fresh(t)
	addr := listen(t, s, HTTPOptions{ReadHeaderTimeout: 100 * time.Millisecond})
	c := dial(t, addr)
	io.WriteString(c, "POST "+Path+" HTTP/1.1\r\nHost: "+addr+"\r\n")
	closed(t, bufio.NewReader(c))

	addr = listen(t, s, HTTPOptions{ReadHeaderTimeout: hangGuard, IdleTimeout: 100 * time.Millisecond})
	c = dial(t, addr)
	io.WriteString(c, postHeaders(addr, "", len(initializeJSON))+initializeJSON)
	br := bufio.NewReader(c)
	if resp, body := readResp(t, br); resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("keep-alive request: %d close=%v %s", resp.StatusCode, resp.Close, body)
	}
	closed(t, br)
}

// rawPost posts body with the given headers and returns the response.
func rawPost(t *testing.T, url, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func initialize(t *testing.T, url string) string {
	t.Helper()
	resp, body := rawPost(t, url, initializeJSON)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %q %s", resp.StatusCode, id, body)
	}
	return id
}

func deleteSession(t *testing.T, url, id string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
}

// TestHTTPSessionCap: sessions beyond MaxSessions get 503 with a JSON-RPC
// error naming the limit, and so does a stateless request; a request of
// a live session still goes through, and ending a session frees a slot.
func TestHTTPSessionCap(t *testing.T) {
	s := fresh(t)
	url := "http://" + listen(t, s, HTTPOptions{MaxSessions: 2}) + Path
	a := initialize(t, url)
	initialize(t, url)
	if n := s.Sessions(); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
	resp, body := rawPost(t, url, initializeJSON)
	var rpc struct {
		ID    any `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &rpc) != nil ||
		rpc.ID != 1.0 || rpc.Error.Code != errServerBusy || !strings.Contains(rpc.Error.Message, "2 MCP sessions are open, the limit") {
		t.Fatalf("third session: %d %s", resp.StatusCode, body)
	}
	stateless := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	if resp, body := rawPost(t, url, stateless, "MCP-Protocol-Version", "2026-07-28"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("stateless request over the limit: %d %s", resp.StatusCode, body)
	}
	inSession := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"2+2"}}}`
	if resp, body := rawPost(t, url, inSession, "Mcp-Session-Id", a, "MCP-Protocol-Version", "2025-06-18"); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"text":"4"`) {
		t.Errorf("request of a live session at the limit: %d %s", resp.StatusCode, body)
	}
	deleteSession(t, url, a)
	initialize(t, url)
	if n := s.Sessions(); n != 2 {
		t.Errorf("%d sessions, want 2", n)
	}
	// The ended session's id is refused, not revived.
	if resp, _ := rawPost(t, url, inSession, "Mcp-Session-Id", a, "MCP-Protocol-Version", "2025-06-18"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("ended session: %d, want 404", resp.StatusCode)
	}
}

// openStream sends GET /mcp for session id on a raw connection and
// returns the response (its body the stream).
func openStream(t *testing.T, addr, id string) (*http.Response, net.Conn) {
	t.Helper()
	c := dial(t, addr)
	req := "GET " + Path + " HTTP/1.1\r\nHost: " + addr + "\r\nAccept: text/event-stream\r\n"
	if id != "" {
		req += "Mcp-Session-Id: " + id + "\r\n"
	}
	io.WriteString(c, req+"\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp, c
}

// TestHTTPStreams: a GET event stream needs a live session, at most
// MaxStreams are open, and a session's end closes its streams.
func TestHTTPStreams(t *testing.T) {
	s := fresh(t)
	addr := listen(t, s, HTTPOptions{MaxStreams: 2})
	url := "http://" + addr + Path
	if resp, _ := openStream(t, addr, ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET without a session: %d, want 400", resp.StatusCode)
	}
	if resp, _ := openStream(t, addr, sessionIDPrefix+"nope"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET of an unknown session: %d, want 404", resp.StatusCode)
	}
	if n := s.Sessions(); n != 0 {
		t.Errorf("refused GETs created %d sessions", n)
	}
	id := initialize(t, url)
	var open []*http.Response
	for range 2 {
		resp, _ := openStream(t, addr, id)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
		open = append(open, resp)
	}
	resp, _ := openStream(t, addr, id)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") == "" || !strings.Contains(string(body), "2 event streams are open, the limit") {
		t.Errorf("third stream: %d (Allow %q) %s", resp.StatusCode, resp.Header.Get("Allow"), body)
	}
	deleteSession(t, url, id)
	for _, r := range open {
		if _, err := io.ReadAll(r.Body); err != nil {
			t.Errorf("stream of an ended session: %v", err)
		}
	}
	// Both slots are free again.
	id = initialize(t, url)
	for range 2 {
		if resp, _ := openStream(t, addr, id); resp.StatusCode != http.StatusOK {
			t.Errorf("stream after the others ended: %d", resp.StatusCode)
		}
	}
}

// TestHTTPStreamWriteTimeout: a stream that is merely quiet for longer
// than WriteTimeout still delivers its next event, while one whose
// client stops reading is cut off and frees its slot.
func TestHTTPStreamWriteTimeout(t *testing.T) {
	s := fresh(t)
	addr := listen(t, s, HTTPOptions{MaxStreams: 1, WriteTimeout: 100 * time.Millisecond})
	id := initialize(t, "http://"+addr+Path)
	resp, _ := openStream(t, addr, id)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	time.Sleep(300 * time.Millisecond) // quiet for three write timeouts
	if err := s.mcp.SendNotificationToSpecificClient(id, "notifications/message", map[string]any{"data": "hello"}); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("quiet stream lost: %v", err)
		}
		if strings.Contains(line, "hello") {
			break
		}
	}
	// Now stop reading and flood the stream until it is cut off.
	big := strings.Repeat("x", 256<<10)
	for deadline := time.Now().Add(hangGuard); ; {
		if time.Now().After(deadline) {
			t.Fatal("a stream whose client stopped reading was never cut off")
		}
		s.mcp.SendNotificationToSpecificClient(id, "notifications/message", map[string]any{"data": big})
		if r, _ := openStream(t, addr, id); r.StatusCode == http.StatusOK {
			break // the stalled stream's slot is free
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestHostParsing(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:8765": true, "localhost": true, "LOCALHOST:80": true, "[::1]": true, "[::1]:8765": true,
		"[::1": false, "[::1]x": false, "[::1]:": false, "::1": false, "[127.0.0.1]:80": false, "[fe80::1%25eth0]:80": false,
		"localhost:": false, "localhost:99999": false, "localhost:8x": false, "localhost:+80": false, ":80": false, "": false,
		"evil.example": false, "127.0.0.1.evil.example:80": false,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", host, got, want)
		}
	}
	for _, host := range []string{"[::1", "::1", "a:b:c", "localhost:65536"} {
		if _, ok := hostOf(host); ok {
			t.Errorf("hostOf(%q) accepted a malformed Host", host)
		}
	}
}

// TestHTTPMalformedHost: Host: [::1 is refused over the wire.
func TestHTTPMalformedHost(t *testing.T) {
	addr := listen(t, fresh(t), HTTPOptions{})
	for host, want := range map[string]int{"[::1": http.StatusBadRequest, "[::1]:1": http.StatusOK, "evil.example": http.StatusForbidden} {
		c := dial(t, addr)
		io.WriteString(c, strings.Replace(postHeaders(addr, "", len(initializeJSON)), "Host: "+addr, "Host: "+host, 1)+initializeJSON)
		if resp, body := readResp(t, bufio.NewReader(c)); resp.StatusCode != want {
			t.Errorf("Host %q: %d %s, want %d", host, resp.StatusCode, body, want)
		}
	}
}

// serveStdio runs ServeStdio on in and returns its output lines.
func serveStdio(t *testing.T, in io.Reader) []string {
	t.Helper()
	var out strings.Builder
	done := make(chan error, 1)
	go func() { done <- shared(t).ServeStdio(context.Background(), in, &out, nil) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("ServeStdio did not return after its input ended")
	}
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

// TestStdioLastLineWithoutNewline: the last request is answered though
// no newline ends it (mcp-go alone drops it at EOF, and the drain then
// waited 30 s for its answer).
func TestStdioLastLineWithoutNewline(t *testing.T) {
	lines := serveStdio(t, strings.NewReader(initializeJSON+"\n"+`{"jsonrpc":"2.0","id":"last","method":"ping"}`))
	if len(lines) != 2 || !strings.Contains(strings.Join(lines, "\n"), `"id":"last","result":{}`) {
		t.Fatalf("answers: %q", lines)
	}
}

// TestStdioTooLongLine: a line over the limit is answered with an error
// under its id and skipped; the next request is served.
func TestStdioTooLongLine(t *testing.T) {
	huge := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"` + strings.Repeat("1+", DefaultMaxBodyBytes) + `1"}}}`
	lines := serveStdio(t, strings.NewReader(huge+"\n"+`{"jsonrpc":"2.0","id":8,"method":"ping"}`+"\n"))
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":7`) || !strings.Contains(lines[0], "longer than 1048576 bytes") || !strings.Contains(lines[1], `"id":8`) {
		t.Fatalf("answers: %q", lines)
	}
}

// TestDrainMatchesIDs: an answer releases only the request with its id;
// a parse error's null-id answer releases nothing.
func TestDrainMatchesIDs(t *testing.T) {
	d := &drain{pending: map[string]int{}}
	d.cond = sync.NewCond(&d.mu)
	d.request([]byte(`{"jsonrpc":"2.0","id":1.0,"method":"tools/call"}`))
	d.request([]byte(`{"jsonrpc":"2.0","id":{},"method":"ping"}`)) // not an id anything answers under
	d.request([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	d.answered(json.RawMessage(`null`))
	d.answered(json.RawMessage(`"1"`))
	if len(d.pending) != 1 {
		t.Fatalf("pending %v, want request 1 only", d.pending)
	}
	d.answered(json.RawMessage(`1`))
	if len(d.pending) != 0 {
		t.Fatalf("pending %v after answering 1", d.pending)
	}
}

// TestHTTPIdleSessionEnds: an idle session is ended by the sweeper, its
// sandbox dropped and its event stream closed.
func TestHTTPIdleSessionEnds(t *testing.T) {
	s := fresh(t)
	addr := listen(t, s, HTTPOptions{SessionIdleTTL: time.Second})
	url := "http://" + addr + Path
	id := initialize(t, url)
	resp, _ := openStream(t, addr, id)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	if _, err := io.ReadAll(resp.Body); err != nil { // returns when the stream ends
		t.Fatalf("stream of an idle session: %v", err)
	}
	if n := s.Sessions(); n != 0 {
		t.Errorf("%d sessions after the idle one ended", n)
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if resp, _ := rawPost(t, url, ping, "Mcp-Session-Id", id, "MCP-Protocol-Version", "2025-06-18"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("request of the ended session: %d, want 404", resp.StatusCode)
	}
}

// TestHTTPClientWithStream: mcp-go's own client, listening on a GET
// stream, works within the limits and frees both its slots on Close.
func TestHTTPClientWithStream(t *testing.T) {
	s := fresh(t)
	addr := listen(t, s, HTTPOptions{MaxSessions: 1, MaxStreams: 1})
	for range 2 { // the second client fits only if the first freed its slots
		trans, err := transport.NewStreamableHTTP("http://"+addr+Path, transport.WithContinuousListening())
		if err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(trans)
		start(t, c, mcp.ProtocolVersion20251125)
		if r := call(t, c, "calculate", map[string]any{"expression": "6*7"}); text(r) != "42" {
			t.Errorf("calculate: %s", text(r))
		}
		c.Close()
		for deadline := time.Now().Add(hangGuard); s.Sessions() != 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("session not ended by Close")
			}
		}
	}
}

// TestListenAndServeHTTPShutdown: shutting down ends open sessions and
// their event streams, so no sandbox outlives the server.
func TestListenAndServeHTTPShutdown(t *testing.T) {
	s := fresh(t)
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- s.ListenAndServeHTTP(ctx, "127.0.0.1:0", HTTPOptions{}, func(a net.Addr) { addrc <- a })
	}()
	addr := (<-addrc).String()
	id := initialize(t, "http://"+addr+Path)
	resp, _ := openStream(t, addr, id)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Errorf("stream after shutdown: %v", err)
	}
	if n := s.Sessions(); n != 0 {
		t.Errorf("%d sessions left after shutdown", n)
	}
}

// TestHTTPRequestCap: requests beyond MaxRequests in progress get 503
// with a JSON-RPC error, so bodies held in memory stay bounded; the
// client's answer to an elicitation the busy request waits for still
// gets in.
func TestHTTPRequestCap(t *testing.T) {
	addr := listen(t, fresh(t), HTTPOptions{MaxRequests: 1})
	url := "http://" + addr + Path
	init := strings.Replace(initializeJSON, `"capabilities":{}`, `"capabilities":{"elicitation":{}}`, 1)
	resp, body := rawPost(t, url, init)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	session := []string{"Mcp-Session-Id", id, "MCP-Protocol-Version", "2025-06-18"}

	// A destructive call waits for the user's confirmation, holding the slot.
	c := dial(t, addr)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_employee","arguments":{"employee_id":7}}}`
	io.WriteString(c, strings.Replace(postHeaders(addr, "", len(call)), "\r\n\r\n", "\r\nMcp-Session-Id: "+id+"\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n", 1)+call)
	br := bufio.NewReader(c)
	var ask struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	for ask.Method != "elicitation/create" {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("no elicitation/create: %v", err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			json.Unmarshal([]byte(data), &ask)
		}
	}
	ping := `{"jsonrpc":"2.0","id":3,"method":"ping"}`
	resp, body = rawPost(t, url, ping, session...)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "1 requests in progress, the limit") || !strings.Contains(body, `"id":3`) {
		t.Errorf("second request: %d %s", resp.StatusCode, body)
	}
	answer := `{"jsonrpc":"2.0","id":` + string(ask.ID) + `,"result":{"action":"decline"}}`
	if resp, body := rawPost(t, url, answer, session...); resp.StatusCode/100 != 2 {
		t.Fatalf("elicitation answer: %d %s", resp.StatusCode, body)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("no answer to the call: %v", err)
		}
		if strings.Contains(line, `"id":2`) {
			if !strings.Contains(line, "declined") {
				t.Errorf("call: %s", line)
			}
			break
		}
	}
	// The slot is released when the first request's handler returns, just
	// after the client has read its answer: poll briefly for it.
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		resp, body := rawPost(t, url, ping, session...)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("after the first: %d %s", resp.StatusCode, body)
		}
	}
}

// TestHTTPSessionCapConcurrent: initializes racing for the last slots
// never open more than MaxSessions sessions.
func TestHTTPSessionCapConcurrent(t *testing.T) {
	s := fresh(t)
	url := "http://" + listen(t, s, HTTPOptions{MaxSessions: 3}) + Path
	var wg sync.WaitGroup
	codes := make(chan int, 12)
	for range 12 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeJSON))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	ok := 0
	for c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusServiceUnavailable:
		default:
			t.Errorf("status %d", c)
		}
	}
	if ok > 3 || s.Sessions() > 3 || ok != s.Sessions() {
		t.Errorf("%d initializes succeeded, %d sessions open; the limit is 3", ok, s.Sessions())
	}
}

// TestHTTPConnCap: a connection over MaxConns is answered 503 and
// closed; closing one frees its slot.
func TestHTTPConnCap(t *testing.T) {
	s := fresh(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	go s.ListenAndServeHTTP(ctx, "127.0.0.1:0", HTTPOptions{MaxConns: 1}, func(a net.Addr) { addrc <- a })
	addr := (<-addrc).String()
	idle := dial(t, addr)
	// A request on the open connection proves the server accepted it.
	io.WriteString(idle, postHeaders(addr, "", len(initializeJSON))+initializeJSON)
	if resp, body := readResp(t, bufio.NewReader(idle)); resp.StatusCode != http.StatusOK {
		t.Fatalf("first connection: %d %s", resp.StatusCode, body)
	}
	c := dial(t, addr)
	resp, body := readResp(t, bufio.NewReader(c))
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "1 connections are open, the limit") {
		t.Errorf("second connection: %d %s", resp.StatusCode, body)
	}
	idle.Close()
	for deadline := time.Now().Add(hangGuard); ; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the closed connection's slot was not freed")
		}
		c := dial(t, addr)
		io.WriteString(c, postHeaders(addr, "", len(initializeJSON))+initializeJSON)
		// A refused connection may also be reset: its request was unread.
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil && resp.StatusCode == http.StatusOK {
			break
		}
	}
}
