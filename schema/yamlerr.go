package schema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var reYAMLLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// YAMLSyntaxError places a syntax error of yaml.v3's decoder, err, from
// decoding src, at the line of the mistake, and explains the common
// ones. yaml.v3 reports a parser error at the start of the construct
// being parsed when that construct does not start on the first line, so
// that a mis-indented key deep in the second document of a file is
// reported where the document starts; YAMLSyntaxError finds the line of
// the offending token instead. A line indented with a tab says so.
//
// The message starts with "YAML syntax: ". Line is 1-based and within
// src; Col is 1 unless the offending column is known.
func YAMLSyntaxError(file string, src []byte, err error) *Error {
	e := &Error{File: file, Line: 1, Col: 1, Msg: "YAML syntax: " + err.Error()}
	m := reYAMLLine.FindStringSubmatch(err.Error())
	if m == nil {
		return e
	}
	msg := m[2]
	e.Msg = "YAML syntax: " + msg
	if m[1] != "" {
		e.Line, _ = strconv.Atoi(m[1])
		if parserError(msg) {
			// yaml.v3 reports parser (not scanner) errors with a 0-based
			// line.
			e.Line = problemLine(src, e.Line, msg) + 1
		}
	}
	// Never point past the last line (yaml.v3 can, at the end of input).
	e.Line = min(e.Line, maxLine(src))
	if line, col, ok := tabNear(src, e.Line, strings.Contains(msg, "tab")); ok {
		e.Line, e.Col = line, col
		e.Msg += " (this line is indented with a tab: YAML indents with spaces only)"
		return e
	}
	if msg == "mapping values are not allowed in this context" {
		if key, col, ok := colonInValue(lineText(src, e.Line)); ok {
			e.Col = col
			e.Msg += fmt.Sprintf(" (the value of %s has a colon followed by a space, which YAML reads as a new key: quote the value, e.g. %s: \"…: …\", or write it as a block after %s: |)", key, key, key)
			return e
		}
	}
	switch msg {
	case "did not find expected ',' or '}'":
		e.Msg += " (a { … } mapping that starts on this line is not closed)"
	case "did not find expected ',' or ']'":
		e.Msg += " (a [ … ] list that starts on this line is not closed)"
	case "did not find expected key", "did not find expected '-' indicator":
		e.Col = firstNonBlank(src, e.Line)
		e.Msg += " (check the indentation of this line: it does not line up with the keys or items above it)"
	case "found unexpected end of stream":
		e.Msg += " (a quoted string that starts on this line is not closed?)"
	}
	return e
}

// problemLine returns the 0-based line of the token a block parser error
// is about, given the 0-based line yaml.v3 reported. yaml.v3 reports the
// line where the enclosing block mapping or sequence starts, unless that
// is line 0, when it reports the line of the offending token. Two more
// parses tell the cases apart and find the token: with one line
// prepended, a reported start moves down by one (a reported token line
// becomes the start's line, 1); parsing from the start's line on, where
// the construct starts at line 0, reports the token's line.
func problemLine(src []byte, reported int, msg string) int {
	if msg != "did not find expected key" && msg != "did not find expected '-' indicator" {
		return reported
	}
	shifted, ok := firstErrorLine(append([]byte("#\n"), src...), msg)
	if !ok || shifted != reported+1 {
		return reported // the token's own line
	}
	start := lineOffset(src, reported)
	if start < 0 {
		return reported
	}
	k, ok := firstErrorLine(src[start:], msg)
	if !ok {
		return reported
	}
	return reported + k
}

// firstErrorLine decodes the documents of src until the first error and
// returns the line that error reports (0 when it names none), if its
// message is msg.
func firstErrorLine(src []byte, msg string) (int, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return 0, false
		}
		if err == nil {
			continue
		}
		m := reYAMLLine.FindStringSubmatch(err.Error())
		if m == nil || m[2] != msg {
			return 0, false
		}
		line, _ := strconv.Atoi(m[1]) // "" (no line) is line 0
		return line, true
	}
}

// lineOffset returns the byte offset where 0-based line n of src starts,
// or -1 when src has fewer lines. Lines end at \n.
func lineOffset(src []byte, n int) int {
	off := 0
	for range n {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	return off
}

// lineText returns 1-based line n of src without its line break.
func lineText(src []byte, n int) string {
	off := lineOffset(src, n-1)
	if off < 0 {
		return ""
	}
	s := src[off:]
	if i := bytes.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(string(s), "\r")
}

// tabIndent reports the 1-based column of a tab in the indentation of
// 1-based line n of src.
func tabIndent(src []byte, n int) (int, bool) {
	s := lineText(src, n)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\t':
			return i + 1, true
		case ' ':
		default:
			return 0, false
		}
	}
	return 0, false
}

// tabNear finds a tab in the indentation of 1-based line n of src or of
// the line after it (yaml.v3 reports some tab errors at the line before);
// with anywhere, which the message mentioning a tab warrants, of the
// first tab-indented line from n-1 on. It returns the line and column.
func tabNear(src []byte, n int, anywhere bool) (int, int, bool) {
	last := n + 1
	if anywhere {
		last = maxLine(src)
	}
	for l := max(n-1, 1); l <= last; l++ {
		if l == n-1 && !anywhere {
			continue
		}
		if col, ok := tabIndent(src, l); ok {
			return l, col, true
		}
	}
	return 0, 0, false
}

// colonInValue finds, in a line "key: value", a colon in the plain
// (unquoted) value followed by a space or ending the line; it returns
// the key and the colon's 1-based column.
func colonInValue(line string) (string, int, bool) {
	trimmed := strings.TrimLeft(line, " -")
	indent := len(line) - len(trimmed)
	key, value, ok := strings.Cut(trimmed, ": ")
	if !ok || key == "" || strings.ContainsAny(key, "\"'{[") {
		return "", 0, false
	}
	v := strings.TrimLeft(value, " ")
	if v == "" || strings.ContainsAny(v[:1], "\"'{[|>&*!#") {
		return "", 0, false
	}
	i := strings.Index(v, ": ")
	if i < 0 {
		if !strings.HasSuffix(v, ":") {
			return "", 0, false
		}
		i = len(v) - 1
	}
	return key, indent + len(key) + 2 + (len(value) - len(v)) + i + 1, true
}

// firstNonBlank returns the 1-based column of the first character of
// 1-based line n of src that is not a space, or 1.
func firstNonBlank(src []byte, n int) int {
	s := lineText(src, n)
	if i := strings.IndexFunc(s, func(r rune) bool { return r != ' ' }); i >= 0 {
		return i + 1
	}
	return 1
}
