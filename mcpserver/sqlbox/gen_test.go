package sqlbox

import (
	"fmt"
	"strings"
)

// genQuery builds a query structurally from fuzz input: each byte picks a
// construct or a repeat count, so short inputs describe long, deeply
// nested queries (UNION chains, CTE chains, nested subqueries, CASE,
// BETWEEN, function calls, IN lists, LIKE patterns, window functions).
// Byte 0, which is also what an exhausted input reads, always picks the
// simplest choice, so every input ends. The output stops growing at about
// maxGen bytes, under MaxSQLLength, so that most queries get past the
// length check to the shape check and SQLite.
//
// Every SELECT it writes has the columns x and salary, so that compound
// terms match and every level can refer to the one below.
func genQuery(data []byte) string {
	g := &gen{data: data}
	g.query(0)
	return g.b.String()
}

const maxGen = 12 << 10

type gen struct {
	data []byte
	pos  int
	b    strings.Builder
}

func (g *gen) next() int {
	if g.pos >= len(g.data) {
		return 0
	}
	g.pos++
	return int(g.data[g.pos-1])
}

// count reads a repeat count from one byte: mostly 0 to 39, around the
// limits, and for the top 32 byte values 40 to 412, past them (224+15
// gives 220, 224+22 gives 304).
func (g *gen) count() int {
	n := g.next()
	if n < 224 {
		return n % 40
	}
	return 40 + (n-224)*12
}

func (g *gen) full() bool { return g.b.Len() > maxGen }

func (g *gen) w(s string) { g.b.WriteString(s) }

// query writes an optional WITH chain, then a compound select of 1 + a
// count of terms.
func (g *gen) query(depth int) {
	if g.next()%4 == 1 {
		n := g.count()
		g.w("WITH c0 AS (SELECT 1 AS x, 1 AS salary)")
		for i := 1; i <= n && !g.full(); i++ {
			fmt.Fprintf(&g.b, ", c%d AS (", i)
			g.selectCore(depth+1, fmt.Sprintf("c%d", i-1))
			g.w(")")
		}
		g.w(" ")
	}
	op := []string{" UNION ALL ", " UNION ", " INTERSECT ", " EXCEPT "}[g.next()%4]
	terms := g.count()
	g.selectCore(depth, "")
	for i := 0; i < terms && !g.full(); i++ {
		g.w(op)
		g.selectCore(depth, "")
	}
}

// selectCore writes one SELECT reading from a table, the CTE from, or a
// nested subquery.
func (g *gen) selectCore(depth int, from string) {
	g.w("SELECT ")
	g.expr(depth)
	g.w(" AS x, salary FROM ")
	switch {
	case from != "":
		g.w(from)
	case g.next()%3 == 1 && !g.full():
		g.w("(")
		g.query(depth + 1)
		g.w(")")
	default:
		g.w("employees")
	}
	if g.next()%2 == 1 {
		g.w(" WHERE ")
		g.expr(depth)
	}
}

// expr writes an expression; its shape and nesting come from the input.
func (g *gen) expr(depth int) {
	if g.full() || depth > 600 {
		g.w("1")
		return
	}
	switch g.next() % 15 {
	case 0:
		g.w("1")
	case 1:
		g.w("salary")
	case 2: // left-deep chain
		n := g.count()
		g.w("salary")
		for i := 0; i < n && !g.full(); i++ {
			g.w([]string{" + 1", " || 'a'", " AND 1", " OR 0", " BETWEEN 0 AND 2"}[i%5])
		}
	case 3:
		g.nest(depth, g.count(), "(", ")")
	case 4:
		g.nest(depth, g.count(), "CASE WHEN salary THEN ", " END")
	case 5:
		g.nest(depth, g.count(), "abs(", ")")
	case 6:
		g.nest(depth, g.count(), "1 BETWEEN 0 AND (", ")")
	case 7:
		g.nest(depth, g.count(), "iif(1, ", ", 0)")
	case 8:
		g.nest(depth, g.count(), "(SELECT ", ")")
	case 9:
		g.w("EXISTS (")
		g.query(depth + 1)
		g.w(")")
	case 10:
		n := g.count() * 8
		g.w("salary IN (0")
		for i := 1; i <= n && !g.full(); i++ {
			fmt.Fprintf(&g.b, ",%d", i)
		}
		g.w(")")
	case 11:
		fmt.Fprintf(&g.b, "(printf('%%.*c', %d, 'a') LIKE replace(printf('%%.*c', %d, 'x'), 'x', '%%a'))", g.count()*20, g.count()*20)
	case 12:
		g.nest(depth, g.count(), "max(", ")")
	case 13:
		n := g.count() * 8
		fmt.Fprintf(&g.b, "json_valid('%s%s')", strings.Repeat("[", n), strings.Repeat("]", n))
	default:
		g.w("sum(1) OVER (ORDER BY ")
		g.expr(depth + 1)
		g.w(")")
	}
}

// nest writes n levels of open … close around an expression, fewer if
// they would not fit in maxGen.
func (g *gen) nest(depth, n int, open, close string) {
	n = max(0, min(n, (maxGen-g.b.Len())/(len(open)+len(close))))
	g.w(strings.Repeat(open, n))
	g.expr(depth + n)
	g.w(strings.Repeat(close, n))
}
