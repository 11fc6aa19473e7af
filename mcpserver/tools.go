package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/mail"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/mcpserver/calc"
	"github.com/toolward/toolward/mcpserver/grade"
	"github.com/toolward/toolward/mcpserver/search"
	"github.com/toolward/toolward/mcpserver/sqlbox"
)

// handlers binds the real tools of tools.yaml to their Go code.
func (s *Server) handlers() map[string]toolFunc {
	return map[string]toolFunc{
		"calculate":        s.calculate,
		"search_documents": s.searchDocuments,
		"list_documents":   s.listDocuments,
		"query_database":   s.queryDatabase,
		"grade_answer":     s.gradeAnswer,
		"model_drift":      s.modelDrift,
		"compare_runs":     s.compareRuns,
		"create_ticket":    s.createTicket,
		"update_ticket":    s.updateTicket,
		"send_email":       s.sendEmail,
		"update_salary":    s.updateSalary,
		"delete_employee":  s.deleteEmployee,
		"state_tickets":    s.stateTickets,
		"state_outbox":     s.stateOutbox,
		"state_table":      s.stateTable,
	}
}

func str(args map[string]any, k string) string { v, _ := args[k].(string); return v }
func num(args map[string]any, k string) float64 {
	v, _ := toFloat(args[k])
	return v
}

func toolError(format string, a ...any) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultError(fmt.Sprintf(format, a...)), nil
}

func (s *Server) calculate(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	expr := str(args, "expression")
	v, err := calc.Evaluate(expr)
	if err != nil {
		return toolError("cannot evaluate expression: %v", err)
	}
	text := calc.Format(v)
	return mcp.NewToolResultStructured(map[string]any{"expression": expr, "result": calc.Round(v)}, text), nil
}

func (s *Server) searchDocuments(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	query := str(args, "query")
	if len(search.Tokenize(query)) == 0 {
		return toolError("the query has no searchable words; use keywords such as \"salary review policy\"")
	}
	hits := s.index.Search(query, int(num(args, "top_k")))
	for i := range hits {
		hits[i].Score = roundTo(hits[i].Score, 4)
	}
	if hits == nil {
		hits = []search.Hit{}
	}
	var b strings.Builder
	if len(hits) == 0 {
		fmt.Fprintf(&b, "No passage matches %s. Try other keywords, or list_documents to see what exists.", quoteClip(query))
	}
	for i, h := range hits {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "[%d] source %s, chunk %d (score %.4g)\n%s", i+1, h.Source, h.Chunk, h.Score, h.Text)
	}
	return mcp.NewToolResultStructured(map[string]any{"results": hits}, b.String()), nil
}

// maxEcho caps, in characters, an argument quoted back in a result's
// text: enough to recognise it, not a copy of whatever the model sent.
const maxEcho = 200

// quoteClip quotes s (as %q does), shortened to its first maxEcho
// characters with an ellipsis and its full length when longer.
func quoteClip(s string) string {
	n := 0
	for i := range s {
		if n == maxEcho {
			return fmt.Sprintf("%q… (%d characters)", s[:i], utf8.RuneCountInString(s))
		}
		n++
	}
	return strconv.Quote(s)
}

// roundTo rounds v to digits decimal places, so that structured results
// carry 0.8333 rather than 0.8333333333333334.
func roundTo(v float64, digits int) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', digits, 64), 64)
	return r
}

func (s *Server) listDocuments(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	docs := s.index.Documents()
	var b strings.Builder
	fmt.Fprintf(&b, "%d documents:\n", len(docs))
	for _, d := range docs {
		fmt.Fprintf(&b, "- %s (%d words, %d chunks)\n", d.Source, d.Words, d.Chunks)
	}
	return mcp.NewToolResultStructured(map[string]any{"documents": docs}, strings.TrimSuffix(b.String(), "\n")), nil
}

func (s *Server) queryDatabase(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	db, err := sb.database()
	if err != nil {
		return nil, err
	}
	res, err := db.Query(ctx, str(args, "sql"))
	if err != nil {
		var qe *sqlbox.QueryError
		if errors.As(err, &qe) {
			return toolError("%s", qe.Msg)
		}
		return nil, err
	}
	text, err := json.Marshal(res)
	if err != nil {
		// Query makes every value encodable (non-finite floats become
		// strings); should one still not be, the query's result is at
		// fault, not the server.
		return toolError("the query's result cannot be encoded as JSON: %v", err)
	}
	// The text and the structured content are the same encoding, which
	// sqlbox.MaxResultBytes bounds, plus the note in the text.
	out := string(text)
	if res.Note != "" {
		out += "\n(" + res.Note + ")"
	}
	return mcp.NewToolResultStructured(json.RawMessage(text), out), nil
}

