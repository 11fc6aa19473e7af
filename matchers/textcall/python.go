package textcall

import (
	"strconv"
	"strings"
)

// maxPyDepth bounds the nesting of Python lists and dicts in arguments.
const maxPyDepth = 32

// pythonCalls reads Llama's pythonic calls at the start of payload:
// name(key=value, …), with an optional ".call" after the name as in
// <|python_tag|>brave_search.call(query="…"), or a non-empty list of such
// calls. Values are Python literals: strings, numbers, True, False, None,
// lists and dicts of them. Positional arguments are not a call shape.
// read is how far the parser got, success or not.
func (s *Set) pythonCalls(payload string) (calls []call, n, read int) {
	p := &pyParser{src: payload}
	defer func() { read = max(p.pos, 1) }()
	p.space()
	if p.eat('[') {
		for {
			c, ok := p.call(&s.Shape)
			if !ok {
				return nil, 0, 0
			}
			calls = append(calls, c)
			p.space()
			if p.eat(']') {
				break
			}
			if !p.eat(',') {
				return nil, 0, 0
			}
		}
	} else {
		c, ok := p.call(&s.Shape)
		if !ok {
			return nil, 0, 0
		}
		calls = []call{c}
	}
	return calls, p.pos, 0
}

type pyParser struct {
	src string
	pos int
}

func (p *pyParser) space() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
}

// eat skips space and then b, and reports whether b was there.
func (p *pyParser) eat(b byte) bool {
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == b {
		p.pos++
		return true
	}
	return false
}

func isIdent(b byte, first bool) bool {
	return b == '_' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || !first && '0' <= b && b <= '9'
}

func (p *pyParser) ident() string {
	p.space()
	start := p.pos
	for p.pos < len(p.src) && isIdent(p.src[p.pos], p.pos == start) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// call reads name(key=value, …).
func (p *pyParser) call(sh *Shape) (call, bool) {
	name := p.ident()
	for p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		part := p.ident()
		if part == "" {
			return call{}, false
		}
		name += "." + part
	}
	name = strings.TrimSuffix(name, ".call")
	if name == "" || !sh.toolName.MatchString(name) || !p.eat('(') {
		return call{}, false
	}
	args := map[string]any{}
	if p.eat(')') {
		return call{tool: name, args: args}, true
	}
	for {
		key := p.ident()
		if key == "" || !p.eat('=') {
			return call{}, false
		}
		v, ok := p.value(0)
		if !ok {
			return call{}, false
		}
		args[key] = v
		if p.eat(')') {
			return call{tool: name, args: args}, true
		}
		if !p.eat(',') {
			return call{}, false
		}
		if p.eat(')') { // a trailing comma
			return call{tool: name, args: args}, true
		}
	}
}

// value reads one Python literal as encoding/json would decode its JSON
// counterpart (numbers are float64).
func (p *pyParser) value(depth int) (any, bool) {
	if depth > maxPyDepth {
		return nil, false
	}
	p.space()
	if p.pos >= len(p.src) {
		return nil, false
	}
	switch c := p.src[p.pos]; {
	case c == '"' || c == '\'':
		return p.str()
	case c == '[':
		p.pos++
		return p.list(depth)
	case c == '{':
		p.pos++
		return p.dict(depth)
	case c == '-' || c == '+' || c == '.' || '0' <= c && c <= '9':
		return p.number()
	}
	switch p.ident() {
	case "True":
		return true, true
	case "False":
		return false, true
	case "None":
		return nil, true
	}
	return nil, false
}

func (p *pyParser) list(depth int) (any, bool) {
	out := []any{}
	if p.eat(']') {
		return out, true
	}
	for {
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if p.eat(']') {
			return out, true
		}
		if !p.eat(',') {
			return nil, false
		}
	}
}

func (p *pyParser) dict(depth int) (any, bool) {
	out := map[string]any{}
	if p.eat('}') {
		return out, true
	}
	for {
		p.space()
		k, ok := p.str()
		if !ok || !p.eat(':') {
			return nil, false
		}
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		out[k.(string)] = v
		if p.eat('}') {
			return out, true
		}
		if !p.eat(',') {
			return nil, false
		}
	}
}

// str reads a single- or double-quoted string with backslash escapes.
func (p *pyParser) str() (any, bool) {
	if p.pos >= len(p.src) || p.src[p.pos] != '"' && p.src[p.pos] != '\'' {
		return nil, false
	}
	q := p.src[p.pos]
	var b strings.Builder
	for i := p.pos + 1; i < len(p.src); i++ {
		switch c := p.src[i]; {
		case c == q:
			p.pos = i + 1
			return b.String(), true
		case c == '\n':
			return nil, false
		case c == '\\' && i+1 < len(p.src):
			i++
			b.WriteByte(unescape(p.src[i]))
		default:
			b.WriteByte(c)
		}
	}
	return nil, false
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	}
	return c // \\, \', \" and anything else stand for themselves
}

func (p *pyParser) number() (any, bool) {
	start := p.pos
	for p.pos < len(p.src) && strings.IndexByte("+-.0123456789eE_", p.src[p.pos]) >= 0 {
		p.pos++
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(p.src[start:p.pos], "_", ""), 64)
	if err != nil {
		return nil, false
	}
	return f, true
}
