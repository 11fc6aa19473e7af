package backend

import "fmt"

// What a streamed reply may hold, and who is to blame when it is cut.
//
// A reply is cut at the backend's reply limit (done reason reply_limit,
// scored: the model wrote too much) only when the cut falls inside what
// a model writes: its content, its thinking, its tool calls (see
// CutInside). A stream cut anywhere else (a line or event of padding,
// whitespace, a comment, a field no model fills, bytes that are not
// events), or carrying more than MaxNoiseBytes of such filler between
// two parts of the reply, is the server's fault: a *StreamFault, which
// backends report as an infrastructure error (KindUnavailable).

// MaxNoiseBytes bounds the bytes of a stream that carry no part of the
// reply (blank lines, SSE comments and fields other than data, bytes
// that are not events) between two parts of it.
const MaxNoiseBytes = 1 << 20

// StreamFault is a reply stream broken by its server: it sent what no
// model writes.
type StreamFault struct {
	What string // e.g. "a line of more than 4 MiB cut outside the reply (in created_at)"
}

func (f *StreamFault) Error() string {
	return "the server sent " + f.What + ", which is not a model's reply"
}

// NoiseFault is the fault for a stream that sent more than MaxNoiseBytes
// of filler.
func NoiseFault(kind string) *StreamFault {
	return &StreamFault{What: fmt.Sprintf("more than %d MiB of %s between two parts of the reply", MaxNoiseBytes>>20, kind)}
}

// JSONPrefixPath scans b, the beginning of a JSON document, and returns
// the path of the value it ends inside: object members by key, array
// elements as "[]"; b ending between members (or inside a key) ends the
// path at their object. inString reports that b ends inside a string
// value. ok is false when b is not the beginning of a JSON value (bytes
// that are not JSON, or a document that has ended).
func JSONPrefixPath(b []byte) (path []string, inString, ok bool) {
	type frame struct {
		obj, wantKey bool
		key          string
	}
	var stack []frame
	build := func() []string {
		p := make([]string, 0, len(stack))
		for _, f := range stack {
			switch {
			case !f.obj:
				p = append(p, "[]")
			case !f.wantKey:
				p = append(p, f.key)
			default:
				return p // between members
			}
		}
		return p
	}
	ended := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			continue
		}
		if ended {
			return nil, false, false
		}
		top := len(stack) - 1
		inKeyPos := top >= 0 && stack[top].obj && stack[top].wantKey
		switch {
		case c == '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(b) { // b ends inside this string
				return build(), !inKeyPos, true
			}
			if inKeyPos {
				stack[top].key = string(b[i+1 : j])
			}
			i = j
			ended = top < 0
		case c == '{' || c == '[':
			if inKeyPos {
				return nil, false, false
			}
			stack = append(stack, frame{obj: c == '{', wantKey: c == '{'})
		case c == '}' || c == ']':
			if top < 0 || stack[top].obj != (c == '}') {
				return nil, false, false
			}
			stack = stack[:top]
			ended = top == 0
		case c == ':':
			if !inKeyPos {
				return nil, false, false
			}
			stack[top].wantKey = false
		case c == ',':
			if top < 0 {
				return nil, false, false
			}
			if stack[top].obj {
				stack[top].wantKey, stack[top].key = true, ""
			}
		case c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '+':
			if inKeyPos {
				return nil, false, false
			}
		default:
			return nil, false, false
		}
	}
	if ended {
		return nil, false, false
	}
	return build(), false, true
}

// ModelPart is where a model's own writing sits in a reply chunk: a
// path ("[]" for any array element, "*" for any key) and whether only a
// cut inside a string there counts (text, as opposed to a tool call's
// structure).
type ModelPart struct {
	Path   []string
	String bool
}

// CutInside reports whether a chunk cut after prefix is cut inside one
// of the model's parts. A cut between a part's members, or in
// whitespace before a text part's string, is not inside it.
func CutInside(prefix []byte, parts ...ModelPart) bool {
	path, inString, ok := JSONPrefixPath(prefix)
	if !ok {
		return false
	}
	for _, part := range parts {
		if len(path) < len(part.Path) || part.String && !inString {
			continue
		}
		match := true
		for i, k := range part.Path {
			if k != "*" && k != path[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