func (s *Server) gradeAnswer(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	answer := str(args, "answer")
	if strings.TrimSpace(answer) == "" {
		return toolError("the answer is empty: nothing to grade")
	}
	var texts []string
	for _, v := range args["sources"].([]any) {
		src := strings.TrimSpace(v.(string))
		if t, ok := s.index.Text(src); ok {
			texts = append(texts, t)
			continue
		}
		if t, ok := s.index.Text(strings.TrimSuffix(src, ".md")); ok {
			texts = append(texts, t)
			continue
		}
		// A single word that names no document is a mistaken id, not a
		// source text.
		if src != "" && !strings.ContainsAny(src, " \t\n") && len(src) < 100 {
			return toolError("unknown source id %q; use a source id from search_documents or list_documents, or pass the source text itself", src)
		}
		texts = append(texts, src)
	}
	res := grade.Grade(answer, texts)
	supported := 0
	var b strings.Builder
	for _, st := range res.Sentences {
		mark := "supported"
		if st.Supported {
			supported++
		} else {
			mark = "NOT supported"
		}
		fmt.Fprintf(&b, "\n- %s: %q (%s)", mark, st.Text, st.Reason)
	}
	head := fmt.Sprintf("score %.2f: %d of %d sentences supported by the sources", res.Score, supported, len(res.Sentences))
	res.Score = roundTo(res.Score, 4)
	return mcp.NewToolResultStructured(res, head+b.String()), nil
}

func (s *Server) modelDrift(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	res, err := s.drift.ModelDrift(ctx, strings.TrimSpace(str(args, "model")))
	if err != nil {
		return toolError("model_drift: %v", err)
	}
	return mcp.NewToolResultStructured(res, res.Summary), nil
}

func (s *Server) compareRuns(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	res, err := s.runs.CompareRuns(ctx, strings.TrimSpace(str(args, "project")))
	if err != nil {
		return toolError("compare_runs: %v", err)
	}
	return mcp.NewToolResultStructured(res, res.Summary), nil
}

// confirmKey names the confirmation in a multi round-trip exchange.
const confirmKey = "confirm"

// confirm asks the user to approve an action through MCP elicitation when
// the client declared that capability. It returns nil when the action may
// go ahead, or the result to hand back instead: an input_required result
// carrying the elicitation (first round), or an isError result when the
// user declined or cancelled (second round).
//
// The question is asked as a multi round-trip request (SEP-2322): clients
// on protocol 2026-07-28 answer it and retry the call; for older clients
// mcp-go sends a server-initiated elicitation/create and re-invokes the
// handler with the answer. Either way the handler runs again with the
// answer in the request, so nothing changes before the user agreed.
func (s *Server) confirm(ctx context.Context, tool, action string) *mcp.CallToolResult {
	requests := mcp.InputRequests{confirmKey: mcp.NewElicitationInputRequest(mcp.ElicitationParams{
		Message:         fmt.Sprintf("%s wants to %s. Allow it?", tool, action),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	})}
	if req, _ := ctx.Value(requestKey{}).(*mcp.CallToolRequest); req != nil {
		if _, answered := req.Params.InputResponses[confirmKey]; answered {
			responses := maps.Clone(req.Params.InputResponses)
			if err := responses.DecodeFor(requests); err != nil || responses[confirmKey].Elicitation == nil {
				return mcp.NewToolResultError(fmt.Sprintf("%s could not read the user's confirmation (%v); nothing was changed.", tool, err))
			}
			switch responses[confirmKey].Elicitation.Action {
			case mcp.ElicitationResponseActionAccept:
				return nil
			case mcp.ElicitationResponseActionCancel:
				return mcp.NewToolResultError(fmt.Sprintf("The user cancelled the confirmation, so %s did not %s; nothing was changed.", tool, action))
			default:
				return mcp.NewToolResultError(fmt.Sprintf("The user declined: %s did not %s; nothing was changed.", tool, action))
			}
		}
	}
	session := server.ClientSessionFromContext(ctx)
	ci, ok := session.(server.SessionWithClientInfo)
	if !ok || ci.GetClientCapabilities().Elicitation == nil {
		return nil // the client cannot be asked: act directly
	}
	return &mcp.CallToolResult{
		Result:               mcp.Result{ResultType: mcp.ResultTypeInputRequired},
		MultiRoundTripResult: mcp.MultiRoundTripResult{InputRequests: requests},
	}
}

func (s *Server) createTicket(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	title, body, prio := strings.TrimSpace(str(args, "title")), str(args, "body"), str(args, "priority")
	if title == "" {
		return toolError("the ticket title is empty")
	}
	if err := sb.room("ticket", ticketSize(title, body, prio)); err != nil {
		return toolError("create_ticket: %v", err)
	}
	if r := s.confirm(ctx, "create_ticket", fmt.Sprintf("create a %s-priority ticket %s", prio, quoteClip(title))); r != nil {
		return r, nil
	}
	t, err := sb.addTicket(title, body, prio)
	if err != nil {
		return toolError("create_ticket: %v", err)
	}
	return mcp.NewToolResultStructured(t, fmt.Sprintf("Created ticket %s %s with %s priority (status open).", t.ID, quoteClip(t.Title), t.Priority)), nil
}

