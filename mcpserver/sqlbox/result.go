package sqlbox

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ncruces/go-sqlite3"
)

// Limits on the size of one query's result. They are enforced while the
// rows are read, so a query that would produce gigabytes (500 rows of 200
// columns of 2,000 characters) never has more than one row beyond the
// budget in memory.
const (
	// MaxResultBytes bounds the JSON encoding of a Result (columns, rows
	// and the rest, as json.Marshal writes it): the first row that would
	// take it over is not added, and the result is Truncated.
	MaxResultBytes = 1 << 20
	// MaxRowBytes bounds the text and blob bytes of one row: in a row of
	// more than MaxRowBytes/MaxCellChars (32) columns each value is cut
	// to MaxRowBytes/columns bytes instead of MaxCellChars, so that one
	// row always fits in MaxResultBytes.
	MaxRowBytes = 64 << 10
)

// noteReserve is the room MaxResultBytes keeps for row_count, truncated
// and note, which are only known once the rows are read.
const noteReserve = 1024

// Result is the outcome of a query.
type Result struct {
	// Columns are the result's column names, in order. A name repeated in
	// the query is made unique as name, name:2, name:3 … (see uniqueNames).
	Columns []string `json:"columns"`
	// Rows map each column name to an int64, a float64, a string (text,
	// "base64:…" for a blob, PosInf, NegInf or NaN) or nil.
	Rows     []map[string]any `json:"rows"`
	RowCount int              `json:"row_count"`
	// Truncated is set when the result is not all the query selects:
	// rows were left out (MaxRows, MaxResultBytes) or long values cut
	// (MaxCellChars, MaxRowBytes). Note then says which limit and how
	// to narrow the query.
	Truncated bool   `json:"truncated"`
	Note      string `json:"note,omitempty"`
	// Steps is how many virtual-machine steps the query ran, with the
	// work metered functions charged (see MaxSteps and work.go). It is the
	// server's measurement, not part of the result the model sees.
	Steps int64 `json:"-"`
}

// rowStop names the limit that ended reading the rows early.
type rowStop int

const (
	allRows rowStop = iota
	stopRows
	stopBytes
)

// reader collects a statement's rows into a Result within the limits.
type reader struct {
	res  *Result
	cell int // bytes of text or blob kept per value
	used int // encoded bytes of res so far, noteReserve included
	cut  int // values cut to cell bytes in the rows kept
	cuts int // values cut in the row being read
	stop rowStop
}

// newReader starts a Result with the given columns.
func newReader(columns []string) *reader {
	r := &reader{res: &Result{Columns: columns, Rows: []map[string]any{}}, cell: cellLimit(len(columns))}
	// {"columns":[…],"rows":[],"row_count":0,"truncated":false}
	r.used = len(`{"columns":[],"rows":[],"row_count":,"truncated":false}`) + noteReserve
	for i, c := range columns {
		r.used += jsonStringLen(c) + min(i, 1)
	}
	return r
}

// cellLimit is the number of bytes of text or blob kept per value in a
// row of n columns.
func cellLimit(n int) int {
	return min(MaxCellChars, MaxRowBytes/max(n, 1))
}

// read steps stmt to the end or to a limit.
func (r *reader) read(stmt *sqlite3.Stmt) error {
	for stmt.Step() {
		if len(r.res.Rows) == MaxRows {
			r.stop = stopRows
			break
		}
		row, size := r.row(stmt)
		if len(r.res.Rows) > 0 {
			size++ // the comma before it
		}
		if r.used+size > MaxResultBytes {
			r.stop = stopBytes
			break
		}
		r.used += size
		r.cut += r.cuts
		r.res.Rows = append(r.res.Rows, row)
	}
	if err := stmt.Err(); err != nil {
		return err
	}
	r.finish()
	return nil
}

// row reads the current row and returns it with the length of its JSON
// encoding.
func (r *reader) row(stmt *sqlite3.Stmt) (map[string]any, int) {
	row := make(map[string]any, len(r.res.Columns))
	r.cuts = 0
	size := 2 // {}
	for i, col := range r.res.Columns {
		v := r.value(stmt, i)
		row[col] = v
		size += jsonStringLen(col) + 1 + jsonValueLen(v) + min(i, 1)
	}
	return row, size
}

// value reads column i of the current row, cutting long text and blobs.
func (r *reader) value(s *sqlite3.Stmt, i int) any {
	switch s.ColumnType(i) {
	case sqlite3.INTEGER:
		return s.ColumnInt64(i)
	case sqlite3.FLOAT:
		return finite(s.ColumnFloat(i))
	case sqlite3.TEXT:
		// The raw text is SQLite's memory: only what is kept is copied.
		t := s.ColumnRawText(i)
		if len(t) > r.cell {
			r.cuts++
			return string(t[:runeStart(t, r.cell)]) + "…"
		}
		return string(t)
	case sqlite3.BLOB:
		b := s.ColumnRawBlob(i)
		if len(b) > r.cell {
			r.cuts++
			return fmt.Sprintf("<blob of %d bytes>", len(b))
		}
		return "base64:" + base64.StdEncoding.EncodeToString(b)
	}
	return nil
}

