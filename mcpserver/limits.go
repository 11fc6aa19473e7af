package mcpserver

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"sync"
	"time"
)

// slots is a counting limit: acquire succeeds while live() plus the
// slots held stays below max.
type slots struct {
	max  int
	live func() int // nil: nothing but the held slots counts

	mu   sync.Mutex
	held int
}

// acquire takes a slot, reporting false if none is free. release gives
// it back; call it once.
func (sl *slots) acquire() (release func(), ok bool) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	n := sl.held
	if sl.live != nil {
		n += sl.live()
	}
	if n >= sl.max {
		return nil, false
	}
	sl.held++
	return sync.OnceFunc(func() {
		sl.mu.Lock()
		sl.held--
		sl.mu.Unlock()
	}), true
}

// sessionIDs issues and checks HTTP session ids. Unlike mcp-go's
// InsecureStatefulSessionIdManager it forgets an id once the session
// ends, so its memory follows the live sessions, not all that ever were.
// Ids issued to an initialize that never became a session are forgotten
// by mcp-go's idle sweeper, which terminates them.
type sessionIDs struct {
	ids sync.Map // id → struct{}
}

const sessionIDPrefix = "mcp-session-"

// Generate implements server.SessionIdManager.
func (m *sessionIDs) Generate() string {
	id := sessionIDPrefix + rand.Text()
	m.ids.Store(id, struct{}{})
	return id
}

// Validate implements server.SessionIdManager: an unknown id (never
// issued, or ended) is an error, which mcp-go answers with 404.
func (m *sessionIDs) Validate(id string) (isTerminated bool, err error) {
	if !m.known(id) {
		return false, fmt.Errorf("unknown or ended session %q", id)
	}
	return false, nil
}

// known reports whether id was issued and has not ended.
func (m *sessionIDs) known(id string) bool {
	_, ok := m.ids.Load(id)
	return ok
}

// Terminate implements server.SessionIdManager.
func (m *sessionIDs) Terminate(id string) (isNotAllowed bool, err error) {
	m.ids.Delete(id)
	return false, nil
}

// streamSet holds the cancel functions of open event streams by session
// id, so that a session's end ends its streams.
type streamSet struct {
	mu   sync.Mutex
	seq  uint64
	byID map[string]map[uint64]context.CancelFunc
}

// add registers a stream of session id; remove unregisters it.
func (ss *streamSet) add(id string, cancel context.CancelFunc) (remove func()) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID == nil {
		ss.byID = map[string]map[uint64]context.CancelFunc{}
	}
	if ss.byID[id] == nil {
		ss.byID[id] = map[uint64]context.CancelFunc{}
	}
	ss.seq++
	n := ss.seq
	ss.byID[id][n] = cancel
	return func() {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		delete(ss.byID[id], n)
		if len(ss.byID[id]) == 0 {
			delete(ss.byID, id)
		}
	}
}

// end cancels every stream of session id.
func (ss *streamSet) end(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, cancel := range ss.byID[id] {
		cancel()
	}
}

// limitConns returns ln accepting at most max connections at a time.
// A connection over the cap is answered 503 and closed, rather than left
// waiting in the backlog for a slot.
func limitConns(ln net.Listener, max int) net.Listener {
	return &connLimit{Listener: ln, max: max, slots: make(chan struct{}, max)}
}

type connLimit struct {
	net.Listener
	max   int
	slots chan struct{}
}

// Accept implements net.Listener.
func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
		default:
			l.refuse(c)
		}
	}
}

// refuse answers c with 503 and closes it. The answer fits in the empty
// send buffer of a new connection; the deadline is a safeguard.
func (l *connLimit) refuse(c net.Conn) {
	msg := fmt.Sprintf("server busy: %d connections are open, the limit\n", l.max)
	c.SetWriteDeadline(time.Now().Add(time.Second))
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(msg), msg)
	c.Close()
}

// limitedConn gives its slot back when closed.
type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	c.release()
	return c.Conn.Close()
}
