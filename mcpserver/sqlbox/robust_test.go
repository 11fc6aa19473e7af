package sqlbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
)

func unionAll(n int, op string) string {
	var b strings.Builder
	b.WriteString("SELECT 0")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, " %s SELECT %d", op, i)
	}
	return b.String()
}

func cteChain(n int) string {
	var b strings.Builder
	b.WriteString("WITH c0 AS (SELECT 1 AS x)")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, ", c%d AS (SELECT x FROM c%d)", i, i-1)
	}
	fmt.Fprintf(&b, " SELECT x FROM c%d", n-1)
	return b.String()
}

// cteOfUnions chains n CTEs, each a UNION ALL of n terms whose first term
// reads the previous CTE: n = 16 crashed the bare build.
func cteOfUnions(n int) string {
	var b strings.Builder
	b.WriteString("WITH c0 AS (SELECT 1 AS x)")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, ", c%d AS (SELECT x FROM c%d", i, i-1)
		for j := 1; j < n; j++ {
			fmt.Fprintf(&b, " UNION ALL SELECT %d", j)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " SELECT x FROM c%d", n-1)
	return b.String()
}

func nest(n int, open, inner, close string) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// crashers are queries that panicked inside the wasm SQLite (stack
// exhaustion) before the limits, each at its measured crash point.
var crashers = map[string]string{
	"220-term UNION ALL":         unionAll(220, "UNION ALL"),
	"182-term INTERSECT":         unionAll(182, "INTERSECT"),
	"300 chained CTEs":           cteChain(300),
	"263 chained CTEs":           cteChain(263),
	"16 CTEs of 16-term unions":  cteOfUnions(16),
	"266 nested FROM subqueries": nest(266, "SELECT * FROM (", "SELECT 1", ")"),
	"266 nested join parens":     "SELECT count(*) FROM " + nest(266, "(employees e JOIN ", "employees", " ON 1)"),
	"expression depth 332":       "SELECT 1" + strings.Repeat("+1", 332),
	"334 nested CASE":            "SELECT " + nest(334, "CASE WHEN 1 THEN ", "1", " END"),
	"88 nested BETWEEN":          "SELECT " + nest(88, "1 BETWEEN 0 AND (", "1", ")"),
	"166 nested iif":             "SELECT " + nest(166, "iif(1, ", "1", ", 0)"),
	"222 nested aggregates":      "SELECT " + nest(222, "max(", "1", ")"),
	"LIKE with 4123 wildcards":   "SELECT printf('%.*c', 5000, 'a') LIKE replace(printf('%.*c', 4123, 'x'), 'x', '%a')",
}

// TestComplexQueriesRefused checks that every query that used to crash
// the engine is now a *QueryError naming a limit, that no panic had to be
// recovered, and that the session's database is unchanged and answers
// the next query.
func TestComplexQueriesRefused(t *testing.T) {
	b := open(t)
	if _, err := b.Exec("UPDATE employees SET salary = 1 WHERE id = 3"); err != nil {
		t.Fatal(err)
	}
	want := fingerprint(t, b)
	for name, q := range crashers {
		_, err := b.Query(context.Background(), q)
		var qe *QueryError
		if !errors.As(err, &qe) || !strings.Contains(err.Error(), "limit") {
			t.Errorf("%s: error %v, want a QueryError naming a limit", name, err)
		}
		if f := (*Fault)(nil); errors.As(err, &f) {
			t.Errorf("%s: reached the engine and crashed it: %v", name, f)
		}
		res, err := b.Query(context.Background(), "SELECT salary FROM employees WHERE id = 3")
		if err != nil || res.Rows[0]["salary"] != 1.0 {
			t.Errorf("%s: next query: %v %v", name, res, err)
		}
		if got := fingerprint(t, b); got != want {
			t.Errorf("%s: database changed", name)
		}
	}
}

