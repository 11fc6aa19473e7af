package sqlbox

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/serdes"
	"github.com/ncruces/go-sqlite3/vfs/memdb"
)

// Limits on one query.
const (
	MaxRows      = 500       // rows returned; more set Result.Truncated
	MaxSQLLength = 20000     // bytes of SQL accepted
	MaxValueLen  = 2048      // largest string, blob or row a query may build or read (SQLITE_LIMIT_LENGTH; see budget.go), unless the database's rows need more (see Template.ValueLen)
	MaxCellChars = 2000      // bytes of a text or blob value in results; longer ones are cut (see also MaxRowBytes)
	MaxHeap      = 128 << 20 // bytes SQLite may allocate on the query connection
)

// The work a query may do is bounded by MaxSteps (see budget.go).

// Template holds the pristine database image that sessions copy, and the
// limits of their queries.
type Template struct {
	image    []byte
	steps    int64 // 0: MaxSteps
	valueLen int   // see ValueLen
}

// rowFactor is how many of the database's widest rows one value or row a
// query builds may hold (a join of a few rows, sorted).
const rowFactor = 4

// ValueLen is the largest string, blob or row (SQLITE_LIMIT_LENGTH) a
// query on t's database may build or read: MaxValueLen, or rowFactor
// times the database's widest row if that is more, so that every row can
// be read, sorted and joined. It bounds the work of one step (see
// budget.go), so a database of wide rows allows heavier steps.
func (t *Template) ValueLen() int { return t.valueLen }

// SetSteps sets the step budget of every query on the boxes opened from
// t (MaxSteps until set); n must pass CheckSteps. Call it before Open.
func (t *Template) SetSteps(n int64) error {
	if err := CheckSteps(n); err != nil {
		return err
	}
	t.steps = n
	return nil
}

// budget is the step budget of a query on a box opened from t.
func (t *Template) budget() int64 {
	if t.steps > 0 {
		return t.steps
	}
	return maxSteps
}

// NewTemplate runs script into an empty database and keeps the result.
func NewTemplate(script string) (*Template, error) {
	c, err := sqlite3.Open(":memory:")
	if err != nil {
		return nil, fmt.Errorf("sqlbox: opening template database: %w", err)
	}
	defer c.Close()
	if err := c.Exec(script); err != nil {
		return nil, fmt.Errorf("sqlbox: running database script: %w", err)
	}
	widest, err := widestRow(c)
	if err != nil {
		return nil, fmt.Errorf("sqlbox: measuring the database's rows: %w", err)
	}
	image, err := serdes.Serialize(c, "main")
	if err != nil {
		return nil, fmt.Errorf("sqlbox: serializing template: %w", err)
	}
	return &Template{image: image, valueLen: int(min(max(MaxValueLen, rowFactor*widest), maxLength))}, nil
}

// maxLength is SQLite's own bound on SQLITE_LIMIT_LENGTH.
const maxLength = 1_000_000_000

// widestRow returns the most bytes one row of any table of c's database
// takes in a record (what SQLITE_LIMIT_LENGTH bounds when a query sorts
// or materializes rows), about: each value as text, a float as its 8
// bytes (0.5 is 3 bytes of text), and a header byte per column.
func widestRow(c *sqlite3.Conn) (int64, error) {
	var tables []string
	if err := eachRow(c, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name", func(s *sqlite3.Stmt) {
		tables = append(tables, s.ColumnText(0))
	}); err != nil {
		return 0, err
	}
	var widest int64
	for _, table := range tables {
		var cols []string
		if err := eachRow(c, "SELECT name FROM pragma_table_info("+quoteString(table)+")", func(s *sqlite3.Stmt) {
			col := quoteIdent(s.ColumnText(0))
			cols = append(cols, "CASE typeof("+col+") WHEN 'real' THEN 9 ELSE coalesce(length(CAST("+col+" AS BLOB)), 0) + 1 END")
		}); err != nil {
			return 0, err
		}
		if len(cols) == 0 {
			continue
		}
		if err := eachRow(c, "SELECT coalesce(max("+sumTree(cols)+"), 0) FROM "+quoteIdent(table), func(s *sqlite3.Stmt) {
			widest = max(widest, s.ColumnInt64(0))
		}); err != nil {
			return 0, err
		}
	}
	return widest, nil
}

