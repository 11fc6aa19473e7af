package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolward/toolward/mcpserver/sqlbox"
)

func unionAllSQL(n int) string {
	var b strings.Builder
	b.WriteString("SELECT 0")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, " UNION ALL SELECT %d", i)
	}
	return b.String()
}

func cteChainSQL(n int) string {
	var b strings.Builder
	b.WriteString("WITH c0 AS (SELECT 1 AS x)")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, ", c%d AS (SELECT x FROM c%d)", i, i-1)
	}
	fmt.Fprintf(&b, " SELECT x FROM c%d", n-1)
	return b.String()
}

// hostileQueries crashed the wasm SQLite (and with it the session, the
// server and the run) or answered JSON-RPC -32603 before the limits.
//
// The endless recursive CTE is not here: package sqlbox runs the real
// 5M-step budget (TestRunawayStoppedByStepBudget) with the wall-clock
// backstop lifted, which this package cannot do; under -race on a busy
// machine 5M steps could take longer than the 20 s backstop, and the test
// would fail on the machine's speed. The server answers every
// *sqlbox.QueryError the same way (queryDatabase), which the refusals
// below go through.
var hostileQueries = []struct{ name, sql, want string }{
	{"220-term UNION ALL", unionAllSQL(220), "limit"},
	{"300 chained CTEs", cteChainSQL(300), "limit"},
	{"nested subqueries", strings.Repeat("SELECT * FROM (", 300) + "SELECT 1" + strings.Repeat(")", 300), "limit"},
	{"deep expression", "SELECT 1" + strings.Repeat("+1", 400), "limit"},
	// The memory limit comes first on every machine: the query's work is
	// bounded by steps, not time. Its sort keys are zero blobs:
	// randomblob's random bytes took 8 to 15 s under -race, close to the
	// wall-clock backstop on a busy machine; 2 KB each, near the value
	// limit.
	{"memory-heavy sort", "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 90000) SELECT i, sum(i) OVER (ORDER BY zeroblob(2000) || i) AS s FROM n",
		fmt.Sprintf("more memory than allowed (%d MiB", sqlbox.MaxHeap>>20)},
	// The LIKE bomb on long strings, whose charged work the budget stops,
	// runs under a small budget in TestQueryStepsOption: under the real
	// 5M steps it took 8.8 s under -race on an idle machine, within reach
	// of the 20 s backstop on a busy one.
	{"value over the limit", "SELECT printf('%.5000c', 'a') AS v", fmt.Sprintf("too large (limit %d bytes", sqlbox.MaxValueLen)},
}

// TestQueryDatabaseHostile calls the tool through the real server: every
// hostile query is an isError result naming its limit, and the session's
// database (with a write made earlier in the session) still answers.
func TestQueryDatabaseHostile(t *testing.T) {
	c := connect(t, shared(t))
	r := call(t, c, "update_salary", map[string]any{"employee_id": 2, "new_salary": 123456})
	wantOK(t, r)
	for _, q := range hostileQueries {
		r, err := rawCall(c, "query_database", map[string]any{"sql": q.sql})
		if err != nil {
			t.Fatalf("%s: protocol error %v, want an isError result", q.name, err)
		}
		if !r.IsError || !anyOf(text(r), strings.Split(q.want, "|")) {
			t.Errorf("%s: want isError result containing %q, got isError=%v %q", q.name, q.want, r.IsError, text(r))
		}
		r = call(t, c, "query_database", map[string]any{"sql": "SELECT salary FROM employees WHERE id = 2"})
		wantOK(t, r)
		if !strings.Contains(text(r), "123456") {
			t.Errorf("after %s: %s", q.name, text(r))
		}
	}
}

// TestQueryDatabaseNonFinite checks that ±Inf results are valid JSON (the
// strings "Infinity" and "-Infinity"), not JSON-RPC -32603.
func TestQueryDatabaseNonFinite(t *testing.T) {
	c := connect(t, shared(t))
	r, err := rawCall(c, "query_database", map[string]any{"sql": "SELECT 1e999 AS big, -1e999 AS small"})
	if err != nil {
		t.Fatalf("protocol error: %v", err)
	}
	wantOK(t, r)
	var out struct {
		Rows []map[string]any `json:"rows"`
	}
	structured(t, r, &out)
	if len(out.Rows) != 1 || out.Rows[0]["big"] != sqlbox.PosInf || out.Rows[0]["small"] != sqlbox.NegInf {
		t.Errorf("rows %v, text %s", out.Rows, text(r))
	}
}

// TestStdioHostileQuery reproduces the issue through the stdio transport:
// a 220-term UNION ALL, then a normal query, then the end of input. Both
// calls are answered (the first as an isError result) and serving ends
// cleanly.
func TestStdioHostileQuery(t *testing.T) {
	out := stdioQueries(t, unionAllSQL(220), "SELECT 1e999 AS x", "SELECT count(*) AS n FROM employees")
	type answer struct {
		ID     int `json:"id"`
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	got := map[int]answer{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		got[a.ID] = a
	}
	for id, want := range map[int]struct {
		isError bool
		text    string
	}{2: {true, "limit"}, 3: {false, `"Infinity"`}, 4: {false, `"n":`}} {
		a, ok := got[id]
		switch {
		case !ok:
			t.Errorf("request %d not answered; output:\n%s", id, out)
		case a.Error != nil:
			t.Errorf("request %d: protocol error %s", id, a.Error.Message)
		case a.Result.IsError != want.isError || len(a.Result.Content) == 0 || !strings.Contains(a.Result.Content[0].Text, want.text):
			t.Errorf("request %d: %+v, want isError=%v and %q", id, a.Result, want.isError, want.text)
		}
	}
}

func anyOf(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// stdioQueries serves a fresh server over stdio to a client that
// initializes, calls query_database once per SQL text (ids 2, 3, …) and
// ends its input, and returns everything the server wrote.
func stdioQueries(t *testing.T, sqls ...string) string {
	t.Helper()
	s, err := New(Options{NoBundledCatalog: true})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []any{
		map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "0"}}},
		map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"},
	}
	for i, q := range sqls {
		msgs = append(msgs, map[string]any{"jsonrpc": "2.0", "id": i + 2, "method": "tools/call", "params": map[string]any{
			"name": "query_database", "arguments": map[string]any{"sql": q}}})
	}
	var in strings.Builder
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		in.Write(append(b, '\n'))
	}
	var out strings.Builder
	if err := s.ServeStdio(context.Background(), strings.NewReader(in.String()), &out, nil); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	return out.String()
}
