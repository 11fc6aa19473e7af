package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// nodeError is a problem at a YAML node.
type nodeError struct {
	node *yaml.Node
	msg  string
}

func (e *nodeError) Error() string { return e.msg }

// yamlValue converts a YAML node to the plain values matchers expect:
// map[string]any, []any, string, bool, nil, int64, float64, and
// json.Number for integers beyond int64. Mapping keys are taken as
// strings whatever their tag; duplicate keys, merge keys and custom tags
// are errors.
func yamlValue(n *yaml.Node) (any, error) {
	d := yamlDecoder{budget: maxNodes}
	return d.value(n, 0)
}

// modelValue converts a YAML node as yamlValue does, but with every
// number as the json.Number a model would send for it (see
// modelNumber): the form golden call arguments take, so that validate
// judges them as it judges a model's.
func modelValue(n *yaml.Node) (any, error) {
	d := yamlDecoder{budget: maxNodes, modelNumbers: true}
	return d.value(n, 0)
}

// yamlDecoder holds the state of one yamlValue or modelValue call.
type yamlDecoder struct {
	budget       int  // values left before the document is too big
	modelNumbers bool // numbers as json.Number (modelNumber)
}

// maxNodes bounds the values one document may expand to, aliases
// included, so that an alias bomb fails fast instead of eating memory.
const maxNodes = 1 << 20

func (d *yamlDecoder) value(n *yaml.Node, depth int) (any, error) {
	if depth > 200 {
		return nil, &nodeError{n, "nesting too deep"}
	}
	if d.budget--; d.budget < 0 {
		return nil, &nodeError{n, "document expands to too many values (alias loop or bomb?)"}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.value(n.Content[0], depth+1)
	case yaml.AliasNode:
		return d.value(n.Alias, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, &nodeError{k, "mapping keys must be scalars"}
			}
			if k.Tag == "!!merge" {
				return nil, &nodeError{k, "merge keys (<<) are not supported"}
			}
			if _, dup := m[k.Value]; dup {
				return nil, &nodeError{k, fmt.Sprintf("duplicate key %q", k.Value)}
			}
			val, err := d.value(v, depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := d.value(c, depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return l, nil
	case yaml.ScalarNode:
		if d.modelNumbers && isNumberTag(n) {
			return modelNumber(n)
		}
		return scalar(n)
	}
	return nil, &nodeError{n, "unsupported YAML node"}
}

func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!str", "!!timestamp", "!!binary":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, &nodeError{n, err.Error()}
		}
		return b, nil
	case "!!int":
		s := strings.ReplaceAll(n.Value, "_", "")
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return i, nil
		}
		if strings.Trim(strings.TrimLeft(s, "+-"), "0123456789") == "" {
			return json.Number(strings.TrimLeft(s, "+")), nil
		}
		var f float64
		if err := n.Decode(&f); err == nil {
			return f, nil
		}
		return nil, &nodeError{n, fmt.Sprintf("bad integer %q", n.Value)}
	case "!!float":
		switch strings.ToLower(n.Value) {
		case ".inf", "+.inf":
			return math.Inf(1), nil
		case "-.inf":
			return math.Inf(-1), nil
		case ".nan":
			return math.NaN(), nil
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil {
			return nil, &nodeError{n, fmt.Sprintf("bad number %q", n.Value)}
		}
		return f, nil
	}
	return nil, &nodeError{n, fmt.Sprintf("unsupported tag %s", n.Tag)}
}

func isNumberTag(n *yaml.Node) bool {
	t := n.ShortTag()
	return t == "!!int" || t == "!!float"
}

// modelNumber returns the number of the !!int or !!float scalar n as a
// model would write it in JSON: its text when that is a JSON number
// already (10.0 stays 10.0, 10 stays 10), otherwise its value in JSON
// spelling that keeps its kind: an integer as digits (0x1F is 31, 1_000
// is 1000), a float with a fractional part or exponent (10. is 10.0, .5
// is 0.5, !!float 10 is 10.0). Infinities and NaN, which JSON cannot hold, stay float64.
func modelNumber(n *yaml.Node) (any, error) {
	isFloat := n.ShortTag() == "!!float"
	// A plain number keeps its JSON text (an integer beyond int64, which
	// YAML resolves as !!float, too); an explicit tag must agree with it
	// (not so !!float 10).
	tagged := n.Style&yaml.TaggedStyle != 0
	if IsJSONNumber(n.Value) && (!tagged || strings.ContainsAny(n.Value, ".eE") == isFloat) {
		return json.Number(n.Value), nil
	}
	v, err := scalar(n)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), nil
	case json.Number:
		return x, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return x, nil
		}
		return json.Number(floatText(x, isFloat)), nil
	}
	return v, nil
}

// floatText spells f as a JSON number; when isFloat, one that still
// reads as a float (with a fractional part or an exponent).
func floatText(f float64, isFloat bool) string {
	if !isFloat && f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// IsJSONNumber reports whether s is a number in JSON syntax, as written
// (the cassette recorder uses it to keep a value's text).
func IsJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}

// nodeAt finds the node at elems below n (a document or value node). For
// a mapping key it returns the key node, so that errors point at the
// field name; it stops at the deepest node that exists.
func nodeAt(n *yaml.Node, elems []any) *yaml.Node {
	at, _, _ := walk(n, elems)
	return at
}

// valueAt returns the value node at elems below n, or nil when there is
// none.
func valueAt(n *yaml.Node, elems []any) *yaml.Node {
	if _, v, ok := walk(n, elems); ok {
		return v
	}
	return nil
}

// walk follows elems below n. It returns the node to point at (for a
// mapping key, the key node), the value node there, and whether every
// elem was found; if not, the first two are the deepest that exist.
func walk(n *yaml.Node, elems []any) (at, cur *yaml.Node, ok bool) {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	cur, at = n, n
	for _, e := range elems {
		for cur.Kind == yaml.AliasNode && cur.Alias != nil {
			cur = cur.Alias
		}
		switch e := e.(type) {
		case string:
			if cur.Kind != yaml.MappingNode {
				return at, cur, false
			}
			found := false
			for i := 0; i+1 < len(cur.Content); i += 2 {
				if cur.Content[i].Value == e {
					at, cur = cur.Content[i], cur.Content[i+1]
					found = true
					break
				}
			}
			if !found {
				return at, cur, false
			}
		case int:
			if cur.Kind != yaml.SequenceNode || e < 0 || e >= len(cur.Content) {
				return at, cur, false
			}
			cur = cur.Content[e]
			at = cur
		}
	}
	return at, cur, true
}
