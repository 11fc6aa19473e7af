package mcpserver

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// tickets is what state_tickets returns on c.
func tickets(t *testing.T, c *client.Client) []Ticket {
	t.Helper()
	r := call(t, c, "state_tickets", nil)
	wantOK(t, r)
	var out struct{ Tickets []Ticket }
	structured(t, r, &out)
	return out.Tickets
}

// TestUpdateTicket: update_ticket changes the priority, the status or
// both of one of the session's tickets and returns it as it now is; the
// other fields, the other tickets and other sessions are untouched.
func TestUpdateTicket(t *testing.T) {
	t.Parallel()
	s := fresh(t)
	c := connect(t, s)
	wantOK(t, call(t, c, "create_ticket", map[string]any{"title": "Backup failed on db-2", "body": "Nightly job.", "priority": "medium"}))
	wantOK(t, call(t, c, "create_ticket", map[string]any{"title": "Printer jam", "body": "Floor 3.", "priority": "low"}))
	other := connect(t, s)
	wantOK(t, call(t, other, "create_ticket", map[string]any{"title": "Elsewhere", "body": "x", "priority": "low"}))

	r := call(t, c, "update_ticket", map[string]any{"ticket_id": "TCK-1001", "priority": "high"})
	wantOK(t, r)
	var got struct {
		ID       string `json:"ticket_id"`
		Title    string `json:"title"`
		Priority string `json:"priority"`
		Status   string `json:"status"`
	}
	structured(t, r, &got)
	if got.ID != "TCK-1001" || got.Title != "Backup failed on db-2" || got.Priority != "high" || got.Status != "open" {
		t.Errorf("update_ticket priority: %+v", got)
	}
	if want := `Ticket TCK-1001 "Backup failed on db-2" now has high priority (status open).`; text(r) != want {
		t.Errorf("text %q, want %q", text(r), want)
	}
	// Status alone; then both; an id with space around it is the same id.
	wantOK(t, call(t, c, "update_ticket", map[string]any{"ticket_id": "TCK-1001", "status": "in_progress"}))
	r = call(t, c, "update_ticket", map[string]any{"ticket_id": " TCK-1002 ", "priority": "urgent", "status": "closed"})
	wantOK(t, r)
	structured(t, r, &got)
	if got.ID != "TCK-1002" || got.Priority != "urgent" || got.Status != "closed" {
		t.Errorf("update_ticket both: %+v", got)
	}
	want := []Ticket{
		{ID: "TCK-1001", Title: "Backup failed on db-2", Body: "Nightly job.", Priority: "high", Status: "in_progress"},
		{ID: "TCK-1002", Title: "Printer jam", Body: "Floor 3.", Priority: "urgent", Status: "closed"},
	}
	if ts := tickets(t, c); len(ts) != 2 || ts[0] != want[0] || ts[1] != want[1] {
		t.Errorf("tickets after the updates:\n%+v\nwant\n%+v", ts, want)
	}
	if ts := tickets(t, other); len(ts) != 1 || ts[0].Priority != "low" || ts[0].Status != "open" {
		t.Errorf("the other session's ticket changed: %+v", ts)
	}
	// Updating keeps the store's count: no ticket is added.
	var sb *sandbox
	s.sandboxes.Range(func(_, v any) bool {
		if x := v.(*sandbox); len(x.tickets) == 2 {
			sb = x
		}
		return true
	})
	sb.mu.Lock()
	n, size := len(sb.tickets), sb.storedBytes
	sb.mu.Unlock()
	if wantSize := ticketSize("Backup failed on db-2", "Nightly job.", "high") + ticketSize("Printer jam", "Floor 3.", "urgent"); n != 2 || size != wantSize {
		t.Errorf("store: %d tickets, %d bytes; want 2, %d", n, size, wantSize)
	}
}

