package sqlbox

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ncruces/go-sqlite3"
)

// Work of the functions whose cost is not bounded by a step.
//
// The value limit (Template.ValueLen) bounds what one step of SQLite's
// own code can do to a value (copy, compare, convert it). A few built-in
// functions do more: their
// work grows with the product of two arguments' lengths (a LIKE pattern
// scanned from every position of the string, instr and replace comparing
// the needle at every position, trim testing every character against
// every other, a REGEXP automaton whose X{m,n} copies X), or follows not
// a value's length but the digits the decimal extension expands it to (an
// exponent adds that many zeros, a float is computed by powers of two).
// The query connection replaces each with a metered
// version: it charges the budget an upper bound of that work, in steps,
// before any of it is done, and then lets the built-in function compute
// the result on the box's other connection (the writer, idle while a
// query runs), so results and errors are SQLite's own. Their results are
// bounded by their arguments (replace's by len(X)/len(Y)·len(Z), charged
// too), and one over the value limit is refused when the query
// connection takes it. A query over budget stops at the call that would
// spend it, with the budget's message, before doing the work. randomblob
// and the NOCASE collation are replaced too, by Go code that charges the
// budget (see randomblob and nocase), and the decimal collation by a
// charged decimal_cmp on the writer. The writer runs only these fixed
// SELECTs of one function on bound values: it neither sees the query's
// SQL nor writes.
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
	// regexp(P, S) is S REGEXP P, regexpi its case-insensitive form: an
	// automaton of up to reStates(P) states run over S.
	{"regexp", 2, regexpCost}, {"regexpi", 2, regexpCost},
	{"instr", 2, func(a []sqlite3.Value) int64 { return (size(a[0]) + 1) * (2 + size(a[1])/64) }},
	// replace(X, Y, Z) also writes its result: at most len(X) copies of
	// Z, one per match of Y.
	{"replace", 3, func(a []sqlite3.Value) int64 {
		x, y, z := size(a[0]), size(a[1]), size(a[2])
		return (x+1)*(2+y/64) + x/max(y, 1)*z
	}},
	{"trim", 2, trimCost}, {"ltrim", 2, trimCost}, {"rtrim", 2, trimCost},
	// The decimal extension works on the digits a value expands to
	// (see decimalSize), not on its length: '1e999999' is a million
	// digits. decimal_mul is schoolbook multiplication, about 4 ns a
	// digit pair; the others are linear in the digits, and decimal and
	// decimal_exp of a float also compute a power of two.
	{"decimal_mul", 2, func(a []sqlite3.Value) int64 {
		x, y := decimalSize(a[0], true), decimalSize(a[1], true)
		return 2*(x.digits+1)*(y.digits+1) + 4*(x.digits+y.digits+2)
	}},
	{"decimal_add", 2, decimalPairCost}, {"decimal_sub", 2, decimalPairCost}, {"decimal_cmp", 2, decimalPairCost},
	{"decimal", 1, decimalCost}, {"decimal", 2, decimalCost}, {"decimal_exp", 1, decimalCost}, {"decimal_exp", 2, decimalCost},
}

// regexpCost bounds the work of regexp(P, S).
func regexpCost(a []sqlite3.Value) int64 { return (size(a[1]) + 1) * (reStates(a[0]) + 1) }

// reStates bounds the states of the automaton regexp compiles pattern v
// to: one per byte, except that X{m,n} copies X up to max(m, n) times,
// so each repetition multiplies the bound (saturating at 2^40).
func reStates(v sqlite3.Value) int64 {
	p := v.RawText()
	states := int64(len(p))
	for i := 0; i < len(p); i++ {
		if p[i] != '{' {
			continue
		}
		var n, most int64
		for i++; i < len(p) && p[i] != '}'; i++ {
			switch c := p[i]; {
			case '0' <= c && c <= '9':
				n = min(n*10+int64(c-'0'), 1<<20)
			case c == ',':
				most, n = max(most, n), 0
			}
		}
		states = min(states*max(most, n, 1), 1<<40)
	}
	return states
}

// decimalCost bounds the work of decimal(X[, N]) and decimal_exp(X[, N]).
func decimalCost(a []sqlite3.Value) int64 {
	x := decimalSize(a[0], false)
	return 4*(x.digits+1) + pow2Cost(x.pow2)
}

// decimalPairCost bounds the work of decimal_add, decimal_sub and
// decimal_cmp (X, Y), which align both to the longer.
func decimalPairCost(a []sqlite3.Value) int64 {
	x, y := decimalSize(a[0], true), decimalSize(a[1], true)
	return 4 * (x.digits + y.digits + 2)
}

// pow2Cost bounds the digit pairs the decimal extension multiplies to
// compute 2^±n by squaring (8n², 38 ms for n = 1074).
func pow2Cost(n int64) int64 {
	if n == 0 {
		return 0
	}
	return 8 * (n + 1) * (n + 1)
}

// decimalDigits is what the decimal extension makes of a value.
type decimalDigits struct {
	digits int64 // digits it holds, at most
	pow2   int64 // |e| of the 2^e it computes to expand a float, or 0
}

