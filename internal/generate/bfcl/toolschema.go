package bfcl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
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

// InputSchema returns the JSON Schema BFCL sends a function-calling model
// of OpenAI style for a function's parameters, and nothing more: BFCL's
// language pre-processing (_func_doc_language_specific_pre_processing in
// bfcl_eval/utils.py: a Java or JavaScript parameter becomes a string
// whose description names its type), then convert_to_tool with
// GORILLA_TO_OPENAPI (bfcl_eval/model_handler/utils.py): parameters.type
// becomes "object" and the property types are mapped by
// _cast_to_openai_type. Every other key (default, optional, required,
// enum, …) is kept as BFCL's data writes it.
func InputSchema(fn *Function, lang Language) map[string]any {
	s, _ := deepCopy(fn.Parameters).(map[string]any)
	if s == nil {
		s = map[string]any{}
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	if lang != Python {
		langStrings(props, fn.rawProperties(), lang)
	}
	s["type"] = "object"
	s["properties"] = castTypes(props)
	return s
}

// deepCopy copies a decoded JSON value, so the conversion never changes
// the entry it reads.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = deepCopy(x)
		}
		return l
	}
	return v
}

// mapType is a BFCL type name through GORILLA_TO_OPENAPI; a missing or
// unknown name becomes "string", as _cast_to_openai_type does for a
// property (for an items type BFCL would stop with a KeyError; BFCL's
// data has none).
func mapType(t any) string {
	if s, ok := t.(string); ok {
		if jt, ok := openAPIType[s]; ok {
			return jt
		}
	}
	return "string"
}

// castTypes is BFCL's _cast_to_openai_type over a properties mapping, in
// place: each property's type is mapped (a float also gets format float
// and a note in its description); an array or object property's own
// properties are cast in turn, or else its items' type is mapped, and
// then the type of the items' items (an array of arrays) or the items'
// properties (an array of objects). BFCL goes no deeper.
func castTypes(props map[string]any) map[string]any {
	for _, p := range props {
		p, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if p["type"] == "float" {
			p["format"] = "float"
			desc, _ := p["description"].(string)
			p["description"] = desc + " This is a float type value."
		}
		p["type"] = mapType(p["type"])
		if p["type"] != "array" && p["type"] != "object" {
			continue
		}
		if sub, ok := p["properties"].(map[string]any); ok {
			castTypes(sub)
		} else if it, ok := p["items"].(map[string]any); ok {
			it["type"] = mapType(it["type"])
			if sub, ok := it["items"].(map[string]any); ok && it["type"] == "array" {
				sub["type"] = mapType(sub["type"])
			} else if sub, ok := it["properties"].(map[string]any); ok && it["type"] == "object" {
				castTypes(sub)
			}
		}
	}
	return props
}

// langStrings is BFCL's pre-processing of a Java or JavaScript function's
// parameters, in place: each becomes a string whose description says
// which type its value is written in; a list's items (Java ArrayList or
// Array, JavaScript array) and a JavaScript dict's properties move into
// the description. Other keys stay.
func langStrings(props map[string]any, raw map[string]json.RawMessage, lang Language) {
	langName := "Java"
	if lang == JavaScript {
		langName = "JavaScript"
	}
	for k, p := range props {
		p, ok := p.(map[string]any)
		if !ok {
			continue
		}
		desc, _ := p["description"].(string)
		bt, _ := p["type"].(string)
		if bt == "any" {
			desc += fmt.Sprintf(" This parameter can be of any type of %s object in string representation.", langName)
		} else {
			desc += fmt.Sprintf(" This is %s %v type parameter in string representation.", langName, p["type"])
		}
		isList := bt == "array"
		if lang == Java {
			isList = bt == "ArrayList" || bt == "Array"
		}
		if it, ok := p["items"].(map[string]any); ok && isList {
			desc += fmt.Sprintf(" The list elements are of type %v; they are not in string representation.", it["type"])
			delete(p, "items")
		}
		if sub, ok := p["properties"]; ok && lang == JavaScript && bt == "dict" {
			var rp map[string]json.RawMessage
			json.Unmarshal(raw[k], &rp)
			text, ok := rp["properties"]
			if !ok {
				text, _ = json.Marshal(sub)
			}
			desc += " The dictionary entries have the following schema; they are not in string representation. " + pyJSON(text)
			delete(p, "properties")
		}
		p["description"] = desc
		p["type"] = "string"
	}
}

// rawProperties is the properties mapping of fn's parameters as BFCL's
// file writes it, each property's JSON text in its order (nil for a
// Function not read from a file).
func (fn *Function) rawProperties() map[string]json.RawMessage {
	var p struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	json.Unmarshal(fn.rawParams, &p)
	return p.Properties
}

// pyJSON writes JSON text as Python's json.dumps does with its defaults:
// keys in their order, ", " and ": " between items, and every character
// outside ASCII escaped.
func pyJSON(text []byte) string {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var b strings.Builder
	type level struct {
		object bool
		n      int // items (keys and values) written so far
	}
	var open []level
	for {
		t, err := dec.Token()
		if err != nil {
			return b.String()
		}
		if d, ok := t.(json.Delim); ok && (d == '}' || d == ']') {
			open = open[:len(open)-1]
			b.WriteRune(rune(d))
			continue
		}
		if len(open) > 0 {
			l := &open[len(open)-1]
			if l.object && l.n%2 == 1 {
				b.WriteString(": ")
			} else if l.n > 0 {
				b.WriteString(", ")
			}
			l.n++
		}
		switch t := t.(type) {
		case json.Delim:
			b.WriteRune(rune(t))
			open = append(open, level{object: t == '{'})
		case string:
			b.WriteString(pyString(t))
		case json.Number:
			b.WriteString(t.String())
		case bool:
			b.WriteString(strconv.FormatBool(t))
		case nil:
			b.WriteString("null")
		}
	}
}

// pyString quotes s as json.dumps does (ensure_ascii).
func pyString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r > 0x7e: // DEL too, as Python does
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
