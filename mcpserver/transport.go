package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/toolward/toolward/mcpserver/sqlbox"
)

// Limits of both transports. HTTPOptions fields left zero take these.
const (
	// DefaultMaxBodyBytes caps one HTTP request body and one stdio line.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxSessions caps concurrent HTTP sessions. A request outside
	// a session (an initialize, or any request of a stateless 2026-07-28
	// client) counts as one while it runs. Each session owns a sandbox
	// whose query connection may hold up to sqlbox.MaxHeap, so the
	// sandboxes of all sessions stay under about
	// DefaultMaxSessions × SessionMemory (8 × 144 MiB ≈ 1.1 GiB).
	DefaultMaxSessions = 8
	// DefaultMaxStreams caps concurrently open GET event streams.
	DefaultMaxStreams = 16
	// DefaultMaxConns caps open connections; one over it is answered 503
	// and closed at once.
	DefaultMaxConns = 256
	// DefaultMaxRequests caps POST requests served at once, and so the
	// request bodies held once read (64 × DefaultMaxBodyBytes = 64 MiB).
	DefaultMaxRequests = 64
	// DefaultSessionIdleTTL ends HTTP sessions idle this long (checked
	// every half TTL, so a session goes between 1 and 1.5 TTL after its
	// last request).
	DefaultSessionIdleTTL = 30 * time.Minute
	// DefaultReadHeaderTimeout bounds how long a client may take to send
	// a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds how long a client may take to send a
	// request body, counted from the end of its headers.
	DefaultBodyTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds each write of a response (each event of
	// an event stream): a client that stops reading is cut off, while a
	// stream that is merely quiet stays open.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection idle this long.
	DefaultIdleTimeout = 60 * time.Second
)

// SessionMemory is a generous estimate of the memory one session's
// sandbox can hold: the SQLite heap limit of its query connection, plus
// its second connection, database image and WebAssembly instances, plus
// the text of its stored tickets and emails (MaxStoredBytes).
const SessionMemory = sqlbox.MaxHeap + 8<<20 + MaxStoredBytes

// errServerBusy is the JSON-RPC error code of a request refused for a
// limit on sessions (-32000 to -32099 are for implementations).
const errServerBusy = -32000

// rpcError is a JSON-RPC error answer, newline included. A nil id is
// sent as null.
func rpcError(id json.RawMessage, code int, msg string) []byte {
	type rpcErr struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcErr          `json:"error"`
	}{"2.0", id, rpcErr{code, msg}})
	return append(b, '\n')
}

// leadingID returns the "id" member of the JSON object prefix begins,
// if it comes before the cut, else nil.
func leadingID(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if t == "id" {
			if _, ok := idKey(v); ok {
				return v
			}
			return nil
		}
	}
	return nil
}

// rpcHead is what drain reads of a JSON-RPC message: a request has a
// method and an id, a notification a method only, an answer an id only.
type rpcHead struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
}

func parseHead(line []byte) (rpcHead, bool) {
	var m rpcHead
	err := json.Unmarshal(line, &m)
	return m, err == nil
}

// idKey canonicalizes a JSON-RPC id (a string or a number), so that a
// request's 1.0 and its answer's 1 match. Other ids (null, objects) are
// not ids a request can be answered under: ok is false.
func idKey(raw json.RawMessage) (key string, ok bool) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return "s" + v, true
	case float64:
		return "n" + strconv.FormatFloat(v, 'g', -1, 64), true
	}
	return "", false
}

// MaxJSONDepth is the deepest nesting of arrays and objects a request
// body may have: encoding/json, under mcp-go, refuses deeper ones.
const MaxJSONDepth = 10000

// errInvalidRequest is the JSON-RPC error code of a request that is valid
// JSON but not a request the server can serve.
const errInvalidRequest = -32600

// unservableBody says why body (an HTTP body or a stdio line), though
// perhaps valid JSON, cannot be served, or returns "". mcp-go would
// answer both cases as a parse error ("request body is not valid json",
// "Parse error"), which misleads: a JSON-RPC batch (an array; the MCP
// revision 2025-06-18 removed batching), and JSON nested deeper than
// MaxJSONDepth. where says how to send requests one by one.
func unservableBody(body []byte, where string) string {
	if i := bytes.IndexFunc(body, func(r rune) bool { return !isJSONSpace(r) }); i >= 0 && body[i] == '[' {
		return "JSON-RPC batch requests are not supported (MCP 2025-06-18 removed batching): send each request " + where
	}
	if jsonDeeperThan(body, MaxJSONDepth) {
		return fmt.Sprintf("request body nested too deeply: more than %d levels of arrays and objects", MaxJSONDepth)
	}
	return ""
}

func isJSONSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// jsonDeeperThan reports whether the JSON text b opens more than max
// arrays and objects at once. It scans bytes, skipping strings, without
// validating b (the JSON decoder does that afterwards).
func jsonDeeperThan(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > max {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}
