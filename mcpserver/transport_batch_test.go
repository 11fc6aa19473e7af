package mcpserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHTTPBatchAndDeepJSON: a JSON-RPC batch and JSON nested too deeply
// are each answered with an error that names the problem, not "not valid
// json"; nesting at the limit still reaches mcp-go.
func TestHTTPBatchAndDeepJSON(t *testing.T) {
	ts := httptest.NewServer(fresh(t).HTTPHandler(HTTPOptions{}))
	defer ts.Close()
	url := ts.URL + Path
	deep := func(n int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`
	}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"batch", "  \n[" + initializeJSON + "]", "batch requests are not supported"},
		{"empty batch", "[]", "batch requests are not supported"},
		{"deep", deep(MaxJSONDepth + 1), "nested too deeply"},
		{"invalid json is mcp-go's", `{"jsonrpc":`, "not valid json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rawPost(t, url, tc.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d, want 400: %s", resp.StatusCode, body)
			}
			var msg struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &msg); err != nil {
				t.Fatalf("answer is not JSON-RPC: %v: %s", err, body)
			}
			if !strings.Contains(msg.Error.Message, tc.want) {
				t.Errorf("message %q, want %q", msg.Error.Message, tc.want)
			}
		})
	}
}

// Brackets inside strings, and nesting at the limit, pass on to mcp-go
// (which asks for a session: the request got past the check).
func TestHTTPDeepJSONAtLimit(t *testing.T) {
	ts := httptest.NewServer(fresh(t).HTTPHandler(HTTPOptions{}))
	defer ts.Close()
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat(`[\"`, MaxJSONDepth+1) + `"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":` + strings.Repeat("[", MaxJSONDepth-2) + strings.Repeat("]", MaxJSONDepth-2) + `}}`,
	} {
		resp, answer := rawPost(t, ts.URL+Path, body)
		if strings.Contains(answer, "nested too deeply") || strings.Contains(answer, "not valid json") {
			t.Errorf("%d %.60s: refused: %s", resp.StatusCode, body, answer)
		}
	}
}

func TestJSONDeeperThan(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want bool
	}{
		{`[[[]]]`, 3, false},
		{`[[[[]]]]`, 3, true},
		{`{"a":{"b":[1]}}`, 3, false},
		{`{"a":"[[[[\"[[["}`, 1, false},
		{`["\\",[[[]]]]`, 3, true},
		{`[],[],[],[]`, 1, false},
	} {
		if got := jsonDeeperThan([]byte(tc.in), tc.max); got != tc.want {
			t.Errorf("jsonDeeperThan(%s, %d) = %v, want %v", tc.in, tc.max, got, tc.want)
		}
	}
}

// TestStdioBatchAndDeepJSON: over stdio too, a batch line and a line
// nested too deeply get an error naming the problem (mcp-go alone says
// "Parse error"), and the next request is served.
func TestStdioBatchAndDeepJSON(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":` + strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth) + `}}`
	in := `[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n" + deep + "\n" + `{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n"
	lines := serveStdio(t, strings.NewReader(in))
	all := strings.Join(lines, "\n")
	if len(lines) != 3 || !strings.Contains(all, "batch requests are not supported") || !strings.Contains(all, "send each request on its own line") ||
		!strings.Contains(all, "nested too deeply") || !strings.Contains(all, `"id":3,"result":{}`) {
		t.Fatalf("answers: %q", lines)
	}
}
