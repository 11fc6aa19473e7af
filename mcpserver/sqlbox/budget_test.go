package sqlbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runaway are queries that run until something stops them: the red team's
// recursive CTE without an end condition, a cartesian product, and LIKE
// and GLOB patterns full of wildcards on every row of an endless CTE.
var runaway = map[string]string{
	"endless recursive CTE": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n) SELECT count(*) FROM n",
	"endless rows":          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n) SELECT i FROM n WHERE i < 0",
	"cartesian product":     "SELECT count(*) FROM employees a, employees b, employees c, employees d, employees e, employees f, employees g, employees h, employees i, employees j, employees k, employees l, employees m, employees n, employees o",
	"LIKE bomb":             "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n) SELECT count(*) FROM n WHERE printf('%.*c', 200 + i % 7, 'a') LIKE '%' || replace(printf('%.*c', 60, 'x'), 'x', 'a%') || 'b'",
	"GLOB bomb":             "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n) SELECT count(*) FROM n WHERE printf('%.*c', 200 + i % 7, 'a') GLOB '*' || replace(printf('%.*c', 60, 'x'), 'x', 'a*') || 'b'",
}

var stepsRE = regexp.MustCompile(`stopped after (\d+) steps of the database engine, over the limit of (\d+) steps per query`)

// TestRunawayStoppedByStepBudget: each runaway query is stopped by the
// step budget with a *QueryError naming the budget and the steps run,
// just over it: the endless CTE under the real MaxSteps (the only test
// that runs it), all of them under a smaller budget (to keep the test
// fast), where the message, step count included, is the same on a second
// run on the same box and on a fresh box: nothing in it depends on time.
func TestRunawayStoppedByStepBudget(t *testing.T) {
	noBackstop(t) // the step budget must stop them, however slow the machine
	b, fresh := open(t), open(t)
	stopped := func(name string, box *Box, limit int64) (string, int64) {
		t.Helper()
		_, err := box.Query(context.Background(), runaway[name])
		var qe *QueryError
		if !errors.As(err, &qe) {
			t.Fatalf("%s: error %v (%T), want a *QueryError", name, err, err)
		}
		m := stepsRE.FindStringSubmatch(qe.Msg)
		if m == nil {
			t.Fatalf("%s: %q does not name the step budget", name, qe.Msg)
		}
		steps, _ := strconv.ParseInt(m[1], 10, 64)
		if m[2] != strconv.FormatInt(limit, 10) || steps <= limit || steps > limit+2*progressOps {
			t.Errorf("%s: stopped after %d steps, limit %s; want just over %d", name, steps, m[2], limit)
		}
		return qe.Msg, steps
	}
	for name := range runaway {
		if name == "endless recursive CTE" && !testing.Short() {
			// The real budget once: the budget is the same code for every
			// query, and 5M steps of each under -race cost about 10 s.
			stopped(name, b, MaxSteps)
		}
		maxSteps = 50_000
		first, steps := stopped(name, b, maxSteps)
		again, _ := stopped(name, b, maxSteps)
		other, _ := stopped(name, fresh, maxSteps)
		maxSteps = MaxSteps
		if first != again || first != other {
			t.Errorf("%s: messages differ between runs:\n%s\n%s\n%s", name, first, again, other)
		}
		t.Logf("%s: stopped after %d steps", name, steps)
	}
	if res, err := b.Query(context.Background(), "SELECT count(*) AS n FROM employees"); err != nil || res.Rows[0]["n"] != int64(3) {
		t.Errorf("after the runaway queries: %v %v", res, err)
	}
}

// TestStepBudgetExact: a query's steps are the same on every run, a budget
// of exactly those steps lets it through, and one progress interval less
// stops it, whatever the rows returned (the counter moves between Steps).
func TestStepBudgetExact(t *testing.T) {
	b := open(t)
	for _, q := range []string{
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 20000) SELECT count(*) AS c FROM n",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 20000) SELECT i FROM n WHERE i % 50 = 0",
	} {
		res, err := b.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		steps := res.Steps
		if steps < 100_000 {
			t.Fatalf("%.60s: %d steps; the test needs a query of many progress intervals", q, steps)
		}
		if again, err := b.Query(context.Background(), q); err != nil || again.Steps != steps {
			t.Fatalf("%.60s: second run %d steps (%v), first %d", q, again.Steps, err, steps)
		}
		t.Run(fmt.Sprint(steps), func(t *testing.T) {
			maxSteps = steps
			t.Cleanup(func() { maxSteps = MaxSteps })
			if _, err := b.Query(context.Background(), q); err != nil {
				t.Errorf("budget %d = its steps: %v", steps, err)
			}
			maxSteps = steps - progressOps
			_, err := b.Query(context.Background(), q)
			if m := stepsRE.FindStringSubmatch(fmt.Sprint(err)); m == nil || m[2] != strconv.FormatInt(maxSteps, 10) {
				t.Errorf("budget %d: %v, want stopped over %d", maxSteps, err, maxSteps)
			}
		})
	}
}

