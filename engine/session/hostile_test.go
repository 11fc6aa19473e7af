package session

import (
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/fixtures/fakes/hostilemcp"
	"github.com/toolward/toolward/schema"
)

// smallMessage is the message limit the hostile-server tests inject.
const smallMessage = 64 << 10

// readBound is what a connection may read for one message under
// smallMessage: the message and the reader's buffers.
const readBound = smallMessage + 256<<10

// hostileServers runs mode as a command server and as a url server.
func hostileServers(t *testing.T, mode string) map[string]schema.Server {
	hs := httptest.NewServer(hostilemcp.Handler(mode))
	t.Cleanup(hs.Close)
	return map[string]schema.Server{"stdio": selfCommand(t, "hostile:"+mode), "http": {URL: hs.URL}}
}

// TestHostileAnswers: a tool call answered with one endless message, a
// message that is not JSON or one nested too deep fails at once as an
// mcp *Error naming the fault (the limit, or what the server sent),
// having read a bounded number of bytes; before, an endless line was
// read whole (gigabytes) and a bad line was dropped in silence until the
// call timed out.
func TestHostileAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, want string
		limit      bool
	}{
		{"longline", "session.MaxMessage", true},
		{"badjson", "not JSON", false},
		{"deepjson", "nested deeper than", false},
		{"comments", "session.MaxMessage", true},
		{"bigbody", "session.MaxMessage", true},
	} {
		for kind, srv := range hostileServers(t, tc.mode) {
			if (tc.mode == "comments" || tc.mode == "bigbody") && kind == "stdio" {
				continue
			}
			t.Run(tc.mode+"/"+kind, func(t *testing.T) {
				t.Parallel()
				ctx := safety(t)
				_, sess := openSession(t, ctx, Options{Server: srv, Limits: Limits{Message: smallMessage}})
				_, err := sess.Call(ctx, "echo", nil, 50*time.Second)
				var se *Error
				if !errors.As(err, &se) || se.Kind != "mcp" || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want an mcp *Error saying %q", err, tc.want)
				}
				var le *LimitError
				var pe *ProtocolError
				if tc.limit && !errors.As(err, &le) || !tc.limit && !errors.As(err, &pe) {
					t.Fatalf("err = %v (%T), want a LimitError: %v", err, errors.Unwrap(err), tc.limit)
				}
				if n := sess.c.wire.read.Load(); n > readBound {
					t.Fatalf("read %d bytes, want at most %d", n, readBound)
				}
			})
		}
	}
}

// TestHostileListing: a tools/list answered with a non-JSON message, or
// with new cursors forever, fails Open with what went wrong; before, the
// first waited for the 2-minute connect limit and the second read
// pages until then (hundreds of thousands, over a gigabyte).
func TestHostileListing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, want string }{
		{"badlist", "not JSON"},
		{"pages", "session.MaxListPages"},
	} {
		for kind, srv := range hostileServers(t, tc.mode) {
			t.Run(tc.mode+"/"+kind, func(t *testing.T) {
				t.Parallel()
				ctx := safety(t)
				src, err := Open(ctx, Options{Server: srv, Limits: Limits{Message: smallMessage, ListPages: 20}})
				if err == nil {
					src.Close()
					t.Fatal("Open succeeded")
				}
				var se *Error
				if !errors.As(err, &se) || se.Kind != "mcp" || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want an mcp *Error saying %q", err, tc.want)
				}
			})
		}
	}
}

// TestListToolsBound: more tools than Limits.ListTools fail the listing.
func TestListToolsBound(t *testing.T) {
	t.Parallel()
	ctx := safety(t)
	_, err := Open(ctx, Options{Server: hostileServers(t, "pages")["http"], Limits: Limits{ListTools: 5}})
	var le *LimitError
	if !errors.As(err, &le) || le.Name != "session.MaxListTools" {
		t.Fatalf("err = %v, want the tools limit", err)
	}
}

// TestFloodingServer: a server that sends elicitation requests without
// end and takes no answer (on stdio it stops reading its stdin, over
// HTTP it holds every answer's POST) fails the call once Limits.Pending
// requests wait for an answer; before, requests and answers piled up in
// toolward (2.3 GB for 400,000 on stdio).
func TestFloodingServer(t *testing.T) {
	t.Parallel()
	for kind, srv := range hostileServers(t, "flood") {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := safety(t)
			_, sess := openSession(t, ctx, Options{Server: srv, Limits: Limits{Pending: 8}})
			_, err := sess.Call(ctx, "echo", nil, 50*time.Second)
			var le *LimitError
			if !errors.As(err, &le) || le.Name != "session.MaxPending" {
				t.Fatalf("err = %v, want the pending-requests limit", err)
			}
			if n := sess.c.wire.read.Load(); n > 8<<20 {
				t.Fatalf("read %d bytes", n)
			}
		})
	}
}

// TestEmptyDiscover: a stdio server answering server/discover (like any
// unknown method) with {} is not taken for a modern server: the client
// makes the initialize handshake and learns the server's name. Before,
// the empty result was accepted and the name stayed empty.
func TestEmptyDiscover(t *testing.T) {
	t.Parallel()
	ctx := safety(t)
	src, err := Open(ctx, Options{Server: selfCommand(t, "hostile:emptydiscover")})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got := src.Info().Name; got != "hostile" {
		t.Fatalf("server name = %q, want hostile (from initialize)", got)
	}
}

// TestElicitationOnGetStream: a url server that asks for an elicitation
// on the GET stream during a call gets its answer; before, the stream
// was never opened and the call waited for its timeout.
func TestElicitationOnGetStream(t *testing.T) {
	t.Parallel()
	ctx := safety(t)
	src, err := Open(ctx, Options{Server: hostileServers(t, "elicitget")["http"]})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sess, err := src.Session(ctx, ConfirmApprove)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.Call(ctx, "echo", nil, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "user said accept" || !slices.Equal(res.Elicitations, []string{"accept"}) {
		t.Fatalf("result = %q, elicitations %v", res.Text, res.Elicitations)
	}
}

// TestCallOverAtTimeout: a call whose answer is still being taken
// (decoded) when its timeout passes is over then, as a timeout *Error;
// before, decoding a long answer ran on past the timeout (17 s for a
// 10 s call_timeout) and the call passed.
func TestCallOverAtTimeout(t *testing.T) {
	release := make(chan struct{})
	testAfterCall = func() { <-release }
	t.Cleanup(func() { close(release); testAfterCall = nil })
	ctx := safety(t)
	_, sess := openHang(t, Options{})
	_, err := sess.Call(ctx, "pid", nil, 50*time.Millisecond)
	var se *Error
	if !errors.As(err, &se) || se.Kind != "timeout" {
		t.Fatalf("err = %v, want a timeout *Error", err)
	}
}
