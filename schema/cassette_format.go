package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The cassette format is defined once, here: each mapping of a cassette
// is a shape, a list of fields, and each field is one entry with its
// name, its JSON Schema, how ParseCassettes reads it and how
// MarshalYAML writes it. ParseCassettes takes the allowed and required
// keys of every mapping from these tables, CassetteJSONSchema is
// generated from them and the recorder, the BFCL importer and `toolward
// init` write cassettes through MarshalYAML, so a new field is one entry
// (plus its Go field in the type it fills).

// field is one key of a shape whose values fill a T.
type field[T any] struct {
	name string
	// required fields are reported missing (with note, when set, after
	// the message) unless a misspelling of the key was reported.
	required bool
	note     string
	schema   func() obj
	read     func(p *cassetteParser, k, v *yaml.Node, path []any, dst *T)
	// write returns the value's node, or nil to leave the key out.
	write func(src *T) *yaml.Node
}

// shape is one mapping of the format.
type shape[T any] struct {
	what   string // "a cassette", for "want a cassette (a mapping of …)"
	fields []field[T]
	flow   bool // written in flow style
	// check, when set, runs after the fields are read, with the key node
	// of each field present.
	check func(p *cassetteParser, n *yaml.Node, path []any, keys map[string]*yaml.Node, dst *T)
	// extra adds whole-object constraints to the JSON Schema.
	extra obj
}

func (s *shape[T]) names() []string {
	out := make([]string, len(s.fields))
	for i, f := range s.fields {
		out[i] = f.name
	}
	return out
}

// read checks the mapping n against the shape and fills dst; it reports
// false when n is not a mapping.
func (s *shape[T]) read(p *cassetteParser, n *yaml.Node, path []any, dst *T) bool {
	n = deref(n)
	fs, ok := p.fields(n, path, s.what, s.names()...)
	if !ok {
		return false
	}
	keys := map[string]*yaml.Node{}
	for _, kv := range fs {
		k, v := kv[0], kv[1]
		keys[k.Value] = k
		i := slices.IndexFunc(s.fields, func(f field[T]) bool { return f.name == k.Value })
		s.fields[i].read(p, k, v, at(path, k.Value), dst)
	}
	for _, f := range s.fields {
		if f.required && keys[f.name] == nil && !p.reported(n, f.name) {
			msg := fmt.Sprintf("missing field %q", f.name)
			if f.note != "" {
				msg += " (" + f.note + ")"
			}
			p.errf(n, path, "%s", msg)
		}
	}
	if s.check != nil {
		s.check(p, n, path, keys, dst)
	}
	return true
}

// write returns src as a mapping node, fields in shape order.
func (s *shape[T]) write(src *T) *yaml.Node {
	style := blockStyle
	if s.flow {
		style = yaml.FlowStyle
	}
	m := mappingNode(style)
	for _, f := range s.fields {
		if v := f.write(src); v != nil {
			m.Content = append(m.Content, strNode(f.name), v)
		}
	}
	return m
}

// jsonSchema is the closed JSON Schema object of the shape.
func (s *shape[T]) jsonSchema() obj {
	props := obj{}
	var required []any
	for _, f := range s.fields {
		props[f.name] = f.schema()
		if f.required {
			required = append(required, f.name)
		}
	}
	o := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	for k, v := range s.extra {
		o[k] = v
	}
	return o
}

// list reads a sequence of elements of shape el into *dst; minOne
// reports an empty list with "want at least one <one>".
func list[T any](p *cassetteParser, v *yaml.Node, path []any, el *shape[T], want, one string, dst *[]T) {
	if v.Kind != yaml.SequenceNode {
		p.errf(v, path, "want %s", want)
		return
	}
	if one != "" && len(v.Content) == 0 {
		p.errf(v, path, "want at least one %s", one)
	}
	for i, n := range v.Content {
		var x T
		setLine(&x, deref(n))
		el.read(p, n, at(path, i), &x)
		*dst = append(*dst, x)
	}
}

