package sqlbox

import (
	"fmt"

	"github.com/ncruces/go-sqlite3"
)

// Work of the functions whose cost is not bounded by a step.
//
// The value limit (Template.ValueLen) bounds what one step of SQLite's
// own code can do to a value (copy, compare, convert it). A few built-in
// functions that ordinary queries use do more: their work grows with the
// product of two arguments' lengths (a LIKE pattern scanned from every
// position of the string, instr and replace comparing the needle at
// every position, trim testing every character against every other).
// The query connection replaces each with a metered version: it charges
// the budget an upper bound of that work, in steps, before any of it is
// done, and then lets the built-in function compute the result on the
// box's other connection (the writer, idle while a query runs), so
// results and errors are SQLite's own. Their results are bounded by
// their arguments (replace's by len(X)/len(Y)·len(Z), charged too), and
// one over the value limit is refused when the query connection takes
// it. A query over budget stops at the call that would spend it, with
// the budget's message, before doing the work. The NOCASE collation is
// replaced too, by Go code that charges the budget (see nocase). The
// writer runs only these fixed SELECTs of one function on bound values:
// it neither sees the query's SQL nor writes.
//
// Functions no suite uses whose work is as hard to bound (REGEXP, the
// decimal extension, randomblob) are not metered but refused: they are
// on the authorizer's deniedFunctions (sqlbox.go), and the decimal
// collation is removed from the query connection.
//
// The charges count comparisons, 16 to a step: one step of the virtual
// machine costs about 60 ns here, one byte comparison of LIKE's matcher
// about 3 ns. Work over the memcmp loops of instr and replace is counted
// a 64th of that (they compare whole needles with memcmp).
const workPerStep = 16

// metered are the built-in functions the query connection meters, with
// the upper bound of the byte comparisons of one call.
var metered = []struct {
	name string
	args int
	cost func(a []sqlite3.Value) int64
}{
	// like(P, S) is S LIKE P: the matcher tries each position of S
	// against the pattern's longest run without a wildcard.
	{"like", 2, func(a []sqlite3.Value) int64 { return (size(a[1]) + 1) * (literalRun(a[0], '%') + 1) }},
	// With ESCAPE any byte may be escaped: count the whole pattern.
	{"like", 3, func(a []sqlite3.Value) int64 { return (size(a[1]) + 1) * (size(a[0]) + 1) }},
	{"glob", 2, func(a []sqlite3.Value) int64 { return (size(a[1]) + 1) * (literalRun(a[0], '*') + 1) }},
	{"instr", 2, func(a []sqlite3.Value) int64 { return (size(a[0]) + 1) * (2 + size(a[1])/64) }},
	// replace(X, Y, Z) also writes its result: at most len(X) copies of
	// Z, one per match of Y.
	{"replace", 3, func(a []sqlite3.Value) int64 {
		x, y, z := size(a[0]), size(a[1]), size(a[2])
		return (x+1)*(2+y/64) + x/max(y, 1)*z
	}},
	{"trim", 2, trimCost}, {"ltrim", 2, trimCost}, {"rtrim", 2, trimCost},
}

// nocase is SQLite's NOCASE collation (sqlite3StrNICmp over the shorter
// length, then the longer value last): ASCII letters compare without
// case, and the comparison stops at a NUL byte of a (a NUL in both at
// the same place leaves the lengths to decide). The query connection
// uses this copy, which charges a step per 128 bytes compared, so that a
// query of long NOCASE comparisons or sorts is stopped by its budget
// (SQLite's loop costs about 1 ns a byte).
func nocase(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		ca, cb := lower(a[i]), lower(b[i])
		if a[i] == 0 || ca != cb {
			if ca != cb {
				return int(ca) - int(cb)
			}
			break // a NUL in both: the lengths decide, as in SQLite
		}
	}
	return len(a) - len(b)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func trimCost(a []sqlite3.Value) int64 { return (size(a[0]) + 1) * (size(a[1]) + 1) }

// size is the length in bytes of v as text (0 for NULL).
func size(v sqlite3.Value) int64 {
	if v.Type() == sqlite3.NULL {
		return 0
	}
	return int64(len(v.RawText()))
}

