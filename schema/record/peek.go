package record

import (
	"encoding/json"
	"strings"
)

// PeekID returns the run id a runs.jsonl line holds, without decoding the
// line: the string value of its top-level "id" key, as the reader
// decodes it (the key matched exactly, escapes resolved; the last of
// several winning). ok is false when the line is not a JSON object or has
// no such string. For a line that is a record, the id is the record's
// id; for one that is not, it may be anything.
func PeekID(line []byte) (id string, ok bool) {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return "", false
	}
	i++
	for {
		i = skipSpace(line, i)
		if i >= len(line) {
			return "", false
		}
		if line[i] == '}' {
			return id, ok
		}
		if line[i] == ',' {
			i = skipSpace(line, i+1)
		}
		// A key.
		kstart := i
		kend := peekString(line, i)
		if kend < 0 {
			return "", false
		}
		isID := isIDKey(line[kstart:kend])
		i = skipSpace(line, kend)
		if i >= len(line) || line[i] != ':' {
			return "", false
		}
		i = skipSpace(line, i+1)
		vstart := i
		if i = peekValue(line, i); i < 0 {
			return "", false
		}
		if isID && string(line[vstart:i]) != "null" { // null leaves a string as it was
			id, ok = stringValue(line[vstart:i])
		}
	}
}

// isIDKey reports whether the quoted key q is "id" as the reader matches
// Record's keys (exactly; see decodeLine). A key with escapes is
// unquoted first.
func isIDKey(q []byte) bool {
	if len(q) == 4 {
		return q[1] == 'i' && q[2] == 'd'
	}
	if len(q) > 4 && strings.IndexByte(string(q), '\\') >= 0 {
		var k string
		return json.Unmarshal(q, &k) == nil && k == "id"
	}
	return false
}

// stringValue unquotes a JSON string value as encoding/json does; ok is
// false for any other value.
func stringValue(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	plain := true
	for _, c := range v[1 : len(v)-1] {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// peekString returns the index after the string starting at b[i], -1 when
// there is none.
func peekString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			i++
		}
	}
	return -1
}

// peekValue returns the index after the value starting at b[i], -1 when
// the line ends first. It checks nesting, not the grammar: PeekID trusts
// the decoder to reject what is not JSON.
func peekValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return peekString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = peekString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}