// setLine records where an element starts, for messages.
func setLine(x any, n *yaml.Node) {
	switch x := x.(type) {
	case *CassetteRun:
		x.Line, x.Col = n.Line, n.Column
	case *CassetteTurn:
		x.Line = n.Line
	case *CassetteCall:
		x.Line, x.Col = n.Line, n.Column
	}
}

func writeList[T any](el *shape[T], xs []T, style yaml.Style) *yaml.Node {
	s := seqNode(style)
	for i := range xs {
		s.Content = append(s.Content, el.write(&xs[i]))
	}
	return s
}

// A reply's text may be any scalar: `content: 42` is the text "42".
func textSchema() obj   { return obj{"type": []any{"string", "number", "boolean"}} }
func nonNegSchema() obj { return obj{"type": "number", "minimum": 0} }
func desc(o obj, d string) obj {
	o["description"] = d
	return o
}

var cassetteShape = &shape[Cassette]{what: "a cassette", fields: []field[Cassette]{
	{name: "case", required: true, note: "the id of the case it answers for",
		schema: func() obj {
			return obj{"type": "string", "minLength": 1, "description": "The id of the case it answers for."}
		},
		read: func(p *cassetteParser, k, v *yaml.Node, path []any, c *Cassette) {
			c.CaseLine, c.CaseCol = v.Line, v.Column
			if s, ok := p.str(v, path); ok {
				if s == "" {
					p.errf(v, path, "want a case id, got an empty string")
				}
				c.Case = s
			}
		},
		write: func(c *Cassette) *yaml.Node { return strNode(c.Case) }},
	{name: "runs", required: true,
		schema: func() obj {
			return obj{"type": "array", "minItems": 1, "items": runShape.jsonSchema(), "description": "Tried in order; the first whose when matches the cell wins."}
		},
		read: func(p *cassetteParser, k, v *yaml.Node, path []any, c *Cassette) {
			list(p, v, path, runShape, "a list of runs ({when, turns})", "run", &c.Runs)
		},
		write: func(c *Cassette) *yaml.Node { return writeList(runShape, c.Runs, blockStyle) }},
	{name: "todo",
		schema: func() obj {
			return obj{"type": "string", "description": "A cassette still to be written: validate and replay refuse it (\"fill in the cassette\") until this is removed."}
		},
		// A cassette still to be written (`toolward init` writes
		// placeholders under one): it is never replayed, so its
		// placeholder calls never reach a server.
		read: func(p *cassetteParser, k, v *yaml.Node, path []any, c *Cassette) {
			note, _ := p.str(v, path)
			c.Todo = note
			p.errf(k, path, "fill in the cassette: %s (then delete todo; until then replay never sends its calls)", strings.TrimSpace(note))
		},
		write: func(c *Cassette) *yaml.Node {
			if c.Todo == "" {
				return nil
			}
			return strNode(c.Todo)
		}},
}}

var runShape = &shape[CassetteRun]{what: "a run", fields: []field[CassetteRun]{
	{name: "when",
		schema: func() obj {
			scalar := obj{"type": []any{"string", "number", "boolean", "null"}}
			pattern := obj{"anyOf": []any{scalar, obj{"type": "array", "minItems": 1, "items": scalar}}}
			props := obj{}
			for _, a := range CassetteAxes {
				props[a] = pattern
			}
			when := obj{"type": "object", "properties": props, "additionalProperties": false,
				"description": "Cell selector: each named axis must match one of its values (exactly, as a glob with * ? \\, or as an equal number)."}
			return obj{"anyOf": []any{obj{"type": "null"}, when}}
		},
		read: func(p *cassetteParser, k, v *yaml.Node, path []any, r *CassetteRun) {
			if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
				return
			}
			sel, _ := p.fields(v, path, "a cell selector", CassetteAxes...)
			for _, s := range sel {
				r.When = append(r.When, CassetteSelector{Axis: s[0].Value, Patterns: p.patterns(s[1], at(path, s[0].Value))})
			}
		},
		write: func(r *CassetteRun) *yaml.Node {
			if len(r.When) == 0 {
				return nil
			}
			when := mappingNode(yaml.FlowStyle)
			for _, s := range r.When {
				var v *yaml.Node
				if len(s.Patterns) == 1 {
					v = selectorNode(s.Patterns[0])
				} else {
					v = seqNode(yaml.FlowStyle)
					for _, pat := range s.Patterns {
						v.Content = append(v.Content, selectorNode(pat))
					}
				}
				when.Content = append(when.Content, strNode(s.Axis), v)
			}
			return when
		}},
	{name: "turns", required: true,
		schema: func() obj {
			return obj{"type": "array", "minItems": 1, "items": turnShape.jsonSchema(), "description": "Reply i answers model turn i; the turns with role user answer the simulated user's turns, in their own order."}
		},
		read: func(p *cassetteParser, k, v *yaml.Node, path []any, r *CassetteRun) {
			list(p, v, path, turnShape, "a list of turns", "turn", &r.Turns)
		},
		write: func(r *CassetteRun) *yaml.Node { return writeList(turnShape, r.Turns, blockStyle) }},
}}