// runeStart returns the largest index ≤ n that does not split a UTF-8
// sequence of t.
func runeStart(t []byte, n int) int {
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(t[i]) {
			return i
		}
	}
	return n
}

// finish sets RowCount, Truncated and Note.
func (r *reader) finish() {
	res := r.res
	res.RowCount = len(res.Rows)
	var notes []string
	switch r.stop {
	case stopRows:
		notes = append(notes, fmt.Sprintf("only the first %d rows are shown (the limit is %d rows); add a WHERE or LIMIT, or aggregate", MaxRows, MaxRows))
	case stopBytes:
		notes = append(notes, fmt.Sprintf("only the first %d rows are shown: the result reached its size limit (%d KiB of JSON); select fewer columns, shorten long text with substr(), or add a WHERE or LIMIT", res.RowCount, MaxResultBytes>>10))
	}
	if r.cut > 0 {
		notes = append(notes, fmt.Sprintf("%d values longer than %d bytes were cut (text ends in …); select fewer columns or read a long value in parts with substr(column, start, length)", r.cut, r.cell))
	}
	res.Truncated = len(notes) > 0
	res.Note = strings.Join(notes, "; ")
}

// jsonValueLen is the length of v's encoding by json.Marshal, for the
// values value returns; for a float it may be a few bytes more.
func jsonValueLen(v any) int {
	var buf [32]byte
	switch v := v.(type) {
	case nil:
		return len("null")
	case int64:
		return len(strconv.AppendInt(buf[:0], v, 10))
	case float64:
		// encoding/json uses 'e' outside [1e-6, 1e21) and then shortens
		// the exponent (e-07 → e-7); 'e' here can only be longer.
		format := byte('f')
		if a := max(v, -v); a != 0 && (a < 1e-6 || a >= 1e21) {
			format = 'e'
		}
		return len(strconv.AppendFloat(buf[:0], v, format, -1, 64))
	case string:
		return jsonStringLen(v)
	}
	b, _ := json.Marshal(v)
	return len(b)
}

// jsonStringLen is the length of s's encoding by json.Marshal, quotes
// included: HTML characters, control characters, invalid UTF-8 and
// U+2028/U+2029 take six bytes, quote, backslash and \b \f \n \r \t two.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			n += asciiJSONLen(b)
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1, c == '\u2028', c == '\u2029':
			n += len(`\ufffd`)
		default:
			n += size
		}
		i += size
	}
	return n
}

// asciiJSONLen is the length of an ASCII byte inside a JSON string as
// json.Marshal writes it.
func asciiJSONLen(b byte) int {
	switch b {
	case '"', '\\', '\b', '\f', '\n', '\r', '\t':
		return 2
	case '<', '>', '&':
		return 6
	}
	if b < 0x20 {
		return 6
	}
	return 1
}

// uniqueNames makes the result column names of a query deterministic and
// unique. Where a query repeats a name (SELECT 1, 1, or a join's two id
// columns), the first keeps it and the others become name:2, name:3 …,
// skipping any such name the query has as a column of its own. A
// subquery's repeated names come from SQLite as name:N, with N random
// after the fourth repeat; so a name:digits whose name part is that of an
// earlier column counts as a repeat of it, and the same query always
// gives the same names.
func uniqueNames(declared []string) []string {
	names := sqliteBases(declared)
	taken := make(map[string]bool, len(names))
	for _, n := range names {
		taken[n] = true
	}
	used := make(map[string]bool, len(names))
	next := map[string]int{}
	for i, n := range names {
		if used[n] {
			k := max(next[n], 2)
			for taken[n+":"+strconv.Itoa(k)] {
				k++
			}
			next[n] = k + 1
			names[i] = n + ":" + strconv.Itoa(k)
			taken[names[i]] = true
		}
		used[names[i]] = true
	}
	return names
}

// sqliteBases returns a copy of names where each name:digits whose base
// names an earlier column (compared as SQLite does, ignoring ASCII case)
// is replaced by the base.
func sqliteBases(names []string) []string {
	out := make([]string, len(names))
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		if base, ok := sqliteSuffixed(n); ok && seen[strings.ToLower(base)] {
			n = base
		}
		seen[strings.ToLower(n)] = true
		out[i] = n
	}
	return out
}

// sqliteSuffixed splits a name SQLite made unique, base:digits.
func sqliteSuffixed(name string) (base string, ok bool) {
	i := strings.LastIndexByte(name, ':')
	if i < 0 || i == len(name)-1 {
		return "", false
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return name[:i], true
}
