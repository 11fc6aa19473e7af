package sqlbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// heavy are queries whose steps are few but each heavy: a function whose
// work is the product of two lengths, on values of about MaxValueLen
// bytes, on 200 rows. Unmetered, each runs about 5,000 steps and passes
// any budget of steps while it takes seconds; metered, each is over
// heavyBudget within the rows.
var heavy = map[string]string{
	"LIKE":        "(x || i) LIKE '%' || printf('%.990c', 'a') || 'b'",
	"LIKE ESCAPE": "(x || i) LIKE '%' || printf('%.990c', 'a') || 'b' ESCAPE '!'",
	"GLOB":        "(x || i) GLOB '*' || printf('%.990c', 'a') || 'b'",
	"instr":       "instr(x || i, printf('%.1000c', 'a') || 'b') > 0",
	"replace":     "replace(x || i, printf('%.1000c', 'a') || 'b', '') < ''",
	"trim":        "trim(x || i, printf('%.1000c', 'b')) < ''",
	"NOCASE":      strings.Repeat("((x || i) = (x || (i + 1)) COLLATE NOCASE) + ", 40) + "0 < 0",
}

const heavyBudget = 100_000

func heavySQL(cond string) string {
	return "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200), s(x) AS MATERIALIZED (SELECT printf('%.2000c', 'a')) SELECT count(*) AS c FROM n, s WHERE " + cond
}

// TestHeavyStepsStoppedByBudget: each heavy query is stopped by the
// budget with the model-visible message naming the budget and the
// string functions' share of it, the same message, step count included,
// on a second run and on a fresh box. Without metering each would pass
// (its steps are far under the budget) after seconds of work.
func TestHeavyStepsStoppedByBudget(t *testing.T) {
	noBackstop(t)
	maxSteps = heavyBudget
	t.Cleanup(func() { maxSteps = MaxSteps })
	b, fresh := open(t), open(t)
	for name, cond := range heavy {
		var msgs []string
		for _, box := range []*Box{b, b, fresh} {
			_, err := box.Query(context.Background(), heavySQL(cond))
			var qe *QueryError
			if !errors.As(err, &qe) {
				t.Fatalf("%s: error %v (%T), want the budget's *QueryError", name, err, err)
			}
			m := stepsRE.FindStringSubmatch(qe.Msg)
			if m == nil || m[2] != strconv.Itoa(heavyBudget) || !strings.Contains(qe.Msg, "the work of LIKE, GLOB, instr, replace, trim or NOCASE comparisons") {
				t.Fatalf("%s: %q, want the budget of %d steps and the functions' work", name, qe.Msg, heavyBudget)
			}
			if steps, _ := strconv.ParseInt(m[1], 10, 64); steps <= heavyBudget {
				t.Errorf("%s: stopped after %d steps, not over the budget", name, steps)
			}
			msgs = append(msgs, qe.Msg)
		}
		if msgs[0] != msgs[1] || msgs[0] != msgs[2] {
			t.Errorf("%s: messages differ between runs:\n%s", name, strings.Join(msgs, "\n"))
		}
		t.Logf("%s: %.60s", name, msgs[0])
	}
	// The same functions on short values are charged little.
	res, err := b.Query(context.Background(), "SELECT count(*) AS c FROM employees WHERE name LIKE '%a%' OR instr(name, 'P') OR replace(name, 'a', 'b') <> name OR trim(name, 'A') <> name")
	if err != nil || res.Steps > 1000 {
		t.Errorf("short values: %v, %v steps", err, res)
	}
}

