package sqlbox

import (
	"fmt"
	"strings"

	"github.com/ncruces/go-sqlite3"
)

// Complexity limits on one model-written query.
//
// The SQLite build runs as WebAssembly translated to Go with a fixed
// 64 KiB C stack (linked stack-first; neither the driver nor the wasm
// module can change it at run time). The parser, name resolution and code
// generation recurse once per nested SELECT and per expression level;
// when the stack runs out the wasm code indexes memory below address 0 and
// panics, leaving that connection unusable. Measured crash points with
// SQLite's default limits (robust_test.go keeps each as a regression
// test):
//
//	UNION ALL terms                       220   (~300 B per term)
//	INTERSECT / EXCEPT terms              182   (~360 B per term)
//	chained CTEs (c1 reads c0 …)          263   (~250 B per CTE)
//	16 CTEs of 16 UNION ALL terms each     16   (the costs add up)
//	nested FROM subqueries / join parens  266   (~250 B per level)
//	expression depth (+, ||, NOT, CASE)   332   (~200 B per level)
//	nested aggregates, ORDER BY terms     222   (~300 B per level)
//	nested iif()                          166   (~400 B per level)
//	nested BETWEEN                         88   (~750 B per level)
//	LIKE '%a%a…' (at run time)           4123   wildcards
//
// SQLite bounds expression depth, compound terms and LIKE patterns itself
// (its defaults, 1000, 500 and 50000, are far above the crash points);
// nothing in SQLite bounds CTE chains or how many SELECTs nest, so
// checkShape counts SELECTs and parenthesis depth in the text before
// SQLite sees it. With all limits below, the worst shapes found, combined
// along one nesting chain (TestLimitsHaveMargin), crash only at 3× to 11×
// the limits. Any crash that still gets through is recovered (see Fault).
const (
	MaxSelects       = 24     // SELECT and VALUES keywords in one query (compound terms, subqueries, CTE bodies)
	MaxNesting       = 24     // depth of nested parentheses
	MaxExprDepth     = 64     // expression tree depth (SQLITE_LIMIT_EXPR_DEPTH)
	MaxCompoundTerms = 24     // terms of one UNION/INTERSECT/EXCEPT (SQLITE_LIMIT_COMPOUND_SELECT)
	MaxFunctionArgs  = 100    // arguments of one function call (SQLITE_LIMIT_FUNCTION_ARG)
	MaxLikePattern   = 1000   // bytes of a LIKE or GLOB pattern (SQLITE_LIMIT_LIKE_PATTERN_LENGTH)
	MaxColumns       = 500    // columns of a result or table (SQLITE_LIMIT_COLUMN)
	MaxVDBEOps       = 500000 // instructions of one compiled query (SQLITE_LIMIT_VDBE_OP)
	maxParserDepth   = 1000   // SQLITE_LIMIT_PARSER_DEPTH: the parser's own (heap) stack
	maxVariables     = 100    // SQLITE_LIMIT_VARIABLE_NUMBER: queries have no bound parameters
)

// sqliteLimits are the limits set on the query connection. The row cap
// wrapper adds one SELECT and one level of nesting, which MaxSelects and
// MaxNesting leave room for.
var sqliteLimits = []struct {
	id    sqlite3.LimitCategory
	value int
}{
	{sqlite3.LIMIT_ATTACHED, 0},
	{sqlite3.LIMIT_SQL_LENGTH, MaxSQLLength + 100},
	{sqlite3.LIMIT_EXPR_DEPTH, MaxExprDepth},
	{sqlite3.LIMIT_COMPOUND_SELECT, MaxCompoundTerms},
	{sqlite3.LIMIT_VDBE_OP, MaxVDBEOps},
	{sqlite3.LIMIT_FUNCTION_ARG, MaxFunctionArgs},
	{sqlite3.LIMIT_LIKE_PATTERN_LENGTH, MaxLikePattern},
	{sqlite3.LIMIT_VARIABLE_NUMBER, maxVariables},
	{sqlite3.LIMIT_COLUMN, MaxColumns},
	{sqlite3.LIMIT_TRIGGER_DEPTH, 1},
	{sqlite3.LIMIT_PARSER_DEPTH, maxParserDepth},
}

// setLimits sets sqliteLimits on c, and valueLen as SQLITE_LIMIT_LENGTH
// (see Template.ValueLen).
func setLimits(c *sqlite3.Conn, valueLen int) {
	for _, l := range sqliteLimits {
		c.Limit(l.id, l.value)
	}
	c.Limit(sqlite3.LIMIT_LENGTH, valueLen)
}

// shape is what checkShape counts in a query's text.
type shape struct {
	selects int // SELECT and VALUES keywords
	nesting int // deepest parenthesis nesting
}

// checkShape refuses a query whose text is too complex for the engine's
// stack (see MaxSelects). It tokenizes just enough of SQL to skip string
// literals, quoted identifiers and comments; it errs on the side of
// counting (an unterminated literal runs to the end of the text).
func checkShape(sql string) error {
	s := measure(sql)
	if s.selects > MaxSelects {
		return queryErr("query too complex: it has %d SELECT or VALUES clauses (limit %d, counting every UNION term, subquery and CTE); split it into simpler queries", s.selects, MaxSelects)
	}
	if s.nesting > MaxNesting {
		return queryErr("query too complex: parentheses nest %d deep (limit %d); flatten the subqueries or expressions", s.nesting, MaxNesting)
	}
	return nil
}

// measure scans sql once.
func measure(sql string) shape {
	var s shape
	depth := 0
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			i = skipTo(sql, i+2, "\n")
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			i = skipTo(sql, i+2, "*/")
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(sql, i+1, c)
		case c == '[':
			i = skipTo(sql, i+1, "]")
		case c == '(':
			depth++
			s.nesting = max(s.nesting, depth)
			i++
		case c == ')':
			depth = max(depth-1, 0)
			i++
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			if w := sql[i:j]; equalFold(w, "SELECT") || equalFold(w, "VALUES") {
				s.selects++
			}
			i = j
		default:
			i++
		}
	}
	return s
}

// skipTo returns the index just past the first end at or after i, or
// len(sql).
func skipTo(sql string, i int, end string) int {
	for ; i < len(sql); i++ {
		if sql[i] == end[0] && len(sql)-i >= len(end) && sql[i:i+len(end)] == end {
			return i + len(end)
		}
	}
	return len(sql)
}

// skipQuoted returns the index just past the quote that closes a literal
// opened just before i; a doubled quote is an escaped one.
func skipQuoted(sql string, i int, q byte) int {
	for i < len(sql) {
		if sql[i] == q {
			if i+1 < len(sql) && sql[i+1] == q {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(sql)
}

// isWordByte reports whether c can be part of an identifier or keyword
// (SQLite treats every byte ≥ 0x80 as an identifier character).
func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// equalFold compares an ASCII word case-insensitively.
func equalFold(w, upper string) bool {
	if len(w) != len(upper) {
		return false
	}
	for i := range len(w) {
		if w[i]&^0x20 != upper[i] {
			return false
		}
	}
	return true
}

// limitMessage names the limit a SQLite "too big" or "too complex" error
// refers to, for the model.
func limitMessage(msg string) string {
	msg = strings.TrimPrefix(msg, "SQL logic error: ")
	return fmt.Sprintf("query too complex for the database engine: %s (limits: expression depth %d, %d terms per UNION, %d SELECTs per query, %d function arguments, LIKE patterns of %d bytes)",
		msg, MaxExprDepth, MaxCompoundTerms, MaxSelects, MaxFunctionArgs, MaxLikePattern)
}