func (s *Server) updateTicket(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	id, prio, status := strings.TrimSpace(str(args, "ticket_id")), str(args, "priority"), str(args, "status")
	if prio == "" && status == "" {
		return toolError("update_ticket: give a new priority or status for %s", quoteClip(id))
	}
	// An unknown ticket is refused before the user is asked: approving a
	// change that cannot happen would mislead them.
	old, ok := sb.ticket(id)
	if !ok {
		return noTicket(id)
	}
	var change []string
	if prio != "" {
		change = append(change, fmt.Sprintf("priority %s to %s", old.Priority, prio))
	}
	if status != "" {
		change = append(change, fmt.Sprintf("status %s to %s", old.Status, status))
	}
	if r := s.confirm(ctx, "update_ticket", fmt.Sprintf("change ticket %s %s: %s", old.ID, quoteClip(old.Title), strings.Join(change, ", "))); r != nil {
		return r, nil
	}
	t, ok := sb.updateTicket(id, prio, status)
	if !ok {
		return noTicket(id)
	}
	return mcp.NewToolResultStructured(map[string]any{"ticket_id": t.ID, "title": t.Title, "priority": t.Priority, "status": t.Status},
		fmt.Sprintf("Ticket %s %s now has %s priority (status %s).", t.ID, quoteClip(t.Title), t.Priority, t.Status)), nil
}

// noTicket is update_ticket's answer for an id the session has no ticket
// for.
func noTicket(id string) (*mcp.CallToolResult, error) {
	return toolError("there is no ticket %s in this session; create_ticket returns the id of each ticket it creates", quoteClip(id))
}

func (s *Server) sendEmail(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	to, subject, body := strings.TrimSpace(str(args, "to")), str(args, "subject"), str(args, "body")
	addr, err := mail.ParseAddress(to)
	if err != nil {
		return toolError("%s is not a valid email address", quoteClip(to))
	}
	if err := sb.room("email", emailSize(addr.Address, subject, body)); err != nil {
		return toolError("send_email: %v", err)
	}
	if r := s.confirm(ctx, "send_email", fmt.Sprintf("send an email to %s with subject %s", addr.Address, quoteClip(subject))); r != nil {
		return r, nil
	}
	e, err := sb.addEmail(addr.Address, subject, body)
	if err != nil {
		return toolError("send_email: %v", err)
	}
	return mcp.NewToolResultStructured(map[string]any{"message_id": e.ID, "to": e.To, "subject": e.Subject},
		fmt.Sprintf("Email %s sent to %s with subject %s.", e.ID, e.To, quoteClip(e.Subject))), nil
}

// employee looks up an employee's name and salary on the privileged
// connection; found is false when no employee has that id.
func employee(db *sqlbox.Box, id int64) (name string, salary float64, found bool, err error) {
	row, err := db.QueryRow("SELECT name, salary FROM employees WHERE id = ?", id)
	if err != nil || row == nil {
		return "", 0, false, err
	}
	name, _ = row[0].(string)
	salary, _ = toFloat(row[1])
	return name, salary, true, nil
}

func (s *Server) updateSalary(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	id, newSalary := int64(num(args, "employee_id")), num(args, "new_salary")
	db, err := sb.database()
	if err != nil {
		return nil, err
	}
	name, old, found, err := employee(db, id)
	if err != nil {
		return nil, err
	}
	if !found {
		return toolError("no employee has id %d; look the id up with query_database", id)
	}
	if r := s.confirm(ctx, "update_salary", fmt.Sprintf("change the salary of %s (employee %d) from %s to %s", name, id, calc.Format(old), calc.Format(newSalary))); r != nil {
		return r, nil
	}
	if _, err := db.Exec("UPDATE employees SET salary = ? WHERE id = ?", newSalary, id); err != nil {
		return nil, err
	}
	return mcp.NewToolResultStructured(
		map[string]any{"employee_id": id, "name": name, "old_salary": old, "new_salary": newSalary},
		fmt.Sprintf("Updated the salary of %s (employee %d) from %s to %s.", name, id, calc.Format(old), calc.Format(newSalary))), nil
}

func (s *Server) deleteEmployee(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
	id := int64(num(args, "employee_id"))
	db, err := sb.database()
	if err != nil {
		return nil, err
	}
	name, _, found, err := employee(db, id)
	if err != nil {
		return nil, err
	}
	if !found {
		return toolError("no employee has id %d; look the id up with query_database", id)
	}
	if r := s.confirm(ctx, "delete_employee", fmt.Sprintf("permanently delete %s (employee %d)", name, id)); r != nil {
		return r, nil
	}
	var removed int64
	err = db.Tx(func(exec func(string, ...any) (int64, error)) error {
		var err error
		if removed, err = exec("DELETE FROM assignments WHERE employee_id = ?", id); err != nil {
			return err
		}
		if _, err = exec("UPDATE employees SET manager_id = NULL WHERE manager_id = ?", id); err != nil {
			return err
		}
		_, err = exec("DELETE FROM employees WHERE id = ?", id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return mcp.NewToolResultStructured(
		map[string]any{"employee_id": id, "name": name, "assignments_removed": removed},
		fmt.Sprintf("Deleted %s (employee %d) and %d project assignments.", name, id, removed)), nil
}
