package mcpserver

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// The tools that store or echo text cap their string arguments by the
// maxLength of their input schemas, counted in characters, before any
// work: the red-team session sent 900 KB bodies 1,000 times.
func TestTextArgumentLimits(t *testing.T) {
	c := connect(t, fresh(t))
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"send_email", map[string]any{"to": "a@example.com", "subject": "s", "body": long(65537)}, `argument body: maxLength: `},
		{"send_email", map[string]any{"to": "a@example.com", "subject": long(1001), "body": "b"}, `argument subject: maxLength: `},
		{"send_email", map[string]any{"to": long(321), "subject": "s", "body": "b"}, `argument to: maxLength: `},
		{"create_ticket", map[string]any{"title": "t", "body": long(900000), "priority": "low"}, `argument body: maxLength: `},
		{"create_ticket", map[string]any{"title": long(1001), "body": "b", "priority": "low"}, `argument title: maxLength: `},
		{"search_documents", map[string]any{"query": long(1001)}, `argument query: maxLength: `},
	}
	for _, tt := range tests {
		wantToolError(t, call(t, c, tt.tool, tt.args), InvalidArgumentsPrefix+tt.tool+": "+tt.want)
	}
	// Characters, not bytes: 65536 two-byte characters fit.
	wantOK(t, call(t, c, "send_email", map[string]any{"to": "a@example.com", "subject": "s", "body": strings.Repeat("é", 65536)}))
}

// An argument quoted back in a result's text is clipped to maxEcho
// characters, whatever its length within the schema.
func TestEchoedArgumentsClipped(t *testing.T) {
	c := connect(t, fresh(t))
	subject := strings.Repeat("ü", 1000)
	r := call(t, c, "send_email", map[string]any{"to": "a@example.com", "subject": subject, "body": "b"})
	wantOK(t, r)
	query := strings.TrimSpace(strings.Repeat("qzxv ", 200))
	miss := call(t, c, "search_documents", map[string]any{"query": query})
	wantOK(t, miss)
	title := strings.Repeat("t", 1000)
	tick := call(t, c, "create_ticket", map[string]any{"title": title, "body": "b", "priority": "low"})
	wantOK(t, tick)
	for _, tc := range []struct {
		r    *mcp.CallToolResult
		full int
	}{{r, 1000}, {miss, len(query)}, {tick, 1000}} {
		got := text(tc.r)
		if n := utf8.RuneCountInString(got); n > maxEcho+150 || !strings.Contains(got, fmt.Sprintf("… (%d characters)", tc.full)) {
			t.Errorf("echo not clipped (%d characters): %.300s", n, got)
		}
	}
	if got := quoteClip(strings.Repeat("a", maxEcho)); got != `"`+strings.Repeat("a", maxEcho)+`"` {
		t.Errorf("a string of exactly maxEcho characters was clipped: %s", got)
	}
}

// fill makes n calls of tool with args on c, failing on any refusal.
func fill(t *testing.T, c *client.Client, tool string, args map[string]any, n int) {
	t.Helper()
	for i := range n {
		if r := call(t, c, tool, args); r.IsError {
			t.Fatalf("%s #%d refused: %s", tool, i+1, text(r))
		}
	}
}

// A session stores at most MaxStoredItems tickets and emails together;
// the next is refused with an isError result naming the limit, and
// nothing is stored.
func TestStoreItemLimit(t *testing.T) {
	c := connect(t, fresh(t))
	ticket := map[string]any{"title": "t", "body": "b", "priority": "low"}
	email := map[string]any{"to": "a@example.com", "subject": "s", "body": "b"}
	fill(t, c, "create_ticket", ticket, MaxStoredItems/2)
	fill(t, c, "send_email", email, MaxStoredItems-MaxStoredItems/2)
	want := fmt.Sprintf("already holds %d tickets and emails, the most one session stores (%d)", MaxStoredItems, MaxStoredItems)
	wantToolError(t, call(t, c, "create_ticket", ticket), want)
	wantToolError(t, call(t, c, "send_email", email), want)
	// Other sessions are not affected.
	wantOK(t, call(t, connect(t, fresh(t)), "send_email", email))
}

// A session stores at most MaxStoredBytes of ticket and email text:
// large bodies stop at the byte limit, long before the item limit, while
// an item small enough for what is left still fits.
func TestStoreByteLimit(t *testing.T) {
	t.Parallel()
	s := fresh(t)
	c := connect(t, s)
	big := map[string]any{"title": "t", "body": strings.Repeat("x", 65536), "priority": "low"}
	size := ticketSize("t", big["body"].(string), "low")
	fits := MaxStoredBytes / size
	// One ticket through the server makes the session's sandbox; the
	// rest are stored directly (128 MCP calls of 64 KiB each cost
	// seconds under -race and test nothing the first did not).
	fill(t, c, "create_ticket", big, 1)
	var sb *sandbox
	s.sandboxes.Range(func(_, v any) bool { sb = v.(*sandbox); return false })
	for range fits - 1 {
		if _, err := sb.addTicket("t", big["body"].(string), "low"); err != nil {
			t.Fatal(err)
		}
	}
	wantToolError(t, call(t, c, "create_ticket", big), fmt.Sprintf("over the %d (8 MiB) one session stores; no ticket was stored", MaxStoredBytes))
	wantToolError(t, call(t, c, "send_email", map[string]any{"to": "a@example.com", "subject": "s", "body": big["body"]}), "no email was stored")
	r := call(t, c, "create_ticket", map[string]any{"title": "small", "body": "b", "priority": "low"})
	wantOK(t, r)
	var tk Ticket
	structured(t, r, &tk)
	if want := fmt.Sprintf("TCK-%d", 1001+fits); tk.ID != want {
		t.Errorf("ticket after the refusals is %s, want %s: a refused ticket was stored", tk.ID, want)
	}
}

// A full store refuses before asking the user to confirm: approving an
// action that is then refused anyway would mislead them.
func TestStoreFullAsksNobody(t *testing.T) {
	s := fresh(t)
	e := &elicitor{action: mcp.ElicitationResponseActionAccept}
	c := connect(t, s, client.WithElicitationHandler(e))
	wantOK(t, call(t, c, "create_ticket", map[string]any{"title": "t", "body": "b", "priority": "low"}))
	var sb *sandbox
	s.sandboxes.Range(func(_, v any) bool { sb = v.(*sandbox); return false })
	for range MaxStoredItems - 1 {
		if _, err := sb.addEmail("a@example.com", "s", "b"); err != nil {
			t.Fatal(err)
		}
	}
	asked := len(e.asked)
	wantToolError(t, call(t, c, "send_email", map[string]any{"to": "a@example.com", "subject": "s", "body": "b"}), "no email was stored")
	if len(e.asked) != asked {
		t.Errorf("the user was asked to confirm an email the full store then refused: %q", e.asked[asked:])
	}
}
