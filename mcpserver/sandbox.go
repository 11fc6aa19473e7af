package mcpserver

import (
	"context"
	"errors"
	"fmt"
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

// Limits of what one session's sandbox stores. create_ticket and
// send_email keep every ticket and email of the session in memory; past
// either limit they refuse with an isError result and store nothing.
const (
	// MaxStoredItems caps the tickets and emails, together, of one
	// session.
	MaxStoredItems = 1000
	// MaxStoredBytes caps the text (titles, bodies, addresses, subjects)
	// of the tickets and emails, together, of one session.
	MaxStoredBytes = 8 << 20
)

// sandbox is one session's private state. The database copy is made on
// first use, so sessions that never touch it cost nothing.
type sandbox struct {
	tmpl *sqlbox.Template

	mu          sync.Mutex
	db          *sqlbox.Box
	closed      bool
	tickets     []Ticket
	emails      []Email
	storedBytes int // text bytes of tickets and emails
}

// storeFullError says why a ticket or email was not stored: the
// session's store is at one of its limits.
type storeFullError struct {
	what  string // "ticket" or "email"
	items int    // items stored
	bytes int    // text bytes stored
	size  int    // text bytes of the item refused
}

func (e *storeFullError) Error() string {
	if e.items >= MaxStoredItems {
		return fmt.Sprintf("this session already holds %d tickets and emails, the most one session stores (%d); no %s was stored: start a new session to store more",
			e.items, MaxStoredItems, e.what)
	}
	return fmt.Sprintf("this %s (%d bytes of text) would bring the session's tickets and emails to %d bytes, over the %d (%d MiB) one session stores; no %s was stored: shorten it, or start a new session",
		e.what, e.size, e.bytes+e.size, MaxStoredBytes, MaxStoredBytes>>20, e.what)
}

// roomLocked reports whether one more item of size text bytes fits the
// store limits; sb.mu must be held.
func (sb *sandbox) roomLocked(what string, size int) error {
	items := len(sb.tickets) + len(sb.emails)
	if items >= MaxStoredItems || sb.storedBytes+size > MaxStoredBytes {
		return &storeFullError{what: what, items: items, bytes: sb.storedBytes, size: size}
	}
	return nil
}

// room reports whether one more item of size text bytes fits, without
// storing anything: a side-effect tool checks it before asking the user
// to confirm an action that would then be refused.
func (sb *sandbox) room(what string, size int) error {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.roomLocked(what, size)
}

// ticketSize and emailSize are the text bytes an item holds.
func ticketSize(title, body, prio string) int { return len(title) + len(body) + len(prio) }
func emailSize(to, subject, body string) int  { return len(to) + len(subject) + len(body) }

// addTicket stores a new open ticket, numbered after the session's
// earlier ones, if it fits the store limits.
func (sb *sandbox) addTicket(title, body, prio string) (Ticket, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	size := ticketSize(title, body, prio)
	if err := sb.roomLocked("ticket", size); err != nil {
		return Ticket{}, err
	}
	t := Ticket{ID: fmt.Sprintf("TCK-%d", 1001+len(sb.tickets)), Title: title, Body: body, Priority: prio, Status: "open"}
	sb.tickets = append(sb.tickets, t)
	sb.storedBytes += size
	return t, nil
}

// ticket returns the session's ticket id; false when there is none.
func (sb *sandbox) ticket(id string) (Ticket, bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for _, t := range sb.tickets {
		if t.ID == id {
			return t, true
		}
	}
	return Ticket{}, false
}

// updateTicket sets the priority and the status (those given, not "")
// of the session's ticket id and returns it as it now is; false when the
// session has no such ticket. No item is added; the stored bytes follow
// the priority's length (an enum word, so a few bytes at most).
func (sb *sandbox) updateTicket(id, prio, status string) (Ticket, bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for i := range sb.tickets {
		t := &sb.tickets[i]
		if t.ID != id {
			continue
		}
		if prio != "" {
			sb.storedBytes += len(prio) - len(t.Priority)
			t.Priority = prio
		}
		if status != "" {
			t.Status = status
		}
		return *t, true
	}
	return Ticket{}, false
}

// addEmail stores a sent email, numbered after the session's earlier
// ones, if it fits the store limits.
func (sb *sandbox) addEmail(to, subject, body string) (Email, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	size := emailSize(to, subject, body)
	if err := sb.roomLocked("email", size); err != nil {
		return Email{}, err
	}
	e := Email{ID: fmt.Sprintf("MSG-%d", 1+len(sb.emails)), To: to, Subject: subject, Body: body}
	sb.emails = append(sb.emails, e)
	sb.storedBytes += size
	return e, nil
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
