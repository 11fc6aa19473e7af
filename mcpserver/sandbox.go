package mcpserver

import (
	"context"
	"errors"
	"sync"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/mcpserver/sqlbox"
)

// Ticket is a ticket created by create_ticket in one session.
type Ticket struct {
	ID       string `json:"ticket_id"`
	Title    string `json:"title"`
	Body     string `json:"body"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

// Email is a message sent by send_email in one session.
type Email struct {
	ID      string `json:"message_id"`
	To      string `json:"to"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

// sandbox is one session's private state. The database copy is made on
// first use, so sessions that never touch it cost nothing.
type sandbox struct {
	tmpl *sqlbox.Template

	mu      sync.Mutex
	db      *sqlbox.Box
	closed  bool
	tickets []Ticket
	emails  []Email
}

// errSessionEnded answers a call that reaches its sandbox after the
// session ended: a database opened then would never be closed.
var errSessionEnded = errors.New("the MCP session has ended")

// database returns the session's database, creating it on first use.
func (sb *sandbox) database() (*sqlbox.Box, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.closed {
		return nil, errSessionEnded
	}
	if sb.db == nil {
		db, err := sb.tmpl.Open()
		if err != nil {
			return nil, err
		}
		sb.db = db
	}
	return sb.db, nil
}

func (sb *sandbox) close() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.closed = true
	if sb.db != nil {
		sb.db.Close()
		sb.db = nil
	}
}

// sandbox returns the calling session's sandbox and a release function.
// Sandboxes exist from a session's registration to its unregistration
// (see the hooks in New). A call outside a registered session (a
// stateless transport such as streamable HTTP on protocol 2026-07-28,
// where every request is its own session, or a call racing its session's
// end) gets a throwaway sandbox that release discards.
func (s *Server) sandbox(ctx context.Context) (*sandbox, func()) {
	if session := server.ClientSessionFromContext(ctx); session != nil {
		if v, ok := s.sandboxes.Load(session.SessionID()); ok {
			return v.(*sandbox), func() {}
		}
	}
	sb := &sandbox{tmpl: s.db}
	return sb, sb.close
}

func (s *Server) addSandbox(id string) {
	if id != "" {
		s.sandboxes.LoadOrStore(id, &sandbox{tmpl: s.db})
	}
}

func (s *Server) dropSandbox(id string) {
	if v, ok := s.sandboxes.LoadAndDelete(id); ok {
		v.(*sandbox).close()
	}
}

// Sessions reports how many session sandboxes are live.
func (s *Server) Sessions() int {
	n := 0
	s.sandboxes.Range(func(_, _ any) bool { n++; return true })
	return n
}
