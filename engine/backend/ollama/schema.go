package ollama

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
)

// ConvertTool converts one MCP tool, whose input schema is JSON Schema, into
// an Ollama tool definition.
//
// Ollama's types carry only part of JSON Schema, and the server re-decodes
// the definition into those types before rendering it for the model, so
// whatever they cannot hold never reaches the model. ConvertTool keeps what
// they hold structurally and folds the rest into description text:
//
//   - Carried as structure: top-level type, properties (in schema order),
//     required, $defs and items; per property type (string or list),
//     description, enum, anyOf, nested properties, and items (kept whole,
//     every keyword, because Ollama holds items as raw JSON).
//   - const becomes a one-value enum; oneOf (when there is no anyOf)
//     becomes anyOf.
//   - Folded into the property's description, in parentheses, in schema
//     order: nested required ("(required)" on each required sub-property),
//     minimum "(minimum 1)", maximum, exclusiveMinimum "(greater than 0)",
//     exclusiveMaximum "(less than 10)", multipleOf, minLength "(at least 3
//     characters)", maxLength, pattern "(pattern: ^[a-z]+$)", format
//     "(format: date)", default "(default: 10)", minItems "(at least 1
//     items)", maxItems, uniqueItems "(items unique)", additionalProperties
//     given as a schema "(other keys: {...})", examples, and any other
//     keyword as "(keyword: compact JSON)".
//   - Keywords of the top-level schema that the parameters type cannot
//     hold (e.g. description, anyOf) are folded the same way into the
//     tool's description, prefixed "arguments".
//   - Dropped: $schema, $id, $comment and title (metadata with no meaning
//     for the call), and additionalProperties: false (the property list is
//     already the whole set of arguments).
//
// An empty or null schema is an object with no properties. A schema that is
// not valid JSON is a *backend.Error of kind KindBadRequest.
func ConvertTool(t backend.Tool) (api.Tool, error) {
	fn := api.ToolFunction{Name: t.Name, Description: t.Description}
	fn.Parameters = api.ToolFunctionParameters{Type: "object", Properties: api.NewToolPropertiesMap()}
	raw := bytes.TrimSpace(t.InputSchema)
	if len(raw) != 0 && !bytes.Equal(raw, []byte("null")) {
		obj, err := parseObject(raw)
		if err != nil {
			return api.Tool{}, &backend.Error{Kind: backend.KindBadRequest, Msg: fmt.Sprintf("tool %q: input schema", t.Name), Err: err}
		}
		var notes []string
		for _, k := range obj.keys {
			v := obj.vals[k]
			switch k {
			case "type":
				var pt api.PropertyType
				if err := json.Unmarshal(v, &pt); err != nil || len(pt) == 0 {
					return api.Tool{}, schemaErr(t.Name, "type", err)
				}
				fn.Parameters.Type = pt[0]
			case "properties":
				props, err := convertProperties(v)
				if err != nil {
					return api.Tool{}, schemaErr(t.Name, "properties", err)
				}
				fn.Parameters.Properties = props
			case "required":
				if err := json.Unmarshal(v, &fn.Parameters.Required); err != nil {
					return api.Tool{}, schemaErr(t.Name, "required", err)
				}
			case "$defs":
				fn.Parameters.Defs = v
			case "items":
				fn.Parameters.Items = v
			default:
				if n := note(k, v); n != "" {
					notes = append(notes, n)
				}
			}
		}
		if len(notes) > 0 {
			fn.Description = joinNote(fn.Description, "arguments "+strings.Join(notes, " "))
		}
	}
	return api.Tool{Type: "function", Function: fn}, nil
}

func schemaErr(tool, key string, err error) error {
	return &backend.Error{Kind: backend.KindBadRequest, Msg: fmt.Sprintf("tool %q: input schema %s", tool, key), Err: err}
}

// object is a JSON object decoded with its key order.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

// parseObject decodes a JSON object keeping key order; values stay raw.
func parseObject(raw []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", abbreviate(raw))
	}
	obj := &object{vals: make(map[string]json.RawMessage)}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string) // object keys are always strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := obj.vals[key]; !dup {
			obj.keys = append(obj.keys, key)
		}
		obj.vals[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the schema object")
	}
	return obj, nil
}