// sumTree adds terms as a balanced tree, so that a table of many columns
// stays within SQLite's expression depth.
func sumTree(terms []string) string {
	if len(terms) == 1 {
		return terms[0]
	}
	return "(" + sumTree(terms[:len(terms)/2]) + " + " + sumTree(terms[len(terms)/2:]) + ")"
}

// eachRow runs query on c and calls fn on each row.
func eachRow(c *sqlite3.Conn, query string, fn func(*sqlite3.Stmt)) error {
	stmt, _, err := c.Prepare(query)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for stmt.Step() {
		fn(stmt)
	}
	return stmt.Err()
}

// quoteString quotes an SQL string literal.
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

var boxSeq atomic.Int64

// Box is one session's database. Its methods are safe for concurrent
// use; they are serialized. No method panics: a panic in the SQL layer is
// recovered, the box is rebuilt (see Fault), and the method returns an
// error.
type Box struct {
	mu     sync.Mutex
	tmpl   *Template
	conns  conns
	closed bool
}

// conns are one database copy and its two connections.
type conns struct {
	name   string // memdb name of the copy
	writer *sqlite3.Conn
	reader *sqlite3.Conn
}

// Open creates a private copy of the template database.
func (t *Template) Open() (*Box, error) {
	c, err := openImage(t.image, t.valueLen)
	if err != nil {
		return nil, err
	}
	return &Box{tmpl: t, conns: c}, nil
}

// uri names a memdb database for sqlite3.Open.
func uri(name string) string { return "file:/" + name + "?vfs=memdb" }

// openImage copies image into a new memdb database and opens the writer
// and the guarded reader on it, whose values may be valueLen bytes.
func openImage(image []byte, valueLen int) (c conns, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sqlbox: opening session database panicked: %v", r)
		}
		if err != nil {
			discard(c)
			c = conns{}
		}
	}()
	c.name = fmt.Sprintf("toolward-session-%d", boxSeq.Add(1))
	memdb.Create(c.name, append([]byte(nil), image...))
	if c.writer, err = sqlite3.Open(uri(c.name)); err != nil {
		return c, fmt.Errorf("sqlbox: opening session database: %w", err)
	}
	if c.reader, err = sqlite3.OpenFlags(uri(c.name), sqlite3.OPEN_READONLY|sqlite3.OPEN_URI); err != nil {
		return c, fmt.Errorf("sqlbox: opening session database: %w", err)
	}
	if err := guard(c.reader, c.writer, valueLen); err != nil {
		return c, fmt.Errorf("sqlbox: guarding query connection: %w", err)
	}
	return c, nil
}

// guard locks down the connection c that runs model-written SQL, whose
// values may be valueLen bytes; w is the connection its metered functions
// delegate to (see meter).
func guard(c, w *sqlite3.Conn, valueLen int) error {
	// Each connection runs in its own WebAssembly instance, so the heap
	// limit bounds what one query can allocate (sorts, temp b-trees, which
	// are kept in memory rather than in temporary files).
	if err := c.Exec(fmt.Sprintf("PRAGMA hard_heap_limit=%d; PRAGMA temp_store=MEMORY; PRAGMA query_only=ON", MaxHeap)); err != nil {
		return err
	}
	for _, op := range []sqlite3.DBConfig{sqlite3.DBCONFIG_ENABLE_LOAD_EXTENSION, sqlite3.DBCONFIG_ENABLE_TRIGGER} {
		if _, err := c.Config(op, false); err != nil {
			return err
		}
	}
	if _, err := c.Config(sqlite3.DBCONFIG_DEFENSIVE, true); err != nil {
		return err
	}
	setLimits(c, valueLen)
	if err := meter(c, w); err != nil {
		return err
	}
	return c.SetAuthorizer(authorize)
}

// readPragmas are the schema-introspection pragmas a query may use as
// table-valued functions (SELECT * FROM pragma_table_info('employees')).
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "table_list": true,
}

// deniedFunctions are refused when a query is prepared ("not authorized
// to use function"): the first could reach outside the database if the
// build had them; the others no suite needs, and their work follows what
// their arguments expand to rather than their length, which the step
// budget cannot see (REGEXP's X{m,n} copies X, the decimal functions
// expand '1e999999' to a million digits, decimal_pow2(20000) takes 5 s
// in 19 steps, randomblob allocates the length it is given).
var deniedFunctions = map[string]bool{
	"load_extension": true, "readfile": true, "writefile": true, "edit": true, "fts3_tokenizer": true,
	"regexp": true, "regexpi": true, "randomblob": true,
	"decimal": true, "decimal_exp": true, "decimal_add": true, "decimal_sub": true, "decimal_mul": true,
	"decimal_cmp": true, "decimal_pow2": true, "decimal_sum": true,
}

