package sqlbox

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

var (
	tmplOnce sync.Once
	tmpl     *Template
	tmplErr  error
)

func template(t testing.TB) *Template {
	t.Helper()
	tmplOnce.Do(func() {
		script, err := os.ReadFile("testdata/company.sql")
		if err != nil {
			tmplErr = err
			return
		}
		tmpl, tmplErr = NewTemplate(string(script))
	})
	if tmplErr != nil {
		t.Fatal(tmplErr)
	}
	return tmpl
}

func open(t testing.TB) *Box {
	t.Helper()
	b, err := template(t).Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestQuery(t *testing.T) {
	b := open(t)
	res, err := b.Query(context.Background(), "SELECT name, salary FROM employees WHERE department_id = 1 ORDER BY salary DESC;")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(res.Columns, res.Rows, res.RowCount, res.Truncated); got != "[name salary] [map[name:Ada Park salary:200000] map[name:Ben Ortiz salary:120000]] 2 false" {
		t.Errorf("got %s", got)
	}
	res, err = b.Query(context.Background(), `WITH eng AS (SELECT * FROM employees WHERE department_id = 1)
		SELECT SUM(salary) AS total FROM eng -- trailing comment`)
	if err != nil || res.Rows[0]["total"] != 320000.0 {
		t.Errorf("CTE: %v %v", res, err)
	}
	res, err = b.Query(context.Background(), "SELECT name FROM pragma_table_info('departments')")
	if err != nil || res.RowCount != 4 {
		t.Errorf("pragma_table_info: %v %v", res, err)
	}
	res, err = b.Query(context.Background(), "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1000) SELECT i FROM n")
	if err != nil || res.RowCount != MaxRows || !res.Truncated {
		t.Errorf("row cap: rows %d truncated %v err %v", res.RowCount, res.Truncated, err)
	}
	res, err = b.Query(context.Background(), "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 500) SELECT i FROM n")
	if err != nil || res.RowCount != MaxRows || res.Truncated {
		t.Errorf("exactly MaxRows: rows %d truncated %v err %v", res.RowCount, res.Truncated, err)
	}
	res, err = b.Query(context.Background(), "SELECT NULL AS n, x'00ff' AS b, 1.5 AS f")
	if err != nil || fmt.Sprint(res.Rows) != "[map[b:base64:AP8= f:1.5 n:<nil>]]" {
		t.Errorf("types: %v %v", res, err)
	}
}

func TestQueryRefused(t *testing.T) {
	// The runaway query below is stopped by a smaller step budget than
	// MaxSteps: TestRunawayStoppedByStepBudget runs the real one (with
	// the backstop lifted); here, 5M steps under -race on a busy machine
	// could reach the real backstop first.
	maxSteps = 200_000
	t.Cleanup(func() { maxSteps = MaxSteps })
	b := open(t)
	tests := []struct{ sql, want string }{
		{"DELETE FROM employees", "read-only"},
		{"UPDATE employees SET salary = 0", "read-only"},
		{"INSERT INTO departments VALUES (9, 'x', 0, 'y')", "read-only"},
		{"DROP TABLE employees", "read-only"},
		{"CREATE TABLE x (a)", "read-only"},
		{"CREATE TEMP TABLE x (a)", "read-only"},
		{"ALTER TABLE employees ADD COLUMN x", "read-only"},
		{"ATTACH DATABASE 'file:/x?vfs=memdb' AS x", "read-only"},
		{"PRAGMA query_only=OFF", "read-only"},
		{"PRAGMA table_info(employees)", "only SELECT"},
		{"BEGIN", "read-only"},
		{"SAVEPOINT a", "read-only"},
		{"VACUUM", "only SELECT"},
		{"SELECT 1; DELETE FROM employees", "only one statement"},
		{"SELECT 1; SELECT 2", "only one statement"},
		{"SELECT load_extension('x')", "no such function"},
		{"WITH x AS (SELECT 1) DELETE FROM employees", "read-only"},
		{"", "empty query"},
		{"-- just a comment", "empty query"},
		{"SELEC 1", "SQL error"},
		{"SELECT * FROM nope", "no such table"},
		{"SELECT zeroblob(1000000000)", "too large"},
		{"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n) SELECT count(*) FROM n", "over the limit of"},
		{strings.Repeat(" ", MaxSQLLength) + "SELECT 1", "too long"},
	}
	for _, tt := range tests {
		_, err := b.Query(context.Background(), tt.sql)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Query(%.40q) error = %v, want %q", tt.sql, err, tt.want)
		}
		if _, ok := err.(*QueryError); err != nil && !ok {
			t.Errorf("Query(%.40q) error type %T", tt.sql, err)
		}
	}
	// The connection still works after an interrupt.
	if res, err := b.Query(context.Background(), "SELECT count(*) AS n FROM employees"); err != nil || res.Rows[0]["n"] != int64(3) {
		t.Errorf("after refusals: %v %v", res, err)
	}
	if res, err := b.Query(context.Background(), "SELECT 1 AS one;  -- done\n"); err != nil || res.RowCount != 1 {
		t.Errorf("trailing semicolon and comment: %v %v", res, err)
	}
}