// worstShapes are the costliest query shapes found, scaled by a number of
// SELECTs, a parenthesis depth and an expression depth, and combined along
// one nesting chain where they add up.
var worstShapes = map[string]func(sel, par, dep int) string{
	"CTE chain of windowed selects, CASE at the bottom": func(sel, par, dep int) string {
		var s strings.Builder
		// Each window function's rewrite deepens the expressions below it
		// by about three: windows on every other level, and a shallow
		// CASE, stay within MaxExprDepth.
		s.WriteString("WITH c0 AS (SELECT " + nest(dep/8, "CASE WHEN 1 THEN ", "1", " END") + " AS x)")
		for i := 1; i < sel-1; i++ {
			if i%2 == 0 {
				fmt.Fprintf(&s, ", c%d AS (SELECT x, sum(x) OVER (ORDER BY x) AS w FROM c%d)", i, i-1)
			} else {
				fmt.Fprintf(&s, ", c%d AS (SELECT x, count(*) AS w FROM c%d GROUP BY x)", i, i-1)
			}
		}
		fmt.Fprintf(&s, " SELECT x FROM c%d", sel-2)
		return s.String()
	},
	"nested FROM subqueries, nested BETWEEN": func(sel, par, dep int) string {
		return nest(par/2, "SELECT * FROM (", "SELECT "+nest(par/2, "1 BETWEEN 0 AND (", "1", ")"), ")")
	},
	"nested iif":        func(sel, par, dep int) string { return "SELECT " + nest(par, "iif(1, ", "1", ", 0)") },
	"nested BETWEEN":    func(sel, par, dep int) string { return "SELECT " + nest(par, "1 BETWEEN 0 AND (", "1", ")") },
	"left-deep BETWEEN": func(sel, par, dep int) string { return "SELECT 1" + strings.Repeat(" BETWEEN 0 AND 2", dep) },
	"compound, CASE in the first term": func(sel, par, dep int) string {
		return "SELECT " + nest(dep, "CASE WHEN 1 THEN ", "1", " END") + " UNION ALL " + unionAll(sel-2, "INTERSECT")
	},
	"compound, BETWEEN in the first term": func(sel, par, dep int) string {
		return "SELECT " + nest(par, "1 BETWEEN 0 AND (", "1", ")") + " UNION ALL " + unionAll(sel-2, "INTERSECT")
	},
	"nested functions in ORDER BY": func(sel, par, dep int) string {
		return "SELECT id FROM employees ORDER BY " + nest(par, "abs(", "id", ")")
	},
	"join parens": func(sel, par, dep int) string {
		var s strings.Builder
		s.WriteString("SELECT count(*) FROM ")
		for i := range par {
			fmt.Fprintf(&s, "(employees e%d JOIN ", i)
		}
		s.WriteString("employees")
		for i := par - 1; i >= 0; i-- {
			fmt.Fprintf(&s, " ON e%d.id = 1)", i)
		}
		return s.String()
	},
	"nested FROM subqueries": func(sel, par, dep int) string { return nest(min(sel, par)-1, "SELECT * FROM (", "SELECT 1", ")") },
}

