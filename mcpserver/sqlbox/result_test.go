package sqlbox

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// wideSQL selects rows × cols values of 1,999 'x' each: about 4 KB of SQL
// for 200 columns, 200 MB of values for 500 rows.
func wideSQL(rows, cols int) string { return wideOfSQL(rows, cols, "'x'") }

// wideOfSQL is wideSQL with values of 1,999 times the character c.
func wideOfSQL(rows, cols int, c string) string { return wideOfNSQL(rows, cols, 1999, c) }

// wideOfNSQL is wideSQL with values of n times the character c.
func wideOfNSQL(rows, cols, n int, c string) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "printf('%%.%dc',%s) AS c%d", n, c, i)
	}
	fmt.Fprintf(&b, " FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < %d) SELECT i FROM n)", rows)
	return b.String()
}

// encoded marshals res as the server sends it.
func encoded(t *testing.T, res *Result) []byte {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWideResultBounded is the red team's out-of-memory query (F3): 500
// rows × 200 columns × 2,000 characters, which used to be read whole,
// then encoded twice, and killed the server at 3.2 GB. The result now
// stays under MaxResultBytes, says it was cut and why, and reading it
// allocates a bounded amount.
func TestWideResultBounded(t *testing.T) {
	noBackstop(t)
	b := open(t)
	sql := wideSQL(500, 200)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := b.Query(context.Background(), sql)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	text := encoded(t, res)
	if len(text) > MaxResultBytes {
		t.Errorf("result is %d bytes of JSON, limit %d", len(text), MaxResultBytes)
	}
	if !res.Truncated || res.RowCount == 0 || res.RowCount == 500 || !strings.Contains(res.Note, "size limit") || !strings.Contains(res.Note, "substr") {
		t.Errorf("rows %d, truncated %v, note %q", res.RowCount, res.Truncated, res.Note)
	}
	if want := fmt.Sprintf("%d values longer than %d bytes were cut", 200*res.RowCount, cellLimit(200)); !strings.Contains(res.Note, want) {
		t.Errorf("note %q, want %q", res.Note, want)
	}
	if v := res.Rows[0]["c199"].(string); len(v) > cellLimit(200)+len("…") || !strings.HasSuffix(v, "…") {
		t.Errorf("a cell of a 200-column row is %d bytes, want %d and …", len(v), cellLimit(200))
	}
	// Reading everything would allocate at least the 200 MB of values.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("the query allocated %d MiB", alloc>>20)
	}
}

// TestResultBudgetTight checks, for rows of several widths, that the
// result stays under MaxResultBytes and that the row left out would not
// have fitted: the budget is spent, not wasted. Control characters take
// six bytes each in JSON, '<' six too, 'é' two.
func TestResultBudgetTight(t *testing.T) {
	noBackstop(t)
	b := open(t)
	for _, tt := range []struct {
		cols, n int // n characters c per value, at most MaxValueLen bytes
		c       string
	}{{1, 1999, "'x'"}, {20, 1999, "'x'"}, {50, 1999, "'x'"}, {500, 1999, "'x'"}, {32, 1999, "char(1)"}, {33, 1999, "'<'"}, {500, 1999, "char(1)"}, {40, 1000, "'é'"}} {
		cols := tt.cols
		res, err := b.Query(context.Background(), wideOfNSQL(500, cols, tt.n, tt.c))
		if err != nil {
			t.Fatalf("%d columns: %v", cols, err)
		}
		for _, v := range res.Rows[0] {
			if s, _ := v.(string); !utf8.ValidString(s) {
				t.Errorf("%d columns of %s: value %.20q… is not valid UTF-8", cols, tt.c, s)
			}
		}
		n := len(encoded(t, res))
		row, err := json.Marshal(res.Rows[0])
		if err != nil {
			t.Fatal(err)
		}
		if cols == 1 && tt.c == "'x'" {
			// 500 rows of 2 KB fit: only the row limit applies.
			if res.RowCount != MaxRows || res.Truncated {
				t.Errorf("1 column: %d rows, truncated %v, note %q", res.RowCount, res.Truncated, res.Note)
			}
			continue
		}
		if n > MaxResultBytes || n+len(row)+1 <= MaxResultBytes-noteReserve || !res.Truncated {
			t.Errorf("%d columns of %s: %d rows, %d bytes, rows of %d bytes, truncated %v (limit %d)", cols, tt.c, res.RowCount, n, len(row), res.Truncated, MaxResultBytes)
		}
	}
}

// TestRowLimitNote checks the note for a result cut by MaxRows.
func TestRowLimitNote(t *testing.T) {
	b := open(t)
	res, err := b.Query(context.Background(), "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1000) SELECT i FROM n")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || !strings.Contains(res.Note, fmt.Sprintf("first %d rows", MaxRows)) || !strings.Contains(res.Note, "LIMIT") {
		t.Errorf("truncated %v, note %q", res.Truncated, res.Note)
	}
	res, err = b.Query(context.Background(), "SELECT 1 AS one")
	if err != nil || res.Truncated || res.Note != "" || strings.Contains(string(encoded(t, res)), "note") {
		t.Errorf("complete result: %+v %v", res, err)
	}
}

