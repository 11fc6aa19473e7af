package session

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/schema"
)

// More roles of the test binary as a command server (see TestMain).
const (
	// roleHang serves pid (answers its process id), block (never
	// answers, ignoring cancellation), closeout (closes its stdout and
	// stays alive), spawn (starts `sleep 300` and answers its pid) and
	// spawnsetsid (the same in a session of its own, on Linux).
	roleHang = "hang"
	// roleParent is toolward for TestServerDiesWithToolward: it starts a
	// roleHang server, prints the server's pid and blocks in a call.
	roleParent = "parent"
	// roleDups lists two tools named echo and one named other.
	roleDups = "dups"
	// roleHangLater serves like roleHang the first time it starts (the
	// file named by hangFileEnv does not exist yet) and never answers
	// the handshake afterwards.
	roleHangLater = "hanglater"
	hangFileEnv   = "TOOLWARD_SESSION_TEST_HANGFILE"
	// roleRunParent is a toolward that opens an isolation "run" notes
	// server seeded with the directory seedEnv names, prints "ready"
	// once its warm pool has made the runs' directories, and blocks.
	roleRunParent = "runparent"
	seedEnv       = "TOOLWARD_SESSION_TEST_SEED"
)

func serveRole(role string) {
	switch role {
	case roleHangLater:
		f := os.Getenv(hangFileEnv)
		if _, err := os.Stat(f); err == nil {
			select {} // read nothing, answer nothing
		}
		os.WriteFile(f, nil, 0o644)
		serveHang()
	case roleHang:
		serveHang()
	case roleParent:
		runParent()
	case roleDups:
		serveDups()
	case roleRunParent:
		exe, _ := os.Executable()
		srv := selfServer(exe, "notes")
		srv.Isolation, srv.Seed = schema.IsolationRun, os.Getenv(seedEnv)
		srv.Env["NOTES_FILE"] = schema.RunDirVar + "/notes.json"
		if _, err := Open(context.Background(), Options{Server: srv, Warm: 2}); err != nil {
			fmt.Println("error:", err)
			return
		}
		for {
			if m, _ := filepath.Glob(filepath.Join(os.TempDir(), runDirsPrefix+"*", "run-*")); len(m) == 2 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Println("ready")
		select {}
	}
}

func serveHang() {
	s := server.NewMCPServer("hang", "1", server.WithToolCapabilities(false))
	ro := mcp.WithReadOnlyHintAnnotation(true)
	s.AddTool(mcp.NewTool("pid", ro), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strconv.Itoa(os.Getpid())), nil
	})
	s.AddTool(mcp.NewTool("block", ro), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {}
	})
	s.AddTool(mcp.NewTool("closeout", ro), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Stdout.Close()
		select {}
	})
	s.AddTool(mcp.NewTool("spawnsetsid", ro), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// A child in a session (and process group) of its own, which a
		// kill of the server's group does not reach.
		c := exec.Command("sleep", "300")
		c.SysProcAttr = detached()
		if err := c.Start(); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		go c.Wait()
		return mcp.NewToolResultText(strconv.Itoa(c.Process.Pid)), nil
	})
	s.AddTool(mcp.NewTool("spawn", ro), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c := exec.Command("sleep", "300")
		if err := c.Start(); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		go c.Wait()
		return mcp.NewToolResultText(strconv.Itoa(c.Process.Pid)), nil
	})
	server.NewStdioServer(s).Listen(context.Background(), os.Stdin, os.Stdout)
}

// runParent opens a roleHang server, prints its pid, then blocks in a
// call that never ends, until killed.
func runParent() {
	exe, _ := os.Executable()
	srv := selfServer(exe, roleHang)
	ctx := context.Background()
	src, err := Open(ctx, Options{Server: srv})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	sess, err := src.Session(ctx, ConfirmAuto)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	res, err := sess.Call(ctx, "pid", nil, 0)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.Text)
	sess.Call(ctx, "block", nil, 0)
}

// serveDups answers initialize and tools/list by hand: mcp-go's server
// cannot list two tools of one name.
func serveDups() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		var result any
		switch req.Method {
		case "server/discover":
			// Unknown: the client falls back to initialize.
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": mcp.METHOD_NOT_FOUND, "message": "Method not found"}})
			os.Stdout.Write(append(b, '\n'))
			continue
		case "initialize":
			result = map[string]any{"protocolVersion": mcp.LATEST_LEGACY_PROTOCOL_VERSION, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "dups", "version": "1"}}
		case "tools/list":
			obj := map[string]any{"type": "object"}
			result = map[string]any{"tools": []any{
				map[string]any{"name": "echo", "description": "first", "inputSchema": obj},
				map[string]any{"name": "other", "inputSchema": obj},
				map[string]any{"name": "echo", "description": "second", "inputSchema": obj},
				map[string]any{"name": "echo", "description": "third", "inputSchema": obj},
			}}
		default:
			result = map[string]any{}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
		os.Stdout.Write(append(b, '\n'))
	}
}

