package schema

import (
	"cmp"
	"fmt"
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

// Error prints one error per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
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