func abbreviate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// convertProperties converts a "properties" object, keeping its order.
func convertProperties(raw json.RawMessage) (*api.ToolPropertiesMap, error) {
	obj, err := parseObject(raw)
	if err != nil {
		return nil, err
	}
	props := api.NewToolPropertiesMap()
	for _, name := range obj.keys {
		p, err := convertProperty(obj.vals[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		props.Set(name, p)
	}
	return props, nil
}

// convertProperty converts one property schema.
func convertProperty(raw json.RawMessage) (api.ToolProperty, error) {
	var p api.ToolProperty
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] != '{' {
		// A boolean schema (true: anything; false: nothing) has no
		// structure to carry.
		if bytes.Equal(raw, []byte("false")) {
			p.Description = "(no value is allowed)"
		}
		return p, nil
	}
	obj, err := parseObject(raw)
	if err != nil {
		return p, err
	}
	var notes, required []string
	var oneOf []api.ToolProperty
	for _, k := range obj.keys {
		v := obj.vals[k]
		switch k {
		case "type":
			if err := json.Unmarshal(v, &p.Type); err != nil {
				return p, fmt.Errorf("type: %w", err)
			}
		case "description":
			if err := json.Unmarshal(v, &p.Description); err != nil {
				return p, fmt.Errorf("description: %w", err)
			}
		case "enum":
			var vals []json.RawMessage
			if err := json.Unmarshal(v, &vals); err != nil {
				return p, fmt.Errorf("enum: %w", err)
			}
			p.Enum = make([]any, len(vals))
			for i, e := range vals {
				p.Enum[i] = e
			}
		case "const":
			if _, hasEnum := obj.vals["enum"]; !hasEnum {
				p.Enum = []any{v}
			}
		case "items":
			p.Items = v
		case "properties":
			props, err := convertProperties(v)
			if err != nil {
				return p, err
			}
			p.Properties = props
		case "required":
			if err := json.Unmarshal(v, &required); err != nil {
				return p, fmt.Errorf("required: %w", err)
			}
		case "anyOf", "oneOf":
			var alts []json.RawMessage
			if err := json.Unmarshal(v, &alts); err != nil {
				return p, fmt.Errorf("%s: %w", k, err)
			}
			conv := make([]api.ToolProperty, len(alts))
			for i, a := range alts {
				if conv[i], err = convertProperty(a); err != nil {
					return p, fmt.Errorf("%s[%d]: %w", k, i, err)
				}
			}
			if k == "anyOf" {
				p.AnyOf = conv
			} else {
				oneOf = conv
			}
		default:
			if n := note(k, v); n != "" {
				notes = append(notes, n)
			}
		}
	}
	markRequired(p.Properties, required)
	if p.AnyOf == nil && oneOf != nil {
		p.AnyOf = oneOf
	} else if oneOf != nil {
		notes = append(notes, note("oneOf", obj.vals["oneOf"]))
	}
	if len(notes) > 0 {
		p.Description = joinNote(p.Description, strings.Join(notes, " "))
	}
	return p, nil
}

// markRequired appends "(required)" to the description of each named
// sub-property. It is used for nested objects only: the top level keeps
// its required list structurally.
func markRequired(props *api.ToolPropertiesMap, names []string) {
	if props == nil {
		return
	}
	for _, n := range names {
		p, ok := props.Get(n)
		if !ok {
			continue
		}
		p.Description = joinNote(p.Description, "(required)")
		props.Set(n, p)
	}
}

func joinNote(desc, note string) string {
	if desc == "" {
		return note
	}
	return desc + " " + note
}

// note renders one keyword Ollama cannot carry as a parenthesised phrase;
// "" drops it.
func note(key string, v json.RawMessage) string {
	val := compact(v)
	var s string
	_ = json.Unmarshal(v, &s)
	switch key {
	case "$schema", "$id", "$comment", "title":
		return ""
	case "additionalProperties":
		if val == "false" || val == "true" {
			return ""
		}
		return "(other keys: " + val + ")"
	case "minimum":
		return "(minimum " + val + ")"
	case "maximum":
		return "(maximum " + val + ")"
	case "exclusiveMinimum":
		return "(greater than " + val + ")"
	case "exclusiveMaximum":
		return "(less than " + val + ")"
	case "multipleOf":
		return "(multiple of " + val + ")"
	case "minLength":
		return "(at least " + val + " characters)"
	case "maxLength":
		return "(at most " + val + " characters)"
	case "minItems":
		return "(at least " + val + " items)"
	case "maxItems":
		return "(at most " + val + " items)"
	case "uniqueItems":
		if val == "true" {
			return "(items unique)"
		}
		return ""
	case "pattern":
		return "(pattern: " + s + ")"
	case "format":
		return "(format: " + s + ")"
	case "default":
		return "(default: " + val + ")"
	case "examples":
		return "(examples: " + val + ")"
	}
	return "(" + key + ": " + val + ")"
}

func compact(v json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return string(v)
	}
	return buf.String()
}
