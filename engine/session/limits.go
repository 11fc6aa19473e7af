package session

import (
	"fmt"

	"github.com/toolward/toolward/schema/record"
)

// Bounds on what toolward reads from a command or url MCP server (the
// builtin server is toolward's own and is not bounded). Going over one
// fails the call or the listing in progress as an infrastructure error
// (Kind "mcp") that names the limit, and the connection is dropped.
const (
	// MaxMessage is the size of one JSON-RPC message read from a server:
	// one stdio line, one server-sent event (its data and other fields;
	// comments are dropped as they come), or one JSON response body.
	MaxMessage = 16 << 20
	// MaxListPages is the number of tools/list pages followed.
	MaxListPages = 1000
	// MaxListTools is the number of tools listed, over all pages.
	MaxListTools = 10_000
	// MaxListBytes is what a whole tools/list may read, over all pages.
	MaxListBytes = 64 << 20
	// MaxPending is the number of server-to-client requests (elicitation,
	// sampling, roots, ping) a server may have sent whose answers it has
	// not taken yet (on stdio: written to its stdin; over HTTP: POSTed),
	// so that a server that does not take them reaches this bound instead
	// of piling up requests and answers in toolward's memory.
	MaxPending = 64
	// MaxStreamRefusals is how many times in a row a url server may
	// refuse the GET event stream (an answer that is not an event
	// stream, or no answer) before toolward stops asking for it on that
	// connection; a refusal that will not change (a 4xx but 401, 404,
	// 408 and 429, or a 2xx that is not an event stream) stops it at
	// once. Left to itself, mcp-go would ask again every second for as
	// long as the connection lives. The connection works on without the
	// stream: only requests the server would send there go unanswered.
	MaxStreamRefusals = 3
	// MaxString is what toolward keeps of one JSON string in a message
	// from a server (a tool's text, a structured value's string), in
	// bytes as sent: a longer one is clipped while the message is read
	// (see clipper), so the model, the scorer and the record get its
	// first MaxString bytes and a marker with its length and a digest of
	// the rest. It is record.MaxFieldBytes, the most a record keeps.
	MaxString = record.MaxFieldBytes
	// MaxHeld is the most toolward holds of one message from a server
	// once its strings are clipped (a structure of many short strings or
	// numbers shrinks no further); a longer one fails the call. A
	// tools/list page is bounded by MaxMessage and MaxListBytes instead.
	MaxHeld = 4 << 20
	// MaxProbeBytes bounds what one session's harness calls
	// (setup calls, state probes, golden replays' probes) get in all:
	// record.MaxRecordBytes, the most one run's record keeps. The
	// model's own calls are bounded by the conversation's limit
	// (agent.DefaultMaxConversationBytes).
	MaxProbeBytes = record.MaxRecordBytes
)

// Limits override the bounds above for one Source; a zero field means
// the constant's value. Tests inject small ones.
type Limits struct {
	Message   int
	ListPages int
	ListTools int
	ListBytes int64
	Pending   int
	// StreamRefusals: see MaxStreamRefusals.
	StreamRefusals int
	// SeedBytes: see MaxSeedBytes.
	SeedBytes int64
	// String, Held, ProbeBytes: see MaxString, MaxHeld, MaxProbeBytes.
	String, Held, ProbeBytes int
}

func (l Limits) withDefaults() Limits {
	l.Message = positiveOr(l.Message, MaxMessage)
	l.ListPages = positiveOr(l.ListPages, MaxListPages)
	l.ListTools = positiveOr(l.ListTools, MaxListTools)
	l.ListBytes = positiveOr(l.ListBytes, MaxListBytes)
	l.Pending = positiveOr(l.Pending, MaxPending)
	l.StreamRefusals = positiveOr(l.StreamRefusals, MaxStreamRefusals)
	l.SeedBytes = positiveOr(l.SeedBytes, MaxSeedBytes)
	l.String = positiveOr(l.String, MaxString)
	l.Held = positiveOr(l.Held, MaxHeld)
	l.ProbeBytes = positiveOr(l.ProbeBytes, MaxProbeBytes)
	return l
}

// positiveOr is v, or d when v is not positive.
func positiveOr[T int | int64](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// LimitError says that a server went over one of the bounds.
type LimitError struct {
	What  string // "one message", "tools/list pages", …
	Limit int64
	Name  string // the constant, e.g. "session.MaxMessage"
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the server went over toolward's limit of %s for %s (%s; see docs/limits.md)", amount(e.Limit, e.What), e.What, e.Name)
}

// amount prints a byte limit in MiB/KiB and counts as numbers.
func amount(n int64, what string) string {
	switch what {
	case "one message", "one tools/list", heldWhat:
		switch {
		case n >= 1<<20 && n%(1<<20) == 0:
			return fmt.Sprintf("%d MiB", n>>20)
		case n >= 1<<10 && n%(1<<10) == 0:
			return fmt.Sprintf("%d KiB", n>>10)
		}
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d", n)
}

// ProtocolError says that a server sent something that is not a JSON-RPC
// message where one had to be. Quote is the beginning of what it sent.
type ProtocolError struct {
	Msg   string
	Quote string
}

func (e *ProtocolError) Error() string {
	if e.Quote == "" {
		return "the server sent " + e.Msg
	}
	return fmt.Sprintf("the server sent %s: %q", e.Msg, e.Quote)
}