func authorize(action sqlite3.AuthorizerActionCode, name3rd, name4th, schema, inner string) sqlite3.AuthorizerReturnCode {
	switch action {
	case sqlite3.AUTH_SELECT, sqlite3.AUTH_READ, sqlite3.AUTH_RECURSIVE:
		return sqlite3.AUTH_OK
	case sqlite3.AUTH_FUNCTION:
		if deniedFunctions[strings.ToLower(name4th)] {
			return sqlite3.AUTH_DENY
		}
		return sqlite3.AUTH_OK
	case sqlite3.AUTH_PRAGMA:
		// Only reached through table-valued pragma functions: Query
		// refuses PRAGMA statements before running anything.
		if readPragmas[strings.ToLower(name3rd)] {
			return sqlite3.AUTH_OK
		}
	}
	return sqlite3.AUTH_DENY
}

// Close releases the connections and the database copy. It never
// panics; closing a closed Box does nothing.
func (b *Box) Close() (err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	c := b.conns
	b.conns = conns{}
	defer memdb.Delete(c.name)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sqlbox: closing the session database panicked: %v", r)
		}
	}()
	if faultHook != nil {
		faultHook("close")
	}
	return errors.Join(closeQuietly(c.reader), closeQuietly(c.writer))
}

// QueryError is a query the box refused or SQLite rejected, or one that
// made the SQL layer fail (Err is then the *Fault); its message is meant
// for the model.
type QueryError struct {
	Msg string
	Err error
}

func (e *QueryError) Error() string { return e.Msg }

// Unwrap returns the underlying *Fault, if any.
func (e *QueryError) Unwrap() error { return e.Err }

func queryErr(format string, args ...any) error {
	return &QueryError{Msg: fmt.Sprintf(format, args...)}
}