// literalRun is the longest run of bytes of pattern v between two
// wildcards w.
func literalRun(v sqlite3.Value, w byte) int64 {
	var run, most int64
	for _, c := range v.RawText() {
		if c == w {
			run = 0
			continue
		}
		run++
		most = max(most, run)
	}
	return most
}

// meter replaces the metered functions on the query connection r with
// versions that charge the query's budget (the connection's interrupt
// context, see stepBudget.charge) and compute the result with the
// built-in function on the connection w.
func meter(r, w *sqlite3.Conn) error {
	// w evaluates patterns the query wrote: the same pattern limit.
	w.Limit(sqlite3.LIMIT_LIKE_PATTERN_LENGTH, MaxLikePattern)
	for _, f := range metered {
		d := &delegate{conn: w, sql: fmt.Sprintf("SELECT %s(%s)", f.name, params(f.args))}
		cost := f.cost
		err := r.CreateFunction(f.name, f.args, sqlite3.DETERMINISTIC|sqlite3.INNOCUOUS, func(ctx sqlite3.Context, arg ...sqlite3.Value) {
			// Reading a value as text to measure it can change the type
			// it reports (a blob read as text reads as text after).
			types := make([]sqlite3.Datatype, len(arg))
			for i, a := range arg {
				types[i] = a.Type()
			}
			if b, ok := ctx.Conn().GetInterrupt().(*stepBudget); ok && !b.charge((cost(arg)+workPerStep-1)/workPerStep) {
				ctx.ResultError(errOverBudget)
				return
			}
			d.call(ctx, arg, types)
		})
		if err != nil {
			return err
		}
	}
	if err := r.CreateCollation("NOCASE", func(a, b []byte) int {
		if budget, ok := r.GetInterrupt().(*stepBudget); ok {
			budget.charge(int64(min(len(a), len(b)) / 128))
		}
		return nocase(a, b)
	}); err != nil {
		return err
	}
	// The decimal extension's collation parses both texts as decimals,
	// whose digits an exponent multiplies ('1e999999' is a million):
	// removed, so that COLLATE decimal is refused when the query is
	// prepared (no such collation sequence).
	return r.CreateCollation("decimal", nil)
}

// params is "?1, ?2, …, ?n".
func params(n int) string {
	s := ""
	for i := 1; i <= n; i++ {
		if i > 1 {
			s += ", "
		}
		s += fmt.Sprintf("?%d", i)
	}
	return s
}

// delegate runs one built-in function on another connection.
type delegate struct {
	conn *sqlite3.Conn
	sql  string
	stmt *sqlite3.Stmt // prepared on first use; finalized with conn
}

// call computes the function of args (of the given types) on d.conn and
// sets it as the result of ctx. Values cannot cross connections (each has
// its own memory), so the arguments and the result are copied by type.
func (d *delegate) call(ctx sqlite3.Context, args []sqlite3.Value, types []sqlite3.Datatype) {
	if d.stmt == nil {
		stmt, _, err := d.conn.Prepare(d.sql)
		if err != nil {
			ctx.ResultError(err)
			return
		}
		d.stmt = stmt
	}
	s := d.stmt
	defer s.Reset()
	defer s.ClearBindings()
	for i, a := range args {
		var err error
		switch types[i] {
		case sqlite3.INTEGER:
			err = s.BindInt64(i+1, a.Int64())
		case sqlite3.FLOAT:
			err = s.BindFloat(i+1, a.Float())
		case sqlite3.TEXT:
			err = s.BindRawText(i+1, a.RawText())
		case sqlite3.BLOB:
			err = s.BindBlob(i+1, a.RawBlob())
		default:
			err = s.BindNull(i + 1)
		}
		if err != nil {
			ctx.ResultError(err)
			return
		}
	}
	if !s.Step() {
		ctx.ResultError(s.Err())
		return
	}
	switch s.ColumnType(0) {
	case sqlite3.INTEGER:
		ctx.ResultInt64(s.ColumnInt64(0))
	case sqlite3.FLOAT:
		ctx.ResultFloat(s.ColumnFloat(0))
	case sqlite3.TEXT:
		ctx.ResultRawText(s.ColumnRawText(0))
	case sqlite3.BLOB:
		ctx.ResultBlob(s.ColumnRawBlob(0))
	default:
		ctx.ResultNull()
	}
}