// decimalSize bounds what the decimal extension's decimal_new makes of v:
// text (and, with textOnly, any value read as text) is parsed as digits
// with an exponent that appends or prepends that many zeros (up to about
// 10^7); a float, or an 8-byte blob read as one, is expanded exactly as
// m·2^e.
func decimalSize(v sqlite3.Value, textOnly bool) decimalDigits {
	switch t := v.Type(); {
	case t == sqlite3.NULL:
		return decimalDigits{}
	case !textOnly && t == sqlite3.FLOAT:
		return floatDigits(v.Float())
	case !textOnly && t == sqlite3.BLOB:
		b := v.RawBlob()
		if len(b) != 8 {
			return decimalDigits{}
		}
		return floatDigits(math.Float64frombits(binary.BigEndian.Uint64(b)))
	}
	return decimalDigits{digits: textDigits(v.RawText())}
}

// textDigits bounds the digits decimalNewFromText makes of s: its
// length, and the zeros its exponent adds.
func textDigits(s []byte) int64 {
	i := bytes.IndexAny(s, "eE")
	if i < 0 {
		return int64(len(s))
	}
	// As decimalNewFromText reads the exponent: its digits, skipping
	// other bytes, until it reaches a million.
	j := i + 1
	if j < len(s) && (s[j] == '-' || s[j] == '+') {
		j++
	}
	var exp int64
	for ; j < len(s) && exp < 1_000_000; j++ {
		if c := s[j]; '0' <= c && c <= '9' {
			exp = exp*10 + int64(c-'0')
		}
	}
	return int64(len(s)) + exp
}

// floatDigits bounds the expansion of r as decimalFromDouble does it:
// r = m·2^e with m odd, e in -1074..971.
func floatDigits(r float64) decimalDigits {
	bits := math.Float64bits(math.Abs(r))
	e, m := int64(bits>>52), bits&(1<<52-1)
	if e == 0 {
		m <<= 1
	} else {
		m |= 1 << 52
	}
	for e < 1075 && m > 0 && m&1 == 0 {
		m >>= 1
		e++
	}
	if m == 0 {
		e = 1075
	}
	e -= 1075
	if e > 971 { // NaN or infinity
		return decimalDigits{}
	}
	e = max(e, -e)
	return decimalDigits{digits: 20 + e, pow2: e}
}

// randomblob(N) is computed here rather than delegated: its argument is a
// length the model chose, which the writer (without the query's value limit) would
// allocate, and SQLite's generator costs about 4 ns a byte, Go's a
// tenth of that. It is charged a step for every 64 bytes.
func randomblob(ctx sqlite3.Context, arg ...sqlite3.Value) {
	n := max(arg[0].Int64(), 1)
	if n > int64(ctx.Conn().Limit(sqlite3.LIMIT_LENGTH, -1)) {
		ctx.ResultError(sqlite3.TOOBIG)
		return
	}
	if b, ok := ctx.Conn().GetInterrupt().(*stepBudget); ok && !b.charge(n/64) {
		ctx.ResultError(errOverBudget)
		return
	}
	blob := make([]byte, n)
	rand.Read(blob)
	ctx.ResultBlob(blob)
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

// unmetered are the functions whose work no argument length bounds, and
// which the query connection answers with an error: decimal_pow2(N)
// builds 2^N digit by digit (N = 20000 takes 5.5 s in 19 steps), and the
// aggregate decimal_sum adds decimals of up to 10^7 digits each
// ('1e999999') in one step a row, inside SQLite where no charge can
// reach it.
var unmetered = []struct {
	name string
	args int
}{{"decimal_pow2", 1}, {"decimal_sum", 1}}

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
	// The decimal extension's collation parses both texts as decimals
	// (see decimalSize); it is charged like decimal_cmp and computed by
	// decimal_cmp on w, which fails where the collation's parse fails
	// (the collation then calls them equal).
	cmp := &delegate{conn: w, sql: "SELECT decimal_cmp(?1, ?2)"}
	if err := r.CreateCollation("decimal", func(a, b []byte) int {
		if budget, ok := r.GetInterrupt().(*stepBudget); ok && !budget.charge((4*(textDigits(a)+textDigits(b)+2)+workPerStep-1)/workPerStep) {
			return 0 // the query is stopped at the next poll
		}
		return cmp.compare(a, b)
	}); err != nil {
		return err
	}
	// Not deterministic: each call gives new bytes.
	if err := r.CreateFunction("randomblob", 1, sqlite3.INNOCUOUS, randomblob); err != nil {
		return err
	}
	for _, f := range unmetered {
		err := r.CreateFunction(f.name, f.args, sqlite3.DETERMINISTIC|sqlite3.INNOCUOUS, func(ctx sqlite3.Context, arg ...sqlite3.Value) {
			ctx.ResultError(fmt.Errorf("%s() is not available in query_database: its work has no bound", f.name))
		})
		if err != nil {
			return err
		}
	}
	return nil
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

// compare runs d.sql, a comparison of two texts, on a and b; 0 if it
// fails.
func (d *delegate) compare(a, b []byte) int {
	if d.stmt == nil {
		stmt, _, err := d.conn.Prepare(d.sql)
		if err != nil {
			return 0
		}
		d.stmt = stmt
	}
	s := d.stmt
	defer s.Reset()
	defer s.ClearBindings()
	if s.BindRawText(1, a) != nil || s.BindRawText(2, b) != nil || !s.Step() {
		return 0
	}
	return s.ColumnInt(0)
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