// Query runs one read-only statement. Errors the model caused (bad SQL,
// a write attempt, more than its step budget, a query too complex or too
// memory-hungry for the engine) are *QueryError. If the query makes the
// SQL layer panic, the box is rebuilt (see Fault) and the error is a
// *QueryError wrapping the *Fault; the next query works on the rebuilt
// box. A query still running at Backstop, or whose ctx ends, gives an
// error that is not a *QueryError: the server's failure, not the model's.
func (b *Box) Query(ctx context.Context, query string) (*Result, error) {
	if len(query) > MaxSQLLength {
		return nil, queryErr("query too long: %d bytes (limit %d)", len(query), MaxSQLLength)
	}
	if err := checkShape(query); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errClosed
	}
	var res *Result
	err := b.guarded("query", func() (err error) {
		res, err = query1(ctx, b.conns.reader, query, b.tmpl.budget(), backstop)
		return err
	})
	if f := (*Fault)(nil); errors.As(err, &f) {
		return nil, faultError(f)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Table returns every row of table (at most MaxRows; more set
// Result.Truncated), in rowid order, for the server's own state tools.
// It reads through the guarded connection like Query, but only ctx bounds
// it: MaxSteps and Backstop are there to stop runaway SQL a model wrote,
// and this read is the server's own, small and fixed.
func (b *Box) Table(ctx context.Context, table string) (*Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errClosed
	}
	query := "SELECT * FROM " + quoteIdent(table) + " ORDER BY rowid"
	var res *Result
	err := b.guarded("table", func() (err error) {
		res, err = query1(ctx, b.conns.reader, query, 0, 0)
		return err
	})
	if f := (*Fault)(nil); errors.As(err, &f) {
		return nil, faultError(f)
	}
	return res, err
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// faultError explains to the model a query that made the SQL layer panic.
func faultError(f *Fault) error {
	if f.OutOfMemory() {
		// SQLite also reports a program longer than MaxVDBEOps as an
		// allocation failure.
		return &QueryError{Msg: fmt.Sprintf("query needs more memory than allowed (%d MiB, or %d compiled instructions): filter, aggregate or add a LIMIT before sorting or grouping so many rows; %s", MaxHeap>>20, MaxVDBEOps, f.restoredText()), Err: f}
	}
	return &QueryError{Msg: fmt.Sprintf("the database engine failed on this query (%v), probably because it is too complex; %s. Write a simpler query (limits: %d SELECTs, nesting %d, expression depth %d)", f.Value, f.restoredText(), MaxSelects, MaxNesting, MaxExprDepth), Err: f}
}

// query1 runs one read-only statement on the guarded connection r, stopped
// after limit virtual-machine steps (0: no limit) and wall (0: only when
// ctx ends); see stepBudget.stopped for the errors each gives.
func query1(ctx context.Context, r *sqlite3.Conn, query string, limit int64, wall time.Duration) (*Result, error) {
	if wall > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, wall, errBackstop)
		defer cancel()
	}
	budget, release := newBudget(ctx, limit)
	defer release()
	old := r.SetInterrupt(budget)
	defer r.SetInterrupt(old)
	fail := func(err error) error {
		if stop := budget.stopped(ctx, wall); stop != nil {
			return stop
		}
		return explain(err, r.Limit(sqlite3.LIMIT_LENGTH, -1))
	}

	// Prepare the statement as written: this is where the authorizer
	// refuses writes, and where a second statement shows up as a tail.
	stmt, tail, err := r.Prepare(query)
	if err != nil {
		return nil, fail(err)
	}
	if stmt == nil {
		return nil, queryErr("empty query: write one SELECT statement")
	}
	body := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(query[:len(query)-len(tail)]), ";"))
	if tail != "" {
		rest, _, err := r.Prepare(tail)
		if rest != nil {
			rest.Close()
		}
		if rest != nil || err != nil {
			stmt.Close()
			return nil, queryErr("only one statement is allowed per query; remove everything after the first ';'")
		}
	}
	readOnly := stmt.ReadOnly()
	names := columnNames(stmt)
	stmt.Close()
	if kw := firstKeyword(body); kw != "SELECT" && kw != "WITH" {
		return nil, queryErr("only SELECT queries (or WITH … SELECT) are allowed, not %s", kw)
	}
	if !readOnly || len(names) == 0 {
		return nil, queryErr("only read-only SELECT queries are allowed")
	}

	// The row cap is part of the query SQLite runs, so it stops early. The
	// body goes on its own lines so a trailing -- comment cannot swallow
	// the wrapper.
	stmt, _, err = r.Prepare(fmt.Sprintf("SELECT * FROM (\n%s\n) LIMIT %d", body, MaxRows+1))
	if err != nil {
		return nil, fail(err)
	}
	defer stmt.Close()
	if stmt.ColumnCount() != len(names) {
		names = columnNames(stmt) // not expected; the wrapper's names are still correct
	}
	rows := newReader(uniqueNames(names))
	budget.watch(stmt)
	if err := rows.read(stmt); err != nil {
		return nil, fail(err)
	}
	rows.res.Steps = budget.steps()
	return rows.res, nil
}

// columnNames returns the result column names of stmt as SQLite declares
// them. They are read from the query as written: the row cap wrapper's
// SELECT * would give repeated names random suffixes.
func columnNames(stmt *sqlite3.Stmt) []string {
	names := make([]string, stmt.ColumnCount())
	for i := range names {
		names[i] = stmt.ColumnName(i)
	}
	return names
}

// Non-finite floats have no JSON encoding; Query reports them as these
// strings so that every Result marshals. SQLite itself never returns NaN
// (it turns NaN into NULL), but an overflowing literal or expression
// (SELECT 1e999) is ±Inf.
const (
	PosInf = "Infinity"
	NegInf = "-Infinity"
	NaN    = "NaN"
)

// finite returns v, or its name if v is not a finite number.
func finite(v float64) any {
	switch {
	case math.IsInf(v, 1):
		return PosInf
	case math.IsInf(v, -1):
		return NegInf
	case math.IsNaN(v):
		return NaN
	}
	return v
}

