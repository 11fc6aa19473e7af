package session

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolward/toolward/schema"
)

// quietLog drops mcp-go's transport logs: what goes wrong reaches the
// caller as an error (with the wire's fault), not as lines on stderr.
var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// startCommand starts a command server (its environment from
// CommandEnv, its stderr into head, in a process group of its own that
// dies with toolward where the OS allows: setProcAttr) and returns a
// transport over its stdin and stdout, both under w. ctx ends the
// process.
func startCommand(ctx context.Context, srv schema.Server, head *stderrHead, w *wire) (*transport.Stdio, *exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, srv.Command[0], srv.Command[1:]...)
	cmd.Env = CommandEnv(srv, os.Environ())
	cmd.Stderr = head
	cmd.WaitDelay = waitDelay
	setProcAttr(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return transport.NewIO(w.stdout(stdout), &stdinWriter{w: w, dst: stdin}, nil), cmd, nil
}

// stdioConn is mcp-go's stdio transport (embedded, so that the client
// still finds its optional interfaces) with discoverChecked applied to
// every answer. (A url connection never sends server/discover: the GET
// stream, which protocol 2026-07-28 removed, keeps it on the handshake.)
type stdioConn struct{ *transport.Stdio }

func (t *stdioConn) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.Stdio.SendRequest(ctx, req)
	return discoverChecked(req, resp), err
}

// discoverChecked turns an answer to server/discover that is not a
// discovery result (a server that answers unknown methods with {})
// into "method not found", so that the client falls back to the
// initialize handshake. A result must list the versions the server
// supports.
func discoverChecked(req transport.JSONRPCRequest, resp *transport.JSONRPCResponse) *transport.JSONRPCResponse {
	if resp == nil || resp.Error != nil || req.Method != string(mcp.MethodServerDiscover) {
		return resp
	}
	var r struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(resp.Result, &r) == nil && len(r.SupportedVersions) > 0 {
		return resp
	}
	out := *transport.NewJSONRPCErrorResponse(resp.ID, mcp.METHOD_NOT_FOUND, "not a server/discover result (no supportedVersions)", nil)
	return &out
}
