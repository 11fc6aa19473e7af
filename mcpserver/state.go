package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolward/toolward/mcpserver/sqlbox"
)

// The state tools (probe_only in tools.yaml) show a session's sandbox to
// toolward's state probes. They only read: the tickets and emails under
// the sandbox's lock, the database through the read-only query path
// (sqlbox.Box.Table: without the step budget and the backstop of a
// model's queries, bounded only by the call's context).

// snapshot returns copies of the session's tickets and emails.
func (sb *sandbox) snapshot() ([]Ticket, []Email) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	t := slices.Clone(sb.tickets)
	e := slices.Clone(sb.emails)
	if t == nil {
		t = []Ticket{}
	}
	if e == nil {
		e = []Email{}
	}
	return t, e
}

func (s *Server) stateTickets(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	t, _ := sb.snapshot()
	return mcp.NewToolResultStructured(map[string]any{"tickets": t}, fmt.Sprintf("%d tickets", len(t))), nil
}

func (s *Server) stateOutbox(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	_, e := sb.snapshot()
	return mcp.NewToolResultStructured(map[string]any{"emails": e}, fmt.Sprintf("%d emails", len(e))), nil
}

// stateTables are the tables state_table returns (its schema's enum).
var stateTables = []string{"departments", "employees", "projects", "assignments"}

func (s *Server) stateTable(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	table := str(args, "table")
	if !slices.Contains(stateTables, table) {
		return toolError("unknown table %q", table)
	}
	db, err := sb.database()
	if err != nil {
		return nil, err
	}
	res, err := db.Table(ctx, table)
	if err != nil {
		var qe *sqlbox.QueryError
		if errors.As(err, &qe) {
			return toolError("%s", qe.Msg)
		}
		return nil, err
	}
	if res.Truncated {
		return toolError("table %s has more rows than one result holds (%d)", table, sqlbox.MaxRows)
	}
	return mcp.NewToolResultStructured(map[string]any{"table": table, "rows": res.Rows, "row_count": res.RowCount},
		fmt.Sprintf("%d rows of %s", res.RowCount, table)), nil
}
