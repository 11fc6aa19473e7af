package schema

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Error is one mistake in a case file or config, at a position.
type Error struct {
	File string `json:"file"`
	Line int    `json:"line"` // 1-based; 0 when unknown
	Col  int    `json:"col"`  // 1-based; 0 when unknown
	// Path names the offending node, e.g. expect.calls[0].args.lang; it
	// may be empty for file-level errors.
	Path string `json:"path"`
	Msg  string `json:"message"`
}

// Error formats e as "file:line:col: path: msg".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, max(e.Col, 1))
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	// One line per error, whatever the message holds.
	b.WriteString(strings.ReplaceAll(e.Msg, "\n", " "))
	return b.String()
}

// Errors is a list of errors, returned as one error by the loaders.
type Errors []*Error

// MaxSameKind is how many errors of one kind Lines lists before it
// summarises the rest in one line. Errors are of one kind when they are
// in the same file, at the same path but for list indexes
// (matrix.seeds[3] and matrix.seeds[7]), with the same message but for
// numbers and quoted values (duplicate value 3, duplicate value 7).
const MaxSameKind = 10

// Error prints one error per line, as Lines does.
func (es Errors) Error() string { return strings.Join(es.Lines(), "\n") }

// Lines renders es one error per line, in order, except that after
// MaxSameKind errors of one kind the others of that kind are left out
// and one line says how many there were: "file: path[…]: … and 99444
// more like this". A list of errors is for a person to read; the full
// list stays in es (validate --format json prints it all).
func (es Errors) Lines() []string {
	kinds := make([]errorKind, len(es))
	count := map[errorKind]int{}
	for i, e := range es {
		kinds[i] = kindOfError(e)
		count[kinds[i]]++
	}
	shown := map[errorKind]int{}
	var lines []string
	for i, e := range es {
		k := kinds[i]
		shown[k]++
		if n := shown[k]; n <= MaxSameKind {
			lines = append(lines, e.Error())
			if n == MaxSameKind && count[k] > n {
				lines = append(lines, k.summary(count[k]-n))
			}
		}
	}
	return lines
}

// errorKind is what errors of one kind share (see MaxSameKind).
type errorKind struct{ file, path, msg string }

var (
	reIndex  = regexp.MustCompile(`\[\d+\]`)
	reNumber = regexp.MustCompile(`-?\b\d+(\.\d+)?([eE][-+]?\d+)?\b`)
	reQuoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// kindOfError returns the kind of e.
func kindOfError(e *Error) errorKind {
	msg := reQuoted.ReplaceAllString(e.Msg, `"…"`)
	msg = reNumber.ReplaceAllString(msg, "…")
	return errorKind{file: e.File, path: reIndex.ReplaceAllString(e.Path, "[…]"), msg: msg}
}

// summary is the line that stands for n errors of kind k left out.
func (k errorKind) summary(n int) string {
	s := k.file + ": "
	if k.path != "" {
		s += k.path + ": "
	}
	return s + fmt.Sprintf("… and %d more like this (%s)", n, k.msg)
}

// Sort orders errors by file, line, column and message, and drops exact
// duplicates.
func (es Errors) Sort() Errors {
	slices.SortFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col),
			cmp.Compare(a.Path, b.Path), cmp.Compare(a.Msg, b.Msg))
	})
	return slices.CompactFunc(es, func(a, b *Error) bool { return *a == *b })
}

// err returns es as an error, nil when empty.
func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}