// explain turns a SQLite error into a message for the model; valueLen is
// the query connection's SQLITE_LIMIT_LENGTH.
func explain(err error, valueLen int) error {
	if errors.Is(err, sqlite3.AUTH) {
		return queryErr("query_database is read-only: only SELECT queries that read the tables are allowed (%v)", err)
	}
	if errors.Is(err, sqlite3.READONLY) {
		return queryErr("query_database is read-only (%v)", err)
	}
	if errors.Is(err, sqlite3.NOMEM) {
		return queryErr("query needs more memory than allowed (%d MiB)", MaxHeap>>20)
	}
	if errors.Is(err, sqlite3.TOOBIG) {
		return queryErr("query builds a value that is too large (limit %d bytes for a string, blob or row): select fewer or shorter columns, or cut long values with substr()", valueLen)
	}
	var se *sqlite3.Error
	if errors.As(err, &se) {
		msg := strings.TrimPrefix(se.Error(), "sqlite3: ")
		if isLimitError(msg) {
			return queryErr("%s", limitMessage(msg))
		}
		return queryErr("SQL error: %s", msg)
	}
	return queryErr("SQL error: %v", err)
}

// limitErrors are fragments of the messages SQLite gives when a query
// exceeds one of the limits set by setLimits.
var limitErrors = []string{
	"Expression tree is too large", "too many terms in compound SELECT", "Recursion limit",
	"too many arguments on function", "LIKE or GLOB pattern too complex", "too many columns",
	"too many SQL variables", "too many FROM clause terms", "nested too deep", "parser stack overflow",
	"too many opcodes",
}

func isLimitError(msg string) bool {
	for _, f := range limitErrors {
		if strings.Contains(msg, f) {
			return true
		}
	}
	return false
}

// firstKeyword returns the first word of sql in upper case, skipping
// comments and opening parentheses.
func firstKeyword(sql string) string {
	s := sql
	for {
		s = strings.TrimLeft(s, " \t\r\n(")
		switch {
		case strings.HasPrefix(s, "--"):
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = s[i+1:]
				continue
			}
			return ""
		case strings.HasPrefix(s, "/*"):
			if i := strings.Index(s, "*/"); i >= 0 {
				s = s[i+2:]
				continue
			}
			return ""
		}
		break
	}
	end := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_')
	})
	if end < 0 {
		end = len(s)
	}
	return strings.ToUpper(s[:end])
}

// errClosed answers any use of a Box after Close.
var errClosed = errors.New("sqlbox: database closed")

// Exec runs a statement with arguments on the privileged connection and
// returns the number of rows changed. It is for the server's own tools,
// never for model-written SQL.
func (b *Box) Exec(sql string, args ...any) (n int64, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errClosed
	}
	err = b.guarded("exec", func() (err error) {
		n, err = b.execLocked(sql, args...)
		return err
	})
	return n, err
}

// execLocked runs one statement on the privileged connection; b.mu is held.
func (b *Box) execLocked(sql string, args ...any) (int64, error) {
	w := b.conns.writer
	stmt, _, err := w.Prepare(sql)
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	if err := bind(stmt, args); err != nil {
		return 0, err
	}
	if err := stmt.Exec(); err != nil {
		return 0, err
	}
	return w.Changes(), nil
}

// QueryRow runs a query with arguments on the privileged connection and
// returns its first row (int64, float64, string, []byte or nil per
// column), or nil if there is none.
func (b *Box) QueryRow(sql string, args ...any) (row []any, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errClosed
	}
	err = b.guarded("query row", func() error {
		stmt, _, err := b.conns.writer.Prepare(sql)
		if err != nil {
			return err
		}
		defer stmt.Close()
		if err := bind(stmt, args); err != nil {
			return err
		}
		if !stmt.Step() {
			return stmt.Err()
		}
		row = make([]any, stmt.ColumnCount())
		return stmt.Columns(row...)
	})
	if err != nil {
		return nil, err
	}
	return row, nil
}

// Tx runs fn inside a transaction on the privileged connection: all of
// fn's statements apply, or none do.
func (b *Box) Tx(fn func(exec func(sql string, args ...any) (int64, error)) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errClosed
	}
	return b.guarded("tx", func() error {
		w := b.conns.writer
		if err := w.Exec("BEGIN IMMEDIATE"); err != nil {
			return err
		}
		if err := fn(b.execLocked); err != nil {
			w.Exec("ROLLBACK")
			return err
		}
		return w.Exec("COMMIT")
	})
}

func bind(stmt *sqlite3.Stmt, args []any) error {
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case int64:
			err = stmt.BindInt64(i+1, v)
		case int:
			err = stmt.BindInt64(i+1, int64(v))
		case float64:
			err = stmt.BindFloat(i+1, v)
		case string:
			err = stmt.BindText(i+1, v)
		case nil:
			err = stmt.BindNull(i + 1)
		default:
			err = fmt.Errorf("sqlbox: cannot bind %T", a)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
