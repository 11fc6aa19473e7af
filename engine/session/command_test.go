package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/fixtures/fakes/hostilemcp"
	"github.com/toolward/toolward/fixtures/fakes/notes"
	"github.com/toolward/toolward/fixtures/fakes/raceexit"
	"github.com/toolward/toolward/schema"
)

// roleEnv makes the test binary a command server for these tests: "env"
// serves testServer plus a tool printing its environment (the leak of
// issue 11), "crash" writes a cause line and a long stack to stderr and
// exits before answering, as npx does under the wrong Node version.
const roleEnv = "TOOLWARD_SESSION_TEST_ROLE"

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) != "" {
		// A server role: its environment is what a Source hands a
		// command server; without the race runtime's exit second, a
		// graceful close does not wait for it.
		raceexit.Restart()
	}
	if mode, ok := strings.CutPrefix(os.Getenv(roleEnv), "hostile:"); ok {
		hostilemcp.Stdio(mode, os.Stdin, os.Stdout)
		os.Exit(0)
	}
	if os.Getenv(roleEnv) == "notes" {
		notes.Serve(context.Background(), os.Stdin, os.Stdout)
		os.Exit(0)
	}
	switch os.Getenv(roleEnv) {
	case "env":
		var calls atomic.Int64
		s := testServer(&calls)
		s.AddTool(mcp.NewTool("printenv", mcp.WithReadOnlyHintAnnotation(true)),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(strings.Join(os.Environ(), "\n")), nil
			})
		fmt.Fprintln(os.Stderr, "test server: ready")
		server.NewStdioServer(s).Listen(context.Background(), os.Stdin, os.Stdout)
		os.Exit(0)
	case "crash":
		fmt.Fprintln(os.Stderr, "Error: Cannot find module 'zod/v4' (the cause)")
		for i := range 40 {
			fmt.Fprintf(os.Stderr, "    at frame%d (node:internal/modules:%d)\n", i, i)
		}
		fmt.Fprintln(os.Stderr, "\nNode.js v20.19.0")
		os.Exit(1)
	case roleHang, roleParent, roleDups, roleHangLater, roleRunParent:
		serveRole(os.Getenv(roleEnv))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func selfCommand(t *testing.T, role string) schema.Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return schema.Server{Command: []string{exe}, Env: map[string]string{roleEnv: role}}
}