// TestCutTextValid checks that a cut text value is still valid UTF-8 and
// that the cut is reported.
func TestCutTextValid(t *testing.T) {
	b := open(t)
	// 1,999 'x' then 'é' (2 bytes): a cut at MaxCellChars bytes would
	// split the 'é'.
	res, err := b.Query(context.Background(), "SELECT printf('%.1999c','x') || 'é' || 'tail' AS v, x'00' AS small")
	if err != nil {
		t.Fatal(err)
	}
	v := res.Rows[0]["v"].(string)
	if !utf8.ValidString(v) || v != strings.Repeat("x", 1999)+"…" {
		t.Errorf("cut value ends %q (valid UTF-8: %v)", v[len(v)-8:], utf8.ValidString(v))
	}
	if !res.Truncated || !strings.Contains(res.Note, "1 values longer than 2000 bytes were cut") {
		t.Errorf("truncated %v, note %q", res.Truncated, res.Note)
	}
	res, err = b.Query(context.Background(), "SELECT zeroblob(2040) AS b")
	if err != nil || res.Rows[0]["b"] != "<blob of 2040 bytes>" || !res.Truncated {
		t.Errorf("long blob: %+v %v", res, err)
	}
}

// TestColumnNamesDeterministic is F13: SQLite gives repeated names of a
// subquery random suffixes (1:1524274733), different in each session,
// so the same query gave a different tool result.
func TestColumnNamesDeterministic(t *testing.T) {
	tests := []struct {
		sql  string
		want []string
	}{
		{"SELECT 1,1,1,1,1,1,1,1", []string{"1", "1:2", "1:3", "1:4", "1:5", "1:6", "1:7", "1:8"}},
		{"SELECT * FROM (SELECT 1,1,1,1,1,1)", []string{"1", "1:2", "1:3", "1:4", "1:5", "1:6"}},
		{"SELECT e.id, d.id, e.name FROM employees e JOIN departments d ON d.id = e.department_id", []string{"id", "id:2", "name"}},
		{`SELECT 1 AS a, 2 AS "a:2", 3 AS a, 4 AS A`, []string{"a", "a:2", "a:3", "A"}},
		{"SELECT * FROM (SELECT 1 AS a, 2 AS A)", []string{"a", "A"}},
	}
	for _, tt := range tests {
		var first []string
		for session := range 3 {
			res, err := open(t).Query(context.Background(), tt.sql)
			if err != nil {
				t.Fatalf("%s: %v", tt.sql, err)
			}
			if !slices.Equal(res.Columns, tt.want) {
				t.Errorf("%s: columns %q, want %q", tt.sql, res.Columns, tt.want)
			}
			if len(res.Rows[0]) != len(tt.want) {
				t.Errorf("%s: row %v has lost a column", tt.sql, res.Rows[0])
			}
			if session > 0 && !slices.Equal(res.Columns, first) {
				t.Errorf("%s: session %d gave %q, the first %q", tt.sql, session, res.Columns, first)
			}
			first = res.Columns
		}
	}
}

func TestUniqueNames(t *testing.T) {
	tests := []struct{ in, want []string }{
		{nil, []string{}},
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"x", "x", "x:2", "x"}, []string{"x", "x:2", "x:3", "x:4"}},
		{[]string{"x:2", "x", "x"}, []string{"x:2", "x", "x:3"}},
		{[]string{"p:3", "p"}, []string{"p:3", "p"}},
		{[]string{"n", "n:1", "n:2", "n:3", "n:4", "n:3870123"}, []string{"n", "n:2", "n:3", "n:4", "n:5", "n:6"}},
		{[]string{"t:5", "u"}, []string{"t:5", "u"}},
		{[]string{"", ""}, []string{"", ":2"}},
	}
	for _, tt := range tests {
		if got := uniqueNames(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("uniqueNames(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestJSONLen checks the size accounting against encoding/json.
func TestJSONLen(t *testing.T) {
	var ctl strings.Builder
	for c := range 0x80 {
		ctl.WriteByte(byte(c))
	}
	strs := []string{"", "plain", `q"b\s`, "<a&b>", ctl.String(), "\xff\xfe bad", "line\u2028para\u2029", "é€😀", "\x00nul", "\xe2\x82"}
	for _, s := range strs {
		want, _ := json.Marshal(s)
		if got := jsonStringLen(s); got != len(want) {
			t.Errorf("jsonStringLen(%q) = %d, json.Marshal gives %d", s, got, len(want))
		}
	}
	values := []any{nil, int64(0), int64(-9223372036854775808), 0.0, 1.5, -1e-7, 1e-6, 1e20, 1e21, -123456789.123456789,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 5e-324, 0.1 + 0.2, PosInf, "text"}
	for _, v := range values {
		want, _ := json.Marshal(v)
		// A float in exponent form may be counted one byte long (e-07).
		if got := jsonValueLen(v); got < len(want) || got > len(want)+1 {
			t.Errorf("jsonValueLen(%v) = %d, json.Marshal gives %d (%s)", v, got, len(want), want)
		}
	}
}