// TestWallClockNeverModelVisible: with a backstop so short that every
// query reaches it (as a machine stalled for Backstop would), no query,
// under the budget or runaway, gets a *QueryError, the error the model is
// shown and scored on: the backstop is the server's failure. The caller's
// context ending is too. With the backstop back, the same queries get
// their answer and the budget's refusal (a smaller budget than MaxSteps,
// which TestRunawayStoppedByStepBudget runs: 5M steps under -race on a
// busy machine could reach the real backstop first).
func TestWallClockNeverModelVisible(t *testing.T) {
	maxSteps = 200_000
	t.Cleanup(func() { maxSteps = MaxSteps })
	b := open(t)
	ordinary, endless := "SELECT name FROM employees ORDER BY salary DESC", runaway["endless recursive CTE"]
	backstop = time.Nanosecond
	for _, q := range []string{ordinary, endless} {
		_, err := b.Query(context.Background(), q)
		var qe *QueryError
		if err == nil || errors.As(err, &qe) || !strings.Contains(err.Error(), "wall-clock backstop") {
			t.Errorf("%.40s with a 1ns backstop: %v (%T), want a server error naming the backstop", q, err, err)
		}
	}
	backstop = Backstop
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Query(ctx, ordinary); err == nil || errors.As(err, new(*QueryError)) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v (%T), want a server error wrapping context.Canceled", err, err)
	}
	if res, err := b.Query(context.Background(), ordinary); err != nil || res.RowCount != 3 {
		t.Errorf("ordinary query: %v %v", res, err)
	}
	if _, err := b.Query(context.Background(), endless); !errors.As(err, new(*QueryError)) {
		t.Errorf("endless query: %v, want the step budget's *QueryError", err)
	}
}

// TestTableHasNoBudget: the state tools' table read is bounded by its
// context only: with a budget and a backstop that stop every model query,
// Table still reads the table, the session's own writes included.
func TestTableHasNoBudget(t *testing.T) {
	maxSteps, backstop = 1, time.Nanosecond
	t.Cleanup(func() { maxSteps, backstop = MaxSteps, Backstop })
	b := open(t)
	if _, err := b.Exec("UPDATE employees SET salary = 1 WHERE name = 'Ada Park'"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Query(context.Background(), "SELECT * FROM employees"); err == nil {
		t.Fatal("Query under a 1-step budget and a 1ns backstop: no error (else this test proves nothing)")
	}
	res, err := b.Table(context.Background(), "employees")
	if err != nil {
		t.Fatal(err)
	}
	if res.RowCount == 0 || res.Rows[0]["name"] != "Ada Park" || res.Rows[0]["salary"] != 1.0 {
		t.Errorf("Table: %d rows, first %v; want the employees in rowid order, Ada Park's salary 1", res.RowCount, res.Rows)
	}
	if _, err := b.Table(context.Background(), `no"such`); err == nil {
		t.Error("Table of a missing table: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Table(ctx, "employees"); err == nil {
		t.Error("Table with an ended context: no error")
	}
}

// TestBudgetMessage: the budget's message names the limit and both usual
// causes, a recursive query and a join without its condition.
func TestBudgetMessage(t *testing.T) {
	maxSteps = 10 * progressOps
	t.Cleanup(func() { maxSteps = MaxSteps })
	_, err := open(t).Query(context.Background(), runaway["cartesian product"])
	var qe *QueryError
	if !errors.As(err, &qe) || !strings.Contains(qe.Msg, "over the limit of 10000 steps per query") ||
		!strings.Contains(qe.Msg, "recursive query") || !strings.Contains(qe.Msg, "join") {
		t.Errorf("message %v", err)
	}
}

// TestTemplateSteps: a template's budget applies to the queries of every
// box opened from it, and only budgets within MinSteps..MaxStepsLimit are
// accepted.
func TestTemplateSteps(t *testing.T) {
	script, err := os.ReadFile("testdata/company.sql")
	if err != nil {
		t.Fatal(err)
	}
	tm, err := NewTemplate(string(script))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{0, -1, MinSteps - 1, MaxStepsLimit + 1} {
		if err := tm.SetSteps(n); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("between %d and %d", MinSteps, MaxStepsLimit)) {
			t.Errorf("SetSteps(%d): %v, want refused with the bounds", n, err)
		}
	}
	if err := tm.SetSteps(20_000); err != nil {
		t.Fatal(err)
	}
	b, err := tm.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = b.Query(context.Background(), runaway["endless recursive CTE"])
	if m := stepsRE.FindStringSubmatch(fmt.Sprint(err)); m == nil || m[2] != "20000" {
		t.Errorf("endless CTE under a 20000-step template: %v", err)
	}
	if _, err := open(t).Query(context.Background(), "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 10000) SELECT count(*) FROM n"); err != nil {
		t.Errorf("another template keeps MaxSteps: %v", err)
	}
}