// textField is a turn's text field: any scalar, written in literal
// block style when it spans lines and left out when empty unless keep.
func textField(name string, get func(*CassetteTurn) *string, keep func(*CassetteTurn) bool) field[CassetteTurn] {
	return field[CassetteTurn]{name: name, schema: textSchema,
		read: func(p *cassetteParser, k, v *yaml.Node, path []any, t *CassetteTurn) {
			*get(t), _ = p.str(v, path)
		},
		write: func(t *CassetteTurn) *yaml.Node {
			if s := *get(t); s != "" || keep != nil && keep(t) {
				return textNode(s)
			}
			return nil
		}}
}

var turnShape = &shape[CassetteTurn]{what: "a turn", check: checkUserTurn, fields: []field[CassetteTurn]{
	{name: "role",
		schema: func() obj {
			return obj{"enum": []any{"assistant", CassetteRoleUser, CassetteRoleJudge}, "description": "assistant (the default): a reply of the model under test; user: a reply of the simulated user of a conversation, content only; judge: a reply of the judge of a judged answer, content only."}
		},
		read: func(p *cassetteParser, k, v *yaml.Node, path []any, t *CassetteTurn) {
			switch r, _ := p.str(v, path); r {
			case "assistant":
			case CassetteRoleUser, CassetteRoleJudge:
				t.Role = r
			default:
				p.errf(v, path, "want \"assistant\" (the model, the default), \"user\" (the simulated user) or \"judge\" (the judge), got %q", r)
			}
		},
		write: func(t *CassetteTurn) *yaml.Node {
			if t.Role == "" {
				return nil
			}
			return strNode(t.Role)
		}},
	textField("thinking", func(t *CassetteTurn) *string { return &t.Thinking }, nil),
	// A reply without calls always has content, if only "".
	textField("content", func(t *CassetteTurn) *string { return &t.Content }, func(t *CassetteTurn) bool { return len(t.ToolCalls) == 0 }),
	{name: "tool_calls",
		schema: func() obj { return obj{"type": "array", "items": callShape.jsonSchema()} },
		read: func(p *cassetteParser, k, v *yaml.Node, path []any, t *CassetteTurn) {
			list(p, v, path, callShape, "a list of tool calls ({name, arguments})", "", &t.ToolCalls)
		},
		write: func(t *CassetteTurn) *yaml.Node {
			if len(t.ToolCalls) == 0 {
				return nil
			}
			return writeList(callShape, t.ToolCalls, blockStyle)
		}},
	{name: "tokens",
		schema: tokensShape.jsonSchema,
		read: func(p *cassetteParser, k, v *yaml.Node, path []any, t *CassetteTurn) {
			tokensShape.read(p, v, path, t)
		},
		write: func(t *CassetteTurn) *yaml.Node {
			if t.TokensIn == 0 && t.TokensOut == 0 {
				return nil
			}
			return tokensShape.write(t)
		}},
	{name: "latency_ms", schema: nonNegSchema,
		read: func(p *cassetteParser, k, v *yaml.Node, path []any, t *CassetteTurn) {
			if ms, ok := p.num(v, path); ok {
				t.Latency = time.Duration(math.Round(ms * float64(time.Millisecond)))
			}
		},
		write: func(t *CassetteTurn) *yaml.Node {
			if t.Latency == 0 {
				return nil
			}
			return numberNode(strconv.FormatFloat(float64(t.Latency)/1e6, 'f', -1, 64))
		}},
	textField("done_reason", func(t *CassetteTurn) *string { return &t.DoneReason }, nil),
	{name: "input",
		schema: func() obj {
			return obj{"type": "string", "pattern": "^[0-9a-f]{16}$", "description": "role judge only: the digest of the judge's input this reply answered (a record's judged[].input), written by --record; replay refuses the turn to a request with another input, such as an edited rubric. Left out, the turn answers any input."}
		},
		read: func(p *cassetteParser, k, v *yaml.Node, path []any, t *CassetteTurn) {
			s, ok := p.str(v, path)
			if ok && !judgeInputRE.MatchString(s) {
				p.errf(v, path, "want the 16 hex digits of a judge input's digest (a record's judged[].input), got %q", s)
				return
			}
			t.Input = s
		},
		write: func(t *CassetteTurn) *yaml.Node {
			if t.Input == "" {
				return nil
			}
			return strNode(t.Input)
		}},
}}