// TestLimitsHaveMargin runs the worst shapes at the limits through Query,
// and at twice the limits on a connection whose SQLite limits are relaxed
// (the smallest crash factor measured is 3×, for the windowed CTE chain):
// neither may crash the engine. A driver upgrade with a smaller stack
// fails here.
func TestLimitsHaveMargin(t *testing.T) {
	noBackstop(t)
	b := open(t)
	for name, f := range worstShapes {
		q := f(MaxSelects-1, MaxNesting-2, MaxExprDepth-2)
		if checkShape(q) != nil {
			t.Errorf("%s: not at the limits but over them: %v", name, checkShape(q))
		}
		if _, err := b.Query(context.Background(), q); err != nil {
			t.Errorf("%s (%d bytes), at the limits: %v (the shape should run)", name, len(q), err)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for name, f := range worstShapes {
		q := f(2*MaxSelects, 2*MaxNesting, 2*MaxExprDepth)
		r := b.conns.reader
		// LIMIT_LENGTH too: a result column's name is its expression's
		// text, here longer than MaxValueLen.
		for _, l := range []sqlite3.LimitCategory{sqlite3.LIMIT_EXPR_DEPTH, sqlite3.LIMIT_COMPOUND_SELECT, sqlite3.LIMIT_PARSER_DEPTH, sqlite3.LIMIT_LENGTH} {
			r.Limit(l, 100000)
		}
		err := b.guarded("query", func() error {
			// The stack is spent compiling, so preparing is enough.
			stmt, _, err := r.Prepare(fmt.Sprintf("SELECT * FROM (\n%s\n) LIMIT %d", q, MaxRows+1))
			stmt.Close()
			return err
		})
		if errors.As(err, new(*Fault)) {
			t.Errorf("%s at twice the limits: crashed the engine: %v", name, err)
		} else if err != nil {
			t.Errorf("%s at twice the limits: %v (the shape should run)", name, err)
		}
	}
}

// TestRealCrashRecovered raises the query connection's limits and skips
// the shape check, so a query really exhausts the wasm stack: the panic is
// recovered, the box is rebuilt with the session's data, and Close does
// not panic.
func TestRealCrashRecovered(t *testing.T) {
	b := open(t)
	if _, err := b.Exec("UPDATE employees SET salary = 7 WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	want := fingerprint(t, b)
	b.mu.Lock()
	b.conns.reader.Limit(sqlite3.LIMIT_COMPOUND_SELECT, 500)
	err := b.guarded("query", func() error {
		_, err := query1(context.Background(), b.conns.reader, unionAll(400, "UNION ALL"), maxSteps, backstop)
		return err
	})
	b.mu.Unlock()
	var f *Fault
	if !errors.As(err, &f) || f.Restored != RestoredSession {
		t.Fatalf("error %v, want a Fault restored from the session", err)
	}
	if got := fingerprint(t, b); got != want {
		t.Error("rebuilt box lost the session's update")
	}
	if res, err := b.Query(context.Background(), unionAll(3, "UNION ALL")); err != nil || res.RowCount != 3 {
		t.Errorf("after recovery: %v %v", res, err)
	}
	if _, err := b.Exec("UPDATE employees SET salary = 8 WHERE id = 2"); err != nil {
		t.Errorf("writes after recovery: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// withFault makes op panic once.
func withFault(t *testing.T, op string) {
	t.Helper()
	armed := true
	faultHook = func(got string) {
		if got == op && armed {
			armed = false
			panic("forced fault in " + op)
		}
	}
	t.Cleanup(func() { faultHook = nil })
}

func TestForcedFaults(t *testing.T) {
	ctx := context.Background()
	t.Run("query", func(t *testing.T) {
		b := open(t)
		b.Exec("UPDATE employees SET salary = 5 WHERE id = 1")
		withFault(t, "query")
		_, err := b.Query(ctx, "SELECT 1")
		var qe *QueryError
		var f *Fault
		if !errors.As(err, &qe) || !errors.As(err, &f) || f.Restored != RestoredSession || !strings.Contains(qe.Msg, "data intact") {
			t.Fatalf("error %v", err)
		}
		res, err := b.Query(ctx, "SELECT salary FROM employees WHERE id = 1")
		if err != nil || res.Rows[0]["salary"] != 5.0 {
			t.Errorf("after: %v %v", res, err)
		}
	})
	t.Run("exec", func(t *testing.T) {
		b := open(t)
		withFault(t, "exec")
		if _, err := b.Exec("UPDATE employees SET salary = 5 WHERE id = 1"); !errors.As(err, new(*Fault)) {
			t.Fatalf("error %v", err)
		}
		if n, err := b.Exec("UPDATE employees SET salary = 6 WHERE id = 1"); n != 1 || err != nil {
			t.Errorf("after: %d %v", n, err)
		}
	})
	t.Run("tx panics half-way", func(t *testing.T) {
		b := open(t)
		b.Exec("UPDATE employees SET salary = 5 WHERE id = 1")
		err := b.Tx(func(exec func(string, ...any) (int64, error)) error {
			exec("DELETE FROM assignments")
			panic("bug in a tool")
		})
		var f *Fault
		if !errors.As(err, &f) {
			t.Fatalf("error %v", err)
		}
		row, err := b.QueryRow("SELECT (SELECT count(*) FROM assignments) > 0, salary FROM employees WHERE id = 1")
		if err != nil || fmt.Sprint(row) != "[1 5]" {
			t.Errorf("after a half-done transaction (restored from %s): %v %v", f.Restored, row, err)
		}
	})
	t.Run("close", func(t *testing.T) {
		b := open(t)
		withFault(t, "close")
		if err := b.Close(); err == nil {
			t.Error("Close swallowed the fault without saying so")
		}
		if err := b.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := b.Query(ctx, "SELECT 1"); !errors.Is(err, errClosed) {
			t.Errorf("query after close: %v", err)
		}
	})
}

func TestNonFiniteFloats(t *testing.T) {
	b := open(t)
	res, err := b.Query(context.Background(), "SELECT 1e999 AS p, -1e999 AS n, 1e999 - 1e999 AS nan, 1.5 AS f")
	if err != nil {
		t.Fatal(err)
	}
	text, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"rows":[{"f":1.5,"n":"-Infinity","nan":null,"p":"Infinity"}]`; !strings.Contains(string(text), want) {
		t.Errorf("got %s, want %s", text, want)
	}
}

// noBackstop lifts the wall-clock backstop for the rest of the test, so
// that a heavy query gets to its memory or stack limit however slow the
// machine (or the race detector) is; the step budget stays.
func noBackstop(t testing.TB) {
	backstop = time.Hour
	t.Cleanup(func() { backstop = Backstop })
}

// memoryHeavySort sorts 90,000 keys of 2,000 bytes near MaxValueLen,
// 180 MB, in 1.4M steps: over MaxHeap well within MaxSteps. The keys are
// zero blobs (randomblob's random bytes are slow under -race).
const memoryHeavySort = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 90000) SELECT i, sum(i) OVER (ORDER BY zeroblob(2000) || i) AS s FROM n"

func TestOutOfMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates the heap limit")
	}
	noBackstop(t)
	b := open(t)
	_, err := b.Query(context.Background(), memoryHeavySort)
	var qe *QueryError
	if !errors.As(err, &qe) || !strings.Contains(qe.Msg, fmt.Sprintf("more memory than allowed (%d MiB", MaxHeap>>20)) {
		t.Fatalf("error %v, want the memory limit", err)
	}
	if res, err := b.Query(context.Background(), "SELECT count(*) AS n FROM employees"); err != nil || res.Rows[0]["n"] != int64(3) {
		t.Errorf("after: %v %v", res, err)
	}
}

func TestMeasure(t *testing.T) {
	for _, tt := range []struct {
		sql              string
		selects, nesting int
	}{
		{"SELECT 1", 1, 0},
		{"select (SELECT 1) FROM (values (1))", 3, 2},
		{"SELECT 'SELECT (((' -- SELECT (\n /* VALUES ( */ , \"select\", [values], `(`", 1, 0},
		{"SELECT 'it''s (' , x'00' FROM t", 1, 0},
		{"SELECTED, selects, _select, select_", 0, 0},
		{"SELECT 'unterminated (((", 1, 0},
		{"SELECT ((1)) )) ((2", 1, 2},
	} {
		if got := measure(tt.sql); got.selects != tt.selects || got.nesting != tt.nesting {
			t.Errorf("measure(%q) = %+v, want %d selects, nesting %d", tt.sql, got, tt.selects, tt.nesting)
		}
	}
}

// FuzzComplexQuery builds long and deeply nested queries from the input
// (see genQuery): none may crash the engine, and the database must be
// unchanged and still answer afterwards.
func FuzzComplexQuery(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 0, 239},                              // 220-term UNION ALL
		{1, 246},                                 // about 300 chained CTEs
		{0, 2, 20, 6, 30},                        // INTERSECT, nested BETWEEN in the first term
		bytes.Repeat([]byte{0, 0, 16, 0, 1}, 16), // 16 nested subqueries of 17-term unions
		{0, 0, 0, 4, 239},                        // 220 nested CASE
		{0, 0, 0, 8, 239},                        // 220 nested scalar subqueries
		{0, 0, 0, 11, 240, 250},                  // LIKE with thousands of wildcards
		{0, 0, 0, 2, 246},                        // left-deep chain of 304 operators
		{0, 0, 0, 3, 250},                        // 352 nested parentheses
		{0, 0, 0, 13, 239},                       // JSON nested 1760 deep
		{0, 0, 0, 10, 250},                       // IN list of 2816 values
		{0, 0, 0, 12, 232, 5, 232},               // nested aggregates around nested abs()
		bytes.Repeat([]byte{14}, 64),             // windows ordered by windows
		{1, 20, 4, 30, 0, 1, 0, 0, 6, 20},        // CTE chain with CASE, then BETWEEN
	} {
		f.Add(seed)
	}
	// Long runs are not what this target looks for: a small step budget
	// keeps it fast.
	maxSteps = 200_000
	f.Cleanup(func() { maxSteps = MaxSteps })
	b := open(f)
	want := fingerprint(f, b)
	f.Fuzz(func(t *testing.T, data []byte) {
		q := genQuery(data)
		_, err := b.Query(context.Background(), q)
		if fl := (*Fault)(nil); errors.As(err, &fl) {
			t.Fatalf("query of %d bytes crashed the engine: %v\n%.2000s", len(q), fl, q)
		}
		if res, err := b.Query(context.Background(), "SELECT count(*) AS n FROM employees"); err != nil || res.Rows[0]["n"] != int64(3) {
			t.Fatalf("after %.200q: %v %v", q, res, err)
		}
		if got := fingerprint(t, b); got != want {
			t.Fatalf("query %.200q changed the database", q)
		}
	})
}

// TestRealisticQueriesAccepted guards against limits so tight that
// ordinary analytical queries a model writes are refused.
func TestRealisticQueriesAccepted(t *testing.T) {
	b := open(t)
	var in strings.Builder
	for i := range 200 {
		fmt.Fprintf(&in, ", %d", i)
	}
	for _, q := range []string{
		`WITH dept AS (SELECT d.id, d.name, d.budget FROM departments d),
		      pay AS (SELECT department_id, SUM(salary) AS total, AVG(salary) AS avg, COUNT(*) AS n FROM employees GROUP BY department_id),
		      ranked AS (SELECT e.name, e.salary, e.department_id, RANK() OVER (PARTITION BY e.department_id ORDER BY e.salary DESC) AS r FROM employees e),
		      top AS (SELECT * FROM ranked WHERE r <= 3),
		      work AS (SELECT a.employee_id, SUM(a.hours_per_week) AS hours FROM assignments a JOIN projects p ON p.id = a.project_id WHERE p.status IN ('active', 'planned') GROUP BY a.employee_id)
		 SELECT dept.name, pay.total, pay.avg, pay.n, top.name AS top_earner, top.salary, COALESCE(work.hours, 0) AS hours,
		        CASE WHEN pay.total > dept.budget THEN 'over' WHEN pay.total > dept.budget * 0.9 THEN 'near' WHEN pay.total > dept.budget * 0.5 THEN 'ok' ELSE 'low' END AS status
		 FROM dept LEFT JOIN pay ON pay.department_id = dept.id LEFT JOIN top ON top.department_id = dept.id
		 LEFT JOIN employees e ON e.name = top.name LEFT JOIN work ON work.employee_id = e.id
		 WHERE dept.id IN (SELECT department_id FROM employees WHERE salary > (SELECT AVG(salary) FROM employees))
		 ORDER BY pay.total DESC, top.salary DESC`,
		"SELECT name FROM employees WHERE id IN (0" + in.String() + ") AND (salary > 1000 OR title LIKE '%Engineer%' OR title LIKE '%Manager%' OR hire_date >= '2020-01-01') ORDER BY name",
		`SELECT e.name, m.name AS manager, (SELECT COUNT(*) FROM assignments a WHERE a.employee_id = e.id) AS projects,
		        ROUND(e.salary * 1.12, 2) AS raised, SUM(e.salary) OVER (ORDER BY e.hire_date ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
		 FROM employees e LEFT JOIN employees m ON m.id = e.manager_id
		 WHERE EXISTS (SELECT 1 FROM departments d WHERE d.id = e.department_id AND d.budget BETWEEN 100000 AND 10000000)
		 UNION ALL SELECT 'total', NULL, NULL, NULL, (SELECT SUM(salary) FROM employees)`,
	} {
		if _, err := b.Query(context.Background(), q); err != nil {
			t.Errorf("%.60s…: %v", q, err)
		}
	}
}