func TestWritesVisibleAndIsolated(t *testing.T) {
	a, b := open(t), open(t)
	n, err := a.Exec("UPDATE employees SET salary = ? WHERE id = ?", 130000.0, int64(2))
	if err != nil || n != 1 {
		t.Fatalf("Exec: %d %v", n, err)
	}
	err = a.Tx(func(exec func(string, ...any) (int64, error)) error {
		if _, err := exec("DELETE FROM assignments WHERE employee_id = ?", 3); err != nil {
			return err
		}
		_, err := exec("DELETE FROM employees WHERE id = ?", 3)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	q := "SELECT id, salary FROM employees ORDER BY id"
	ra, _ := a.Query(context.Background(), q)
	rb, _ := b.Query(context.Background(), q)
	if got := fmt.Sprint(ra.Rows); got != "[map[id:1 salary:200000] map[id:2 salary:130000]]" {
		t.Errorf("session a sees %s", got)
	}
	if got := fmt.Sprint(rb.Rows); got != "[map[id:1 salary:200000] map[id:2 salary:120000] map[id:3 salary:90000]]" {
		t.Errorf("session b sees %s", got)
	}
	row, err := b.QueryRow("SELECT name, salary FROM employees WHERE id = ?", 3)
	if err != nil || fmt.Sprint(row) != "[Cleo Ng 90000]" {
		t.Errorf("QueryRow: %v %v", row, err)
	}
	if row, err := a.QueryRow("SELECT name FROM employees WHERE id = ?", 3); row != nil || err != nil {
		t.Errorf("QueryRow of deleted row: %v %v", row, err)
	}
}

// fingerprint hashes the schema and every row of every table, read through
// the privileged connection.
func fingerprint(t testing.TB, b *Box) [32]byte {
	h := sha256.New()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, q := range []string{
		"SELECT type, name, sql FROM sqlite_master ORDER BY name",
		"SELECT * FROM departments ORDER BY id", "SELECT * FROM employees ORDER BY id",
		"SELECT * FROM projects ORDER BY id", "SELECT * FROM assignments ORDER BY employee_id, project_id",
	} {
		stmt, _, err := b.conns.writer.Prepare(q)
		if err != nil {
			t.Fatalf("fingerprint %s: %v", q, err)
		}
		for stmt.Step() {
			for i := range stmt.ColumnCount() {
				fmt.Fprintf(h, "%v|", stmt.ColumnRawText(i))
			}
			h.Write([]byte{'\n'})
		}
		stmt.Close()
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

func FuzzSQLGuard(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM employees", "DELETE FROM employees", "UPDATE employees SET salary=0",
		"SELECT 1; DROP TABLE employees", "WITH x AS (SELECT 1) INSERT INTO departments SELECT 9,'a',1,'b'",
		"PRAGMA writable_schema=ON", "ATTACH ':memory:' AS m", "REPLACE INTO departments VALUES (1,'x',0,'y')",
		"SELECT * FROM (DELETE FROM employees RETURNING *)", "CREATE TRIGGER t AFTER INSERT ON employees BEGIN DELETE FROM departments; END",
		"SELECT 1) ; DELETE FROM employees; SELECT (1", "SELECT 1 --", "/* x */ DELETE FROM employees",
		"INSERT INTO employees (id, name) VALUES (99, 'x') RETURNING id",
	} {
		f.Add(s)
	}
	b := open(f)
	want := fingerprint(f, b)
	f.Fuzz(func(t *testing.T, sql string) {
		b.Query(context.Background(), sql)
		if got := fingerprint(t, b); got != want {
			t.Fatalf("query %q changed the database", sql)
		}
	})
}

func BenchmarkOpen(b *testing.B) {
	tp := template(b)
	for b.Loop() {
		box, err := tp.Open()
		if err != nil {
			b.Fatal(err)
		}
		box.Close()
	}
}
