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
	budget := maxNodes
	return yamlValueB(n, 0, &budget)
}

// maxNodes bounds the values one document may expand to, aliases
// included, so that an alias bomb fails fast instead of eating memory.
const maxNodes = 1 << 20

func yamlValueB(n *yaml.Node, depth int, budget *int) (any, error) {
	if depth > 200 {
		return nil, &nodeError{n, "nesting too deep"}
	}
	if *budget--; *budget < 0 {
		return nil, &nodeError{n, "document expands to too many values (alias loop or bomb?)"}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return yamlValueB(n.Content[0], depth+1, budget)
	case yaml.AliasNode:
		return yamlValueB(n.Alias, depth+1, budget)
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
			val, err := yamlValueB(v, depth+1, budget)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := yamlValueB(c, depth+1, budget)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return l, nil
	case yaml.ScalarNode:
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

// nodeAt finds the node at elems below n (a document or value node). For
// a mapping key it returns the key node, so that errors point at the
// field name; it stops at the deepest node that exists.
func nodeAt(n *yaml.Node, elems []any) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	cur, at := n, n
	for _, e := range elems {
		for cur.Kind == yaml.AliasNode && cur.Alias != nil {
			cur = cur.Alias
		}
		switch e := e.(type) {
		case string:
			if cur.Kind != yaml.MappingNode {
				return at
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
				return at
			}
		case int:
			if cur.Kind != yaml.SequenceNode || e < 0 || e >= len(cur.Content) {
				return at
			}
			cur = cur.Content[e]
			at = cur
		}
	}
	return at
}
