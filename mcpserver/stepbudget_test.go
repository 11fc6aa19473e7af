package mcpserver

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/fixtures"
	"github.com/toolward/toolward/mcpserver/sqlbox"
	"gopkg.in/yaml.v3"
)

// budgetMargin is how far below sqlbox.MaxSteps every legitimate query of
// the repository must stay.
const budgetMargin = 100

// repoSQL returns every SQL string written as a query_database argument
// (a map key sql with a string value) in the YAML files under the
// repository's cases/ and fixtures/cassettes/, keyed by the SQL, valued by
// the first file it was found in.
func repoSQL(t *testing.T) map[string]string {
	t.Helper()
	found := map[string]string{}
	var walk func(file string, n *yaml.Node)
	walk = func(file string, n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Value == "sql" && v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
					if _, ok := found[v.Value]; !ok {
						found[v.Value] = file
					}
				}
			}
		}
		for _, c := range n.Content {
			walk(file, c)
		}
	}
	for _, dir := range []string{"../cases", "../fixtures/cassettes"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			dec := yaml.NewDecoder(strings.NewReader(string(data)))
			for {
				var doc yaml.Node
				if err := dec.Decode(&doc); err != nil {
					break
				}
				walk(p, &doc)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return found
}

// TestCaseQueriesWithinBudget runs every query_database SQL of the cases
// and cassettes on the bundled database: each stays a budgetMargin-fold
// below sqlbox.MaxSteps, so that no legitimate query comes near the step
// budget however the data or the engine's plans shift a little.
func TestCaseQueriesWithinBudget(t *testing.T) {
	t.Parallel()
	script, err := fs.ReadFile(fixtures.FS, "db/company.sql")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := sqlbox.NewTemplate(string(script))
	if err != nil {
		t.Fatal(err)
	}
	queries := repoSQL(t)
	if len(queries) < 20 {
		t.Fatalf("found %d query_database SQL strings in cases/ and fixtures/cassettes/; the walk is broken", len(queries))
	}
	sqls := make([]string, 0, len(queries))
	for q := range queries {
		sqls = append(sqls, q)
	}
	slices.Sort(sqls)
	var most int64
	for _, q := range sqls {
		b, err := tmpl.Open()
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.Query(context.Background(), q)
		b.Close()
		var qe *sqlbox.QueryError
		switch {
		case err != nil && !errors.As(err, &qe):
			t.Errorf("%s: %.80q: %v", queries[q], q, err)
		case err != nil:
			// Some recorded model queries are wrong on purpose; none may
			// be wrong for its amount of work.
			if strings.Contains(qe.Msg, "steps of the database engine") {
				t.Errorf("%s: %.80q: %v", queries[q], q, err)
			}
		default:
			most = max(most, res.Steps)
			if res.Steps > sqlbox.MaxSteps/budgetMargin {
				t.Errorf("%s: %.80q ran %d steps, over MaxSteps/%d = %d", queries[q], q, res.Steps, budgetMargin, sqlbox.MaxSteps/budgetMargin)
			}
			if testing.Verbose() {
				t.Logf("%8d steps  %s  %.100s", res.Steps, queries[q], q)
			}
		}
	}
	t.Logf("%d queries, at most %d steps (MaxSteps %d)", len(sqls), most, sqlbox.MaxSteps)
}

// TestQueryStepsOption: Options.QuerySteps is the budget query_database's
// refusal names, and a budget outside sqlbox's bounds fails New.
func TestQueryStepsOption(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{-1, sqlbox.MinSteps - 1, sqlbox.MaxStepsLimit + 1} {
		if _, err := New(Options{QuerySteps: n}); err == nil || !strings.Contains(err.Error(), "query steps: a query's step budget must be between") {
			t.Errorf("QuerySteps %d: %v, want refused", n, err)
		}
	}
	s, err := New(Options{QuerySteps: 20_000})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)
	r := call(t, c, "query_database", map[string]any{"sql": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n) SELECT count(*) FROM n"})
	if !r.IsError || !strings.Contains(text(r), "over the limit of 20000 steps per query") {
		t.Errorf("endless CTE under QuerySteps 20000: isError=%v %s", r.IsError, text(r))
	}
	// Few steps, each heavy: the work LIKE on long strings is charged
	// reaches the budget, and the message says so.
	r = call(t, c, "query_database", map[string]any{"sql": likeBomb})
	if !r.IsError || !strings.Contains(text(r), "over the limit of 20000 steps per query, ") || !strings.Contains(text(r), "the work of LIKE") {
		t.Errorf("LIKE bomb under QuerySteps 20000: isError=%v %s", r.IsError, text(r))
	}
	wantOK(t, call(t, c, "query_database", map[string]any{"sql": "SELECT count(*) FROM employees"}))
}

// likeBomb is an endless row source matched by a LIKE of 990 bytes on
// strings of 2,000: about 124,000 steps of charged work a row.
const likeBomb = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n), s(x) AS MATERIALIZED (SELECT printf('%.2000c', 'a')) SELECT count(*) FROM n, s WHERE (x || i) LIKE '%' || printf('%.990c', 'a') || 'b'"