func selfServer(exe, role string) schema.Server {
	return schema.Server{Command: []string{exe}, Env: map[string]string{roleEnv: role}}
}

// openHang opens a roleHang server and a session on it.
func openHang(t *testing.T, opts Options) (*Source, *Session) {
	t.Helper()
	if opts.Server.Command == nil {
		opts.Server = selfCommand(t, roleHang)
	}
	return openSession(t, context.Background(), opts)
}

// openSession opens a Source and a ConfirmAuto session on it, both
// closed when the test ends.
func openSession(t *testing.T, ctx context.Context, opts Options) (*Source, *Session) {
	t.Helper()
	src, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	sess, err := src.Session(ctx, ConfirmAuto)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sess.Close)
	return src, sess
}

// safety bounds a test's context so that a regression fails instead of
// hanging the test binary; no assertion depends on it.
func safety(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestCallTimeoutHungServer: a call to a server that never answers (and
// ignores cancellation) ends at the call's timeout as a timeout *Error,
// and closing the session does not wait for the hung server.
func TestCallTimeoutHungServer(t *testing.T) {
	ctx := safety(t)
	_, sess := openHang(t, Options{})
	_, err := sess.Call(ctx, "block", nil, 50*time.Millisecond)
	var se *Error
	if !errors.As(err, &se) || se.Kind != "timeout" {
		t.Fatalf("err = %v, want a timeout *Error", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the call outlived the safety timeout")
	}
}

// TestHandshakeTimeout: when a later connection's server never answers
// the handshake, Session fails at HandshakeTimeout with a timeout
// *Error, not at the run's deadline. Before, the handshake was bounded
// only by the run's context.
func TestHandshakeTimeout(t *testing.T) {
	ctx := safety(t)
	srv := selfCommand(t, roleHangLater)
	srv.Env[hangFileEnv] = t.TempDir() + "/started"
	src, err := Open(ctx, Options{Server: srv, HandshakeTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	first, err := src.Session(ctx, ConfirmAuto) // the idle connection from Open
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err = src.Session(ctx, ConfirmAuto) // needs a new, hung, server
	var se *Error
	if !errors.As(err, &se) || se.Kind != "timeout" || !strings.Contains(err.Error(), "initialize handshake within 50ms") {
		t.Fatalf("err = %v, want a handshake timeout *Error", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the handshake outlived the safety timeout")
	}
}

// TestServerClosesStdout: a server that closes its stdout and stays
// alive fails the call in flight at once (no call timeout is set) as an
// mcp *Error saying the connection closed.
func TestServerClosesStdout(t *testing.T) {
	ctx := safety(t)
	_, sess := openHang(t, Options{})
	_, err := sess.Call(ctx, "closeout", nil, 0)
	var se *Error
	if !errors.As(err, &se) || se.Kind != "mcp" || !errors.Is(err, transport.ErrTransportClosed) || !strings.Contains(err.Error(), "closed during tool closeout") {
		t.Fatalf("err = %v, want an mcp *Error for the closed transport", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the call waited for the safety timeout")
	}
}

// TestDuplicateToolNames: a server listing two tools of one name offers
// only the first, and Duplicates names it once.
func TestDuplicateToolNames(t *testing.T) {
	src, err := Open(safety(t), Options{Server: selfCommand(t, roleDups)})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var names []string
	for _, tl := range src.Tools() {
		names = append(names, tl.Name+":"+tl.Description)
	}
	if want := []string{"echo:first", "other:"}; !slices.Equal(names, want) {
		t.Errorf("Tools = %q, want %q", names, want)
	}
	if len(src.Listed()) != 2 {
		t.Errorf("Listed has %d tools, want 2", len(src.Listed()))
	}
	if info := src.Info(); info.Name != "dups" {
		t.Errorf("Info = %+v, want the server's own", info)
	}
	if d := src.Duplicates(); !slices.Equal(d, []string{"echo"}) {
		t.Errorf("Duplicates = %q, want [echo]", d)
	}
}
