package mcpserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/mcpserver/sqlbox"
)

// redTeamWideSQL is the query that killed the stdio server with "fatal
// error: out of memory" at 3.2 GB: 500 rows × 200 columns × 2,000
// characters, from about 4 KB of SQL.
func redTeamWideSQL() string {
	cols := make([]string, 200)
	for i := range cols {
		cols[i] = fmt.Sprintf("printf('%%.1999c','x') AS c%d", i)
	}
	return "SELECT " + strings.Join(cols, ", ") +
		" FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 500) SELECT i FROM n)"
}

// TestQueryDatabaseResultBounded checks that the tool result of the wide
// query is one bounded encoding: the structured content and the text are
// the same JSON, under sqlbox.MaxResultBytes, with the note appended to
// the text.
func TestQueryDatabaseResultBounded(t *testing.T) {
	c := connect(t, shared(t))
	r := call(t, c, "query_database", map[string]any{"sql": redTeamWideSQL()})
	wantOK(t, r)
	structuredJSON, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		RowCount  int    `json:"row_count"`
		Truncated bool   `json:"truncated"`
		Note      string `json:"note"`
	}
	if err := json.Unmarshal(structuredJSON, &out); err != nil {
		t.Fatal(err)
	}
	if len(structuredJSON) > sqlbox.MaxResultBytes || !out.Truncated || out.RowCount == 0 || !strings.Contains(out.Note, "size limit") {
		t.Fatalf("structured content of %d bytes (limit %d), %d rows, truncated %v, note %q",
			len(structuredJSON), sqlbox.MaxResultBytes, out.RowCount, out.Truncated, out.Note)
	}
	body, note, ok := strings.Cut(text(r), "\n(")
	if !ok || note != out.Note+")" || len(body) > sqlbox.MaxResultBytes {
		t.Fatalf("text of %d bytes is not the result's JSON (limit %d) and its note; it ends %q", len(text(r)), sqlbox.MaxResultBytes, text(r)[max(0, len(text(r))-200):])
	}
	var fromText, fromStructured any
	if err := json.Unmarshal([]byte(body), &fromText); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(structuredJSON, &fromStructured); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromText, fromStructured) {
		t.Errorf("text and structured content differ")
	}
}

// TestQueryDatabaseColumnNames checks F13 through the tool: the same
// query gives the same column names in every session.
func TestQueryDatabaseColumnNames(t *testing.T) {
	s := shared(t)
	var texts []string
	for range 2 {
		r := call(t, connect(t, s), "query_database", map[string]any{"sql": "SELECT 1,1,1,1,1,1,1,1"})
		wantOK(t, r)
		texts = append(texts, text(r))
	}
	want := `"columns":["1","1:2","1:3","1:4","1:5","1:6","1:7","1:8"]`
	if texts[0] != texts[1] || !strings.Contains(texts[0], want) {
		t.Errorf("sessions answered\n%s\n%s\nwant both to contain %s", texts[0], texts[1], want)
	}
}

// TestStdioWideQuery sends the wide query over stdio, as the red team
// did: the reply is one JSON-RPC line of a few MiB (text and structured
// content each under sqlbox.MaxResultBytes), and the next call is
// answered.
func TestStdioWideQuery(t *testing.T) {
	out := stdioQueries(t, redTeamWideSQL(), "SELECT count(*) AS n FROM employees")
	sizes := map[int]int{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var a struct {
			ID     int `json:"id"`
			Result *struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("bad line of %d bytes: %v", len(sc.Bytes()), err)
		}
		if a.Result == nil || a.Result.IsError {
			t.Errorf("request %d: %.300s", a.ID, sc.Text())
		}
		sizes[a.ID] = len(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// The text is the JSON again, escaped: at most twice its size.
	if limit := 3*sqlbox.MaxResultBytes + 4096; sizes[2] == 0 || sizes[2] > limit {
		t.Errorf("reply to the wide query: %d bytes, want 1 to %d", sizes[2], limit)
	}
	if ids := slices.Sorted(maps.Keys(sizes)); !slices.Equal(ids, []int{1, 2, 3}) {
		t.Errorf("answered %v, want 1, 2 and 3", ids)
	}
}