// serverEnviron opens srv, calls its printenv tool and returns the lines.
func serverEnviron(t *testing.T, srv schema.Server) []string {
	t.Helper()
	ctx := context.Background()
	src, err := Open(ctx, Options{Server: srv})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sess, err := src.Session(ctx, ConfirmAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.Call(ctx, "printenv", nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(res.Text, "\n")
}

// TestCommandEnvNotInherited: a variable of toolward's environment that
// is not allow-listed never reaches a command server, unless inherit_env;
// PATH does, and server.env is passed and overrides.
func TestCommandEnvNotInherited(t *testing.T) {
	t.Setenv("TOOLWARD_TEST_SECRET", "hunter2")
	t.Setenv("LC_TOOLWARD_TEST", "kept")
	srv := selfCommand(t, "env")
	srv.Env["HOME"] = "/from/config"
	env := serverEnviron(t, srv)
	if slices.Contains(env, "TOOLWARD_TEST_SECRET=hunter2") {
		t.Errorf("a variable that is not allow-listed reached the server")
	}
	for _, want := range []string{"PATH=" + os.Getenv("PATH"), "HOME=/from/config", "LC_TOOLWARD_TEST=kept", roleEnv + "=env"} {
		if !slices.Contains(env, want) {
			t.Errorf("server environment lacks %s:\n%s", want, strings.Join(env, "\n"))
		}
	}

	srv.InheritEnv = true
	if env := serverEnviron(t, srv); !slices.Contains(env, "TOOLWARD_TEST_SECRET=hunter2") {
		t.Errorf("inherit_env: true did not pass the environment")
	}
}

func TestCommandEnv(t *testing.T) {
	parent := []string{"PATH=/bin", "AWS_SECRET_ACCESS_KEY=x", "HOME=/h", "LC_ALL=C", "=C:=weird", "LCX=1"}
	got := CommandEnv(schema.Server{Env: map[string]string{"B": "2", "A": "1", "HOME": "/o"}}, parent)
	want := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "A=1", "B=2", "HOME=/o"}
	if !slices.Equal(got, want) {
		t.Errorf("CommandEnv = %q, want %q", got, want)
	}
	got = CommandEnv(schema.Server{InheritEnv: true}, parent)
	if !slices.Equal(got, parent) {
		t.Errorf("inherit: CommandEnv = %q", got)
	}
}

// TestStartupStderrHead: a command server that dies at start-up is an
// error quoting the first lines of its stderr (the cause), not the last
// (a runtime banner), and counting the rest; everything still reaches
// the stderr writer.
func TestStartupStderrHead(t *testing.T) {
	var log strings.Builder
	_, err := Open(context.Background(), Options{Server: selfCommand(t, "crash"), Stderr: &log})
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *Error", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"\nthe server's stderr begins:\n  Error: Cannot find module 'zod/v4' (the cause)\n      at frame0 ",
		"      at frame8 (node:internal/modules:8)\n  … (33 more lines)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if !strings.HasSuffix(msg, "\n"+envHint) {
		t.Errorf("error does not end with the environment hint:\n%s", msg)
	}
	if strings.Contains(msg, "frame9 ") || strings.Contains(msg, "Node.js") {
		t.Errorf("error quotes more than the first lines:\n%s", msg)
	}
	if !strings.HasSuffix(log.String(), "Node.js v20.19.0\n") {
		t.Errorf("stderr writer got %q", log.String())
	}
}

func TestStderrHeadLines(t *testing.T) {
	h := newStderrHead(nil)
	if h.quote() != "" {
		t.Fatal("empty stream: want no quote")
	}
	fmt.Fprint(h, "\n\n  first\r\n", strings.Repeat("é", 200), "\nlast without newline")
	first, more := h.Lines()
	if len(first) != 3 || first[0] != "  first" || len(first[1]) > headLineSize+len("…") || !strings.HasSuffix(first[1], "é…") || first[2] != "last without newline" || more != 0 {
		t.Fatalf("Lines = %q, %d", first, more)
	}
	esc := newStderrHead(nil)
	fmt.Fprint(esc, "\x1b[31mError:\x1b[0m bad\x07 \tthing\n")
	if first, _ := esc.Lines(); len(first) != 1 || first[0] != "Error: bad\uFFFD \tthing" {
		t.Fatalf("control characters: %q", first)
	}
	big := newStderrHead(nil)
	for i := range 10000 {
		fmt.Fprintf(big, "line %d\n", i)
	}
	if first, more := big.Lines(); len(first) != headLines || first[0] != "line 0" || more != 10000-headLines {
		t.Fatalf("big: %d lines, %d more", len(first), more)
	}
	if len(big.head) > headBytes {
		t.Fatalf("kept %d bytes", len(big.head))
	}
}

// TestPaginatedListing: a server that pages its tool list gets every
// page listed, not only the first; Info is the server's own.
func TestPaginatedListing(t *testing.T) {
	s := server.NewMCPServer("paged", "2.0", server.WithToolCapabilities(false), server.WithPaginationLimit(2))
	for i := range 5 {
		s.AddTool(mcp.NewTool(fmt.Sprintf("t%d", i)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	}
	src, err := Open(context.Background(), Options{Server: schema.Server{Builtin: &schema.Builtin{}}, Builtin: s})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if n, m := len(src.Tools()), len(src.Listed()); n != 5 || m != 5 {
		t.Fatalf("listed %d tools (%d raw), want 5", n, m)
	}
	if info := src.Info(); info.Name != "paged" || info.Version != "2.0" || info.ProtocolVersion == "" {
		t.Fatalf("Info = %+v", info)
	}
}