// TestMeteredFunctionsAgree: the metered functions, and the metered NOCASE
// collation, give what SQLite's own give, types, NULLs, blobs, errors
// and sort orders included. The query connection
// computes each expression through its metered functions, the writer
// with the built-in ones.
func TestMeteredFunctionsAgree(t *testing.T) {
	b := open(t)
	for _, e := range []string{
		"'abc' LIKE 'A%'", "'abc' LIKE 'b'", "'a%c' LIKE 'a!%c' ESCAPE '!'", "'abc' LIKE 'a!%c' ESCAPE '!'",
		"'ABC' GLOB 'A*'", "'abc' GLOB 'A*'", "'abc' GLOB '[a-c]?c'", "'a]' GLOB '*[]]'", "x'616263' LIKE 'abc'",
		"123 LIKE '12%'", "1.5 LIKE '1._'", "NULL LIKE 'a'", "'a' LIKE NULL", "'é' LIKE 'É'", "'ß' LIKE '_'",
		"like('%b%', 'abc')", "like('a', 'a', NULL)", "glob('*', NULL)",
		"instr('hello', 'l')", "instr(x'0102', x'02')", "instr('héllo', 'l')", "instr(NULL, 'a')", "instr(12345, 34)",
		"instr('abc', '')", "instr(x'00ff', 'a')", "replace('aXbXc', 'X', '--')", "replace('abc', '', 'x')",
		"replace(NULL, 'a', 'b')", "replace('abc', 'b', NULL)", "replace(123, 2, 9)", "replace(x'616263', 'b', 'X')",
		"replace('abc', 'abc', '')", "trim('xxhixx', 'x')", "ltrim('  a  ', ' ')", "rtrim('abcc', 'c')",
		"trim(NULL, 'x')", "trim('xax', NULL)", "trim(12.50, '0')",
		"'a' LIKE 'aa' ESCAPE 'xy'", "'a' LIKE '%' || printf('%.1001c', 'a')",
		"'abc' = 'ABC' COLLATE NOCASE", "'abd' < 'ABC' COLLATE NOCASE", "'[' < 'a' COLLATE NOCASE", "'ab' < 'ABC' COLLATE NOCASE",
		"'a' || char(0) || 'b' = 'a' || char(0) || 'c' COLLATE NOCASE", "'ÄB' = 'äb' COLLATE NOCASE", "'' = '' COLLATE NOCASE",
		"(SELECT group_concat(v, ',') FROM (SELECT v FROM (VALUES ('b'), ('A'), ('a'), ('B'), ('_'), ('['), ('é'), ('É')) ORDER BY v COLLATE NOCASE, v))",
		"'a' || char(0) || 'b' = 'a' || char(0) || 'bc' COLLATE NOCASE", "'a' || char(0) || 'B' < 'a' || char(0) || 'b' COLLATE NOCASE",
	} {
		q := fmt.Sprintf("SELECT quote(%s) AS q, typeof(%s) AS t", e, e)
		want, werr := b.QueryRow(q)
		res, err := b.Query(context.Background(), q)
		switch {
		case werr != nil || err != nil:
			if werr == nil || err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(werr.Error(), "sqlite3: SQL logic error: ")) {
				t.Errorf("%s: metered %v, built-in %v", e, err, werr)
			}
		case res.Rows[0]["q"] != want[0] || res.Rows[0]["t"] != want[1]:
			t.Errorf("%s: metered %v %v, built-in %v %v", e, res.Rows[0]["q"], res.Rows[0]["t"], want[0], want[1])
		}
	}
}

// TestValueLenLimit: a query may neither build nor read a value over
// MaxValueLen bytes, which is what bounds the work of one step; values of
// 4 KB already let a query of arithmetic on digit strings run 18.7 s
// within the step budget (see budget.go).
func TestValueLenLimit(t *testing.T) {
	b := open(t)
	if _, err := b.Query(context.Background(), "SELECT length(printf('%.4096c', '9')) AS n"); !errors.As(err, new(*QueryError)) {
		t.Errorf("a value of 4096 bytes: %v, want refused", err)
	}
	if _, err := b.Exec("UPDATE employees SET name = printf('%.*c', ?, 'n') WHERE id = 1", MaxValueLen+1); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		fmt.Sprintf("SELECT length(printf('%%.*c', %d, 'a')) AS n", MaxValueLen+1),
		fmt.Sprintf("SELECT length(zeroblob(%d)) AS n", MaxValueLen+1),
		"SELECT length(name) AS n FROM employees WHERE id = 1",
	} {
		_, err := b.Query(context.Background(), q)
		var qe *QueryError
		if !errors.As(err, &qe) || !strings.Contains(qe.Msg, fmt.Sprintf("too large (limit %d bytes for a string, blob or row)", MaxValueLen)) {
			t.Errorf("%s: %v, want the value limit", q, err)
		}
	}
	res, err := b.Query(context.Background(), fmt.Sprintf("SELECT length(printf('%%.*c', %d, 'a')) AS n, count(*) AS c FROM employees WHERE id <> 1", MaxValueLen))
	if err != nil || res.Rows[0]["n"] != int64(MaxValueLen) {
		t.Errorf("a value of MaxValueLen bytes: %v %v", res, err)
	}
}