// judgeInputRE is the form of a judge input's digest.
var judgeInputRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

// checkUserTurn refuses a simulated user's turn with tool calls or
// without content.
func checkUserTurn(p *cassetteParser, n *yaml.Node, path []any, keys map[string]*yaml.Node, t *CassetteTurn) {
	switch {
	case t.Role == CassetteRoleJudge && len(t.ToolCalls) > 0:
		p.errf(keys["tool_calls"], at(path, "tool_calls"), "a judge's turn (role: judge) has no tool calls")
	case t.Role != CassetteRoleJudge && t.Input != "":
		p.errf(keys["input"], at(path, "input"), "input is the judge input a judge's turn answered: only a turn with role: judge has one")
	case t.Role != CassetteRoleUser:
	case len(t.ToolCalls) > 0:
		p.errf(keys["tool_calls"], at(path, "tool_calls"), "a simulated user's turn (role: user) has no tool calls")
	case strings.TrimSpace(t.Content) == "":
		p.errf(n, path, "a simulated user's turn (role: user) needs content")
	}
}

// countField is one of a turn's token counts.
func countField(name string, get func(*CassetteTurn) *int) field[CassetteTurn] {
	return field[CassetteTurn]{name: name, schema: nonNegSchema,
		read: func(p *cassetteParser, k, v *yaml.Node, path []any, t *CassetteTurn) {
			if f, ok := p.num(v, path); ok {
				*get(t) = int(f)
			}
		},
		write: func(t *CassetteTurn) *yaml.Node { return numberNode(strconv.Itoa(*get(t))) }}
}

// tokensShape is a turn's token counts, {in, out}.
var tokensShape = &shape[CassetteTurn]{what: "token counts", flow: true, fields: []field[CassetteTurn]{
	countField("in", func(t *CassetteTurn) *int { return &t.TokensIn }),
	countField("out", func(t *CassetteTurn) *int { return &t.TokensOut }),
}}

