package bfcl

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// openAPIType is BFCL's GORILLA_TO_OPENAPI mapping from its type names to
// JSON Schema types; a type not listed becomes "string", as in BFCL.
var openAPIType = map[string]string{
	"integer": "integer", "number": "number", "float": "number", "string": "string",
	"boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
	"dict": "object", "object": "object", "tuple": "array", "any": "string",
	"byte": "integer", "short": "integer", "long": "integer", "double": "number", "char": "string",
	"ArrayList": "array", "Array": "array", "HashMap": "object", "Hashtable": "object",
	"Queue": "array", "Stack": "array", "Any": "string", "String": "string", "Bigint": "integer",
}

// languageHint is what BFCL appends to every function description.
func languageHint(l Language) string {
	switch l {
	case Java:
		return " Note that the provided function is in Java 8 SDK syntax."
	case JavaScript:
		return " Note that the provided function is in JavaScript syntax."
	}
	return " Note that the provided function is in Python 3 syntax."
}

var badNameChar = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// ToolName maps a BFCL function name to a tool name a model API accepts
// (^[a-zA-Z0-9_-]{1,64}$): dots become underscores, as BFCL does for
// function-calling models, and so does any other character outside the
// set; a longer name is cut to 64.
func ToolName(name string) string {
	n := badNameChar.ReplaceAllString(name, "_")
	if n == "" {
		n = "_"
	}
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// InputSchema converts a function's BFCL parameters to the JSON Schema
// the model is offered, the way BFCL prepares them for function-calling
// models: Python types through GORILLA_TO_OPENAPI (float becomes number
// with format float and a note in the description); Java and JavaScript
// parameters become strings whose description names the language type,
// because their values are written in that language's syntax. Keywords
// the bundled server does not support (e.g. BFCL's "optional") are left
// out.
func InputSchema(params map[string]any, lang Language) map[string]any {
	props, _ := params["properties"].(map[string]any)
	out := map[string]any{}
	for _, k := range sortedKeys(props) {
		p, _ := props[k].(map[string]any)
		if p == nil {
			p = map[string]any{}
		}
		if lang == Python {
			out[k] = pySchema(p)
		} else {
			out[k] = langSchema(p, lang)
		}
	}
	s := map[string]any{"type": "object", "properties": out}
	if req := requiredIn(params, out); len(req) > 0 {
		s["required"] = req
	}
	return s
}

// requiredIn returns the names in s's required list that props has.
func requiredIn(s map[string]any, props map[string]any) []any {
	var req []any
	l, _ := s["required"].([]any)
	for _, r := range l {
		if name, ok := r.(string); ok {
			if _, ok := props[name]; ok && !slices.Contains(req, any(name)) {
				req = append(req, name)
			}
		}
	}
	return req
}

// pySchema converts one Python-category property schema.
func pySchema(p map[string]any) map[string]any {
	out := map[string]any{}
	desc, _ := p["description"].(string)
	bt, _ := p["type"].(string)
	jt, ok := openAPIType[bt]
	if !ok {
		jt = "string"
	}
	if bt == "float" {
		out["format"] = "float"
		desc += " This is a float type value."
	}
	out["type"] = jt
	if desc != "" {
		out["description"] = desc
	}
	copyDocKeys(out, p)
	switch jt {
	case "object":
		if sub, ok := p["properties"].(map[string]any); ok {
			props := map[string]any{}
			for _, k := range sortedKeys(sub) {
				sp, _ := sub[k].(map[string]any)
				if sp == nil {
					sp = map[string]any{}
				}
				props[k] = pySchema(sp)
			}
			out["properties"] = props
			if req := requiredIn(p, props); len(req) > 0 {
				out["required"] = req
			}
		}
	case "array":
		if it, ok := p["items"].(map[string]any); ok {
			out["items"] = pySchema(it)
		}
	}
	return out
}

// langSchema converts one Java or JavaScript property: always a string,
// described as BFCL describes it.
func langSchema(p map[string]any, lang Language) map[string]any {
	desc, _ := p["description"].(string)
	bt, _ := p["type"].(string)
	langName := "Java"
	if lang == JavaScript {
		langName = "JavaScript"
	}
	if bt == "any" {
		desc += fmt.Sprintf(" This parameter can be of any type of %s object in string representation.", langName)
	} else {
		desc += fmt.Sprintf(" This is %s %s type parameter in string representation.", langName, bt)
	}
	if bt == "ArrayList" || bt == "Array" || bt == "array" {
		if it, ok := p["items"].(map[string]any); ok {
			desc += fmt.Sprintf(" The list elements are of type %v; they are not in string representation.", it["type"])
		}
	}
	if lang == JavaScript && bt == "dict" {
		if sub, ok := p["properties"]; ok {
			b, _ := json.Marshal(sub)
			desc += " The dictionary entries have the following schema; they are not in string representation. " + string(b)
		}
	}
	out := map[string]any{"type": "string", "description": strings.TrimSpace(desc)}
	if d, ok := p["default"]; ok {
		if s, ok := d.(string); ok {
			out["default"] = s
		}
	}
	return out
}

// copyDocKeys copies the keywords that carry over unchanged and that the
// bundled server supports.
func copyDocKeys(out, p map[string]any) {
	if e, ok := p["enum"].([]any); ok && len(e) > 0 {
		out["enum"] = e
	}
	if d, ok := p["default"]; ok && d != nil {
		if d, ok := fitDefault(out["type"], d); ok {
			out["default"] = d
		}
	}
}

// fitDefault returns a BFCL default as a value of the property's JSON
// type, or false when it is not one (it is then left out of the offered
// schema): BFCL writes Python booleans as the strings "True" and
// "False". The server does not check the default (unchecked_args).
func fitDefault(typ any, d any) (any, bool) {
	switch typ {
	case "boolean":
		if s, ok := d.(string); ok {
			switch strings.ToLower(s) {
			case "true":
				return true, true
			case "false":
				return false, true
			}
		}
		_, ok := d.(bool)
		return d, ok
	case "string":
		_, ok := d.(string)
		return d, ok
	case "integer", "number":
		switch n := d.(type) {
		case float64:
			return d, typ == "number" || n == float64(int64(n))
		case int, int64:
			return d, true
		}
		return d, false
	case "array":
		_, ok := d.([]any)
		return d, ok
	case "object":
		_, ok := d.(map[string]any)
		return d, ok
	}
	return d, true
}