// TestDeniedFunctions: the functions no suite needs whose work no length
// bounds, and the decimal collation, are refused when the query is
// prepared, whatever their arguments, and the query says which.
func TestDeniedFunctions(t *testing.T) {
	b := open(t)
	for q, want := range map[string]string{
		"SELECT 'abc' REGEXP 'b+' AS r":                               "not authorized to use function: REGEXP",
		"SELECT regexpi('a', 'A') AS r":                               "not authorized to use function: regexpi",
		"SELECT length(randomblob(16)) AS r":                          "not authorized to use function: randomblob",
		"SELECT decimal_mul('1.5', '2') AS r":                         "not authorized to use function: decimal_mul",
		"SELECT decimal(1.5, 2) AS r":                                 "not authorized to use function: decimal",
		"SELECT decimal_pow2(20000) AS r":                             "not authorized to use function: decimal_pow2",
		"SELECT decimal_sum(salary) AS r FROM employees":              "not authorized to use function: decimal_sum",
		"SELECT 1 AS r FROM employees WHERE 0 AND decimal_exp(1) > 0": "not authorized to use function: decimal_exp",
		"SELECT '10' < '9' COLLATE decimal AS r":                      "no such collation sequence: decimal",
	} {
		_, err := b.Query(context.Background(), q)
		var qe *QueryError
		if !errors.As(err, &qe) || !strings.Contains(qe.Msg, want) {
			t.Errorf("%s: %v, want refused: %s", q, err, want)
		}
	}
}

// TestValueLenFollowsWideRows: a database whose rows are wider than
// MaxValueLen raises its queries' value limit to rowFactor of them, so
// that its rows can be sorted and joined; the refusal names that limit.
func TestValueLenFollowsWideRows(t *testing.T) {
	if got := template(t).ValueLen(); got != MaxValueLen {
		t.Errorf("the test database's ValueLen is %d, want MaxValueLen %d", got, MaxValueLen)
	}
	tm, err := NewTemplate("CREATE TABLE w(id INTEGER PRIMARY KEY, a TEXT, b TEXT, \"odd \"\"name\" BLOB); " +
		"INSERT INTO w VALUES (1, printf('%.1000c', 'a'), printf('%.1000c', 'b'), zeroblob(1000)), (2, 'x', NULL, NULL); CREATE TABLE empty(x)")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tm.ValueLen(), rowFactor*3005; got != want {
		t.Fatalf("ValueLen %d, want %d (four rows of 3,001 bytes and 4 header bytes)", got, want)
	}
	b, err := tm.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res, err := b.Query(context.Background(), "SELECT x.*, y.a AS a2 FROM w x JOIN w y ON y.id = 1 ORDER BY x.id DESC")
	if err != nil || res.RowCount != 2 {
		t.Errorf("sorting a join of wide rows: %v %v", res, err)
	}
	_, err = b.Query(context.Background(), fmt.Sprintf("SELECT length(printf('%%.*c', %d, 'a')) AS n", tm.ValueLen()+1))
	if want := fmt.Sprintf("too large (limit %d bytes", tm.ValueLen()); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a value over ValueLen: %v, want %q", err, want)
	}

	// Floats take 8 bytes in a row however short their text: a join of
	// two rows of 200 of them (3,600 bytes) is sorted.
	reals := strings.TrimSuffix(strings.Repeat("0.5, ", 200), ", ")
	var cols []string
	for i := range 200 {
		cols = append(cols, fmt.Sprintf("c%d REAL", i))
	}
	tm, err = NewTemplate("CREATE TABLE r(" + strings.Join(cols, ", ") + "); INSERT INTO r VALUES (" + reals + "), (" + reals + ")")
	if err != nil {
		t.Fatal(err)
	}
	b, err = tm.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if res, err := b.Query(context.Background(), "SELECT x.*, y.* FROM r x, r y ORDER BY x.c1"); err != nil || res.RowCount != 4 {
		t.Errorf("sorting a join of rows of floats (ValueLen %d): %v %v", tm.ValueLen(), res, err)
	}
}