var callShape = &shape[CassetteCall]{what: "a tool call", flow: true,
	extra: obj{"not": obj{"required": []any{"arguments", "raw_arguments"}}},
	fields: []field[CassetteCall]{
		{name: "name", required: true, note: "the tool called",
			schema: func() obj { return desc(textSchema(), "The tool called.") },
			read: func(p *cassetteParser, k, v *yaml.Node, path []any, c *CassetteCall) {
				c.Line, c.Col = v.Line, v.Column
				c.Name, _ = p.str(v, path)
			},
			write: func(c *CassetteCall) *yaml.Node { return strNode(c.Name) }},
		{name: "arguments",
			schema: func() obj {
				return obj{"description": "Any value; sent as JSON with its key order kept (a non-object exercises malformed calls)."}
			},
			read: func(p *cassetteParser, k, v *yaml.Node, path []any, c *CassetteCall) {
				var buf bytes.Buffer
				if p.toJSON(&buf, v, path) {
					c.Arguments = json.RawMessage(buf.Bytes())
				}
			},
			write: func(c *CassetteCall) *yaml.Node {
				n, _ := jsonToNode(c.Arguments)
				return n
			}},
		{name: "raw_arguments",
			schema: func() obj {
				return desc(textSchema(), "Sent verbatim, even when it is not valid JSON.")
			},
			read: func(p *cassetteParser, k, v *yaml.Node, path []any, c *CassetteCall) {
				if s, ok := p.str(v, path); ok {
					c.Arguments = json.RawMessage(s)
				}
			},
			write: func(c *CassetteCall) *yaml.Node {
				if _, ok := jsonToNode(c.Arguments); ok {
					return nil
				}
				return strNode(string(c.Arguments))
			}},
	},
	check: func(p *cassetteParser, n *yaml.Node, path []any, keys map[string]*yaml.Node, c *CassetteCall) {
		a, r := keys["arguments"], keys["raw_arguments"]
		switch {
		case a != nil && r != nil:
			second := r
			if a.Line > r.Line || a.Line == r.Line && a.Column > r.Column {
				second = a
			}
			p.errf(second, at(path, second.Value), "give arguments or raw_arguments, not both")
		case a == nil && r == nil:
			c.Arguments = json.RawMessage("{}")
		}
	},
}

// MarshalYAML writes the cassette in the format ParseCassettes reads
// (File and the positions are not written).
func (c Cassette) MarshalYAML() (any, error) { return cassetteShape.write(&c), nil }

// MarshalYAML writes the turn as it appears in a cassette's turns.
func (t CassetteTurn) MarshalYAML() (any, error) { return turnShape.write(&t), nil }

// EncodeCassette writes c as one YAML document with comment above it.
func EncodeCassette(w io.Writer, c *Cassette, comment string) error {
	doc := cassetteShape.write(c)
	doc.HeadComment = comment
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing cassette for %q: %w", c.Case, err)
	}
	return enc.Close()
}

func mappingNode(style yaml.Style) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Style: style}
}
func seqNode(style yaml.Style) *yaml.Node { return &yaml.Node{Kind: yaml.SequenceNode, Style: style} }
func strNode(s string) *yaml.Node         { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func numberNode(s string) *yaml.Node {
	tag := "!!int"
	if strings.ContainsAny(s, ".eE") {
		tag = "!!float"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: s}
}

// selectorNode writes a selector value, unquoted when it is a number.
func selectorNode(s string) *yaml.Node {
	if IsJSONNumber(s) {
		return numberNode(s)
	}
	return strNode(s)
}

// textNode is a string node, in literal block style when it spans lines.
func textNode(s string) *yaml.Node {
	n := strNode(s)
	if strings.Contains(strings.TrimRight(s, "\n"), "\n") {
		n.Style = yaml.LiteralStyle
	}
	return n
}

// jsonToNode converts JSON to a YAML node, keeping object key order and
// number text. It reports false for bytes that are not one JSON value.
func jsonToNode(raw json.RawMessage) (*yaml.Node, bool) {
	if len(bytes.TrimSpace(raw)) == 0 || !json.Valid(raw) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := decodeNode(dec)
	if err != nil {
		return nil, false
	}
	return n, true
}

func decodeNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			m := mappingNode(yaml.FlowStyle)
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				val, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				m.Content = append(m.Content, strNode(kt.(string)), val)
			}
			_, err := dec.Token()
			return m, err
		}
		s := seqNode(yaml.FlowStyle)
		for dec.More() {
			val, err := decodeNode(dec)
			if err != nil {
				return nil, err
			}
			s.Content = append(s.Content, val)
		}
		_, err := dec.Token()
		return s, err
	case json.Number:
		return numberNode(v.String()), nil
	case string:
		return strNode(v), nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// blockStyle is yaml.v3's default (zero) style.
const blockStyle yaml.Style = 0