// TestUpdateTicketRefusals: what update_ticket refuses is an isError
// result the model can act on, and changes nothing: an unknown ticket
// (named in the result, clipped), no change asked for, and arguments the
// schema refuses (required id, the enums, the id's maxLength, types).
func TestUpdateTicketRefusals(t *testing.T) {
	t.Parallel()
	c := connect(t, fresh(t))
	wantOK(t, call(t, c, "create_ticket", map[string]any{"title": "t", "body": "b", "priority": "low"}))
	before := tickets(t, c)

	wantToolError(t, call(t, c, "update_ticket", map[string]any{"ticket_id": "TCK-9999", "priority": "high"}),
		`there is no ticket "TCK-9999" in this session; create_ticket returns the id`)
	wantToolError(t, call(t, c, "update_ticket", map[string]any{"ticket_id": "", "status": "closed"}), `there is no ticket ""`)
	wantToolError(t, call(t, c, "update_ticket", map[string]any{"ticket_id": "TCK-1001"}), `update_ticket: give a new priority or status for "TCK-1001"`)
	// At the schema's maxLength the id is served (and quoted back whole,
	// being under maxEcho).
	long := strings.Repeat("T", 100)
	wantToolError(t, call(t, c, "update_ticket", map[string]any{"ticket_id": long, "priority": "high"}), `there is no ticket "`+long+`"`)
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"priority": "high"}, `required: missing properties: ["ticket_id"]`},
		{map[string]any{"ticket_id": "TCK-1001", "priority": "critical"}, "argument priority: enum: critical does not equal any of: [low medium high urgent]"},
		{map[string]any{"ticket_id": "TCK-1001", "status": "done"}, "argument status: enum: done does not equal any of: [open in_progress closed]"},
		{map[string]any{"ticket_id": "TCK-1001", "priority": ""}, "argument priority: enum"},
		{map[string]any{"ticket_id": strings.Repeat("T", 101), "priority": "high"}, "argument ticket_id: maxLength"},
		{map[string]any{"ticket_id": 1001, "priority": "high"}, `argument ticket_id: type: 1001 has type "integer", want "string"`},
		{map[string]any{"ticket_id": "TCK-1001", "priority": []any{"high"}}, `argument priority: type`},
	} {
		wantToolError(t, call(t, c, "update_ticket", tt.args), InvalidArgumentsPrefix+"update_ticket: "+tt.want)
	}
	if after := tickets(t, c); len(after) != 1 || after[0] != before[0] {
		t.Errorf("a refused update changed the tickets: %+v, was %+v", after, before)
	}
}

// TestUpdateTicketConfirm: with a client that can be asked, update_ticket
// changes the ticket only when the user accepts; and, as the other tools
// that change the world, it refuses an unknown ticket before asking, so
// the user never approves a change that cannot happen.
func TestUpdateTicketConfirm(t *testing.T) {
	t.Parallel()
	s := fresh(t)
	for _, tt := range []struct {
		action mcp.ElicitationResponseAction
		want   string // "": the update happens
	}{
		{mcp.ElicitationResponseActionDecline, "The user declined: update_ticket did not"},
		{mcp.ElicitationResponseActionCancel, "The user cancelled the confirmation"},
		{mcp.ElicitationResponseActionAccept, ""},
	} {
		e := &elicitor{action: mcp.ElicitationResponseActionAccept}
		c := connect(t, s, client.WithElicitationHandler(e))
		wantOK(t, call(t, c, "create_ticket", map[string]any{"title": "Backup", "body": "b", "priority": "low"}))
		e.action = tt.action
		asked := len(e.asked)
		r := call(t, c, "update_ticket", map[string]any{"ticket_id": "TCK-1001", "priority": "high"})
		if len(e.asked) != asked+1 || !strings.Contains(e.asked[asked], "TCK-1001") {
			t.Errorf("%s: asked %q", tt.action, e.asked[asked:])
		}
		prio := tickets(t, c)[0].Priority
		if tt.want != "" {
			wantToolError(t, r, tt.want)
			if !strings.Contains(text(r), "nothing was changed") || prio != "low" {
				t.Errorf("%s: %q, priority %s", tt.action, text(r), prio)
			}
			continue
		}
		wantOK(t, r)
		if prio != "high" {
			t.Errorf("accepted: priority %s", prio)
		}
		asked = len(e.asked)
		wantToolError(t, call(t, c, "update_ticket", map[string]any{"ticket_id": "TCK-4242", "priority": "high"}), "there is no ticket")
		if len(e.asked) != asked {
			t.Errorf("the user was asked to confirm a change of a ticket that does not exist: %q", e.asked[asked:])
		}
	}
}
