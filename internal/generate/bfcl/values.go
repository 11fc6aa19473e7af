package bfcl

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// This file turns one parameter's acceptable values (BFCL's possible
// answer) into a matcher spec and the value of the golden call, following
// BFCL's AST checker for the parameter's declared type.

// param is what the checker knows of one parameter.
type param struct {
	typ      string // BFCL type name; "" when the function does not define it
	items    string // element type of an array
	required bool
	defined  bool // the function's properties name it
}

func paramOf(fn *Function, name string) param {
	props, _ := fn.Parameters["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	if p == nil {
		return param{}
	}
	out := param{defined: true}
	out.typ, _ = p["type"].(string)
	if it, ok := p["items"].(map[string]any); ok {
		out.items, _ = it["type"].(string)
	}
	req, _ := fn.Parameters["required"].([]any)
	for _, r := range req {
		if r == name {
			out.required = true
		}
	}
	return out
}

// stringTyped reports whether the checker compares the parameter's value
// as a normalised string (so "" is a value as well as "may be omitted").
func (p param) stringTyped(lang Language) bool {
	switch lang {
	case Java, JavaScript:
		return p.typ == "String" || p.typ == "any" || p.typ == "char"
	}
	return p.typ == "string" || p.typ == "any"
}

// paramSpec returns the matcher spec for a parameter with the acceptable
// values vals, and the golden value (the first acceptable answer; ok false
// when that is to leave the parameter out).
func paramSpec(p param, vals []any, lang Language) (spec any, golden any, ok bool) {
	optional := false
	var alts []any
	first := true
	for _, v := range vals {
		if s, isStr := v.(string); isStr && s == "" {
			if !p.required {
				optional = true
				if first {
					ok, first = false, false
				}
			} else if first && p.stringTyped(lang) {
				// A required string whose first acceptable value is "":
				// only an explicit empty string passes, so the golden
				// carries it.
				golden, ok, first = "", true, false
			}
			if p.stringTyped(lang) {
				alts = append(alts, map[string]any{"$norm": ""})
			}
			continue
		}
		m, g := valueSpec(p, v, lang)
		alts = append(alts, m)
		if first {
			golden, ok, first = g, true, false
		}
	}
	switch len(alts) {
	case 0:
		spec = map[string]any{"$not": map[string]any{"$any": true}} // only "": must be left out
		if !optional {
			spec = map[string]any{"$any": true}
		}
		return spec, nil, false
	case 1:
		spec = alts[0]
	default:
		spec = map[string]any{"$one_of": alts}
	}
	if optional {
		spec = map[string]any{"$absent_or": spec}
	}
	return spec, golden, ok
}

// valueSpec converts one acceptable value.
func valueSpec(p param, v any, lang Language) (spec any, golden any) {
	switch lang {
	case Java:
		return langValue(p, v, javaRender, Java)
	case JavaScript:
		return langValue(p, v, jsRender, JavaScript)
	}
	return pyValue(p.typ, p.items, v)
}

// pyValue follows the checker for Python values: integers strictly
// ($int), floats by value (an int is accepted, as BFCL converts it),
// strings normalised, lists element by element, dicts as nested answers.
// A value of another type than declared is what BFCL calls a variable
// and compares exactly.
func pyValue(typ, items string, v any) (any, any) {
	switch typ {
	case "integer":
		if n, ok := v.(json.Number); ok && isIntText(n) {
			return map[string]any{"$int": plain(n)}, plain(n)
		}
	case "string", "any":
		if s, ok := v.(string); ok {
			return map[string]any{"$norm": s}, s
		}
		// A number answering a string parameter: BFCL compares the value
		// with its Python type, so 2 passes and 2.0 does not.
		if n, ok := v.(json.Number); ok && isIntText(n) {
			return map[string]any{"$int": plain(n)}, plain(n)
		}
	case "array", "tuple", "list":
		if l, ok := v.([]any); ok {
			return pyList(items, l)
		}
	case "dict", "object":
		if m, ok := v.(map[string]any); ok {
			return pyDict(m)
		}
	case "":
		if s, ok := v.(string); ok {
			return map[string]any{"$norm": s}, s
		}
	}
	return plain(v), plain(v)
}

// pyList follows BFCL's list checker: same length and order, string
// elements normalised, others by value; integer elements must be
// integers; dict elements (a list of dicts) are nested answers.
func pyList(items string, l []any) (any, any) {
	spec := make([]any, len(l))
	gold := make([]any, len(l))
	for i, e := range l {
		switch x := e.(type) {
		case string:
			spec[i], gold[i] = map[string]any{"$norm": x}, x
		case json.Number:
			if items == "integer" && isIntText(x) {
				spec[i], gold[i] = map[string]any{"$int": plain(x)}, plain(x)
			} else {
				spec[i], gold[i] = plain(x), plain(x)
			}
		case map[string]any:
			if items == "dict" {
				spec[i], gold[i] = pyDict(x)
			} else {
				spec[i], gold[i] = plain(x), plain(x)
			}
		default:
			spec[i], gold[i] = plain(e), plain(e)
		}
	}
	return spec, gold
}

// pyDict follows BFCL's dict checker: the model's keys must be a subset
// of the answer's (strict_args rejects others), each value one of the
// listed ones (strings normalised), a key missing only where "" is listed.
func pyDict(m map[string]any) (any, any) {
	spec := map[string]any{}
	gold := map[string]any{}
	for _, k := range sortedKeys(m) {
		vals, ok := m[k].([]any)
		if !ok {
			vals = []any{m[k]}
		}
		s, g, has := paramSpec(param{typ: inferType(vals)}, vals, Python)
		spec[k] = s
		if has {
			gold[k] = g
		}
	}
	return spec, gold
}

// inferType names the BFCL type of the first non-"" value, for the values
// inside a dict answer, which the function schema does not type: strings
// are normalised there, other values compared by value.
func inferType(vals []any) string {
	for _, v := range vals {
		if s, ok := v.(string); ok && s == "" {
			continue
		}
		if _, ok := v.(string); ok {
			return "string"
		}
		return "value"
	}
	return "string"
}

func isIntText(n json.Number) bool { return !strings.ContainsAny(string(n), ".eE") }

// ---- Java and JavaScript ----

// A language category passes every value as a string in the language's
// syntax, which BFCL parses back into a value before comparing. toolward
// compares the strings: scalars against the spellings the parser accepts,
// strings normalised, collections normalised against one rendering.

// renderer renders a value of a BFCL type in a language: the accepted
// spellings, the first canonical, and whether they are compared exactly
// (scalars) or normalised (strings, collections).
type renderer func(typ, items string, v any) (spellings []string, exact bool)

func langValue(p param, v any, r renderer, lang Language) (any, any) {
	sp, exact := r(p.typ, p.items, v)
	if !exact {
		alts := make([]any, len(sp))
		for i, s := range sp {
			alts[i] = map[string]any{"$norm": s}
		}
		if lang == Java {
			if re := javaCollectionRE(p.typ, p.items, v); re != "" {
				alts = append(alts, map[string]any{"$regex": re})
			}
		}
		if len(alts) == 1 {
			return alts[0], sp[0]
		}
		return map[string]any{"$one_of": alts}, sp[0]
	}
	if len(sp) == 1 {
		return sp[0], sp[0]
	}
	alts := make([]any, len(sp))
	for i, s := range sp {
		alts[i] = s
	}
	return map[string]any{"$one_of": alts}, sp[0]
}

func numText(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return string(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case int64:
		return strconv.FormatInt(x, 10), true
	}
	return "", false
}

// floatSpellings gives text and, for an integral value, the forms with
// and without ".0".
func floatSpellings(t, suffix string) []string {
	out := []string{t + suffix}
	if isIntText(json.Number(t)) {
		out = append(out, t+".0"+suffix)
	} else if strings.HasSuffix(t, ".0") {
		out = append(out, strings.TrimSuffix(t, ".0")+suffix)
	}
	return out
}

var intTextRE = regexp.MustCompile(`^-?\d+$`)

func javaRender(typ, items string, v any) ([]string, bool) {
	if b, ok := v.(bool); ok && (typ == "boolean" || typ == "Boolean") {
		return []string{strconv.FormatBool(b)}, true
	}
	if t, ok := numText(v); ok {
		switch typ {
		case "integer", "byte", "short", "int":
			if intTextRE.MatchString(t) {
				return []string{t}, true
			}
		case "long":
			if intTextRE.MatchString(t) {
				return []string{t + "L", t + "l"}, true
			}
		case "float":
			return append(floatSpellings(t, "f"), floatSpellings(t, "F")...), true
		case "double":
			return floatSpellings(t, ""), true
		}
	}
	switch typ {
	case "ArrayList", "Array", "HashMap":
		return []string{javaCollection(typ, items, v)}, false
	}
	return []string{javaText(v, false)}, false
}

// javaCollection renders a collection as a Java expression.
func javaCollection(typ, items string, v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaElem(items, e)
		}
		if typ == "Array" {
			return fmt.Sprintf("new %s[]{%s}", javaArrayType(items), strings.Join(parts, ", "))
		}
		if len(parts) == 0 {
			return "new ArrayList<>()"
		}
		return "new ArrayList<>(Arrays.asList(" + strings.Join(parts, ", ") + "))"
	case map[string]any:
		var b strings.Builder
		b.WriteString("new HashMap<String, Object>() {{")
		for _, k := range sortedKeys(x) {
			e := x[k]
			if l, ok := e.([]any); ok { // a nested answer: its first acceptable value
				e = firstValue(l)
			}
			fmt.Fprintf(&b, " put(%s, %s);", strconv.Quote(k), javaElem("", e))
		}
		b.WriteString(" }}")
		return b.String()
	}
	return javaText(v, false)
}

func firstValue(l []any) any {
	for _, e := range l {
		if s, ok := e.(string); !ok || s != "" {
			return e
		}
	}
	return ""
}

func javaElem(items string, e any) string {
	if t, ok := numText(e); ok {
		switch items {
		case "long":
			return t + "L"
		case "float":
			return floatSpellings(t, "f")[0]
		}
		return t
	}
	return javaText(e, true)
}

func javaArrayType(items string) string {
	switch items {
	case "integer", "int":
		return "int"
	case "long", "float", "double", "boolean", "char", "byte", "short", "String":
		return items
	}
	return "Object"
}

// javaText renders a scalar; strings quoted when inside a collection.
func javaText(v any, quote bool) string {
	switch x := v.(type) {
	case string:
		if quote {
			return strconv.Quote(x)
		}
		return x
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	}
	if t, ok := numText(v); ok {
		return t
	}
	b, _ := json.Marshal(plain(v))
	return string(b)
}

func jsRender(typ, items string, v any) ([]string, bool) {
	if b, ok := v.(bool); ok && (typ == "Boolean" || typ == "boolean") {
		return []string{strconv.FormatBool(b)}, true
	}
	if t, ok := numText(v); ok {
		switch typ {
		case "integer":
			if intTextRE.MatchString(t) {
				return []string{t}, true
			}
		case "float", "number":
			return floatSpellings(t, ""), true
		case "Bigint":
			if intTextRE.MatchString(t) {
				return []string{t + "n"}, true
			}
		}
	}
	switch x := v.(type) {
	case []any:
		return []string{jsLiteral(x, true)}, false
	case map[string]any:
		return []string{jsLiteral(x, true), jsLiteral(x, false)}, false
	}
	return []string{javaText(v, false)}, false
}

// jsLiteral renders a JavaScript array or object literal; object keys
// quoted or bare. A nested answer's value lists give their first value.
func jsLiteral(v any, quoteKeys bool) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = jsLiteral(e, quoteKeys)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			e := x[k]
			if l, ok := e.([]any); ok {
				e = firstValue(l)
			}
			key := k
			if quoteKeys {
				key = strconv.Quote(k)
			}
			parts = append(parts, key+": "+jsLiteral(e, quoteKeys))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return javaText(v, true)
}

// javaCollectionRE is a regular expression for the spellings of a Java
// collection that BFCL's Java parser reads as v: any type parameters,
// any spacing, ArrayList as Arrays.asList(…) or {{ add(…); }}, HashMap
// entries in sorted key order. "" when v is not a collection.
func javaCollectionRE(typ, items string, v any) string {
	const ws = `\s*`
	tparams := `<[\w\s,<>?]*>`
	switch x := v.(type) {
	case []any:
		elems := make([]string, len(x))
		for i, e := range x {
			elems[i] = javaElemRE(items, e)
		}
		switch typ {
		case "Array":
			return `(?i)^\s*new\s+\w+\s*\[\s*\]\s*\{` + ws + strings.Join(elems, ws+","+ws) + ws + `\}\s*;?\s*$`
		case "ArrayList":
			asList := `new\s+ArrayList` + tparams + ws + `\(` + ws + `Arrays\.asList\(` + ws + strings.Join(elems, ws+","+ws) + ws + `\)` + ws + `\)`
			var adds strings.Builder
			for _, e := range elems {
				adds.WriteString(`add\(` + ws + e + ws + `\)` + ws + `;` + ws)
			}
			addForm := `new\s+ArrayList` + tparams + ws + `\(` + ws + `\)` + ws + `\{` + ws + `\{` + ws + adds.String() + `\}` + ws + `\}`
			if len(x) == 0 {
				addForm = `new\s+ArrayList` + tparams + ws + `\(` + ws + `\)`
			}
			return `(?i)^\s*(?:` + asList + `|` + addForm + `)\s*;?\s*$`
		}
	case map[string]any:
		if typ != "HashMap" {
			return ""
		}
		var puts strings.Builder
		for _, k := range sortedKeys(x) {
			e := x[k]
			if l, ok := e.([]any); ok {
				e = firstValue(l)
			}
			puts.WriteString(`put\(` + ws + regexp.QuoteMeta(strconv.Quote(k)) + ws + `,` + ws + javaElemRE("", e) + ws + `\)` + ws + `;` + ws)
		}
		return `(?i)^\s*new\s+HashMap` + tparams + ws + `\(` + ws + `\)` + ws + `\{` + ws + `\{?` + ws + puts.String() + `\}?` + ws + `\}\s*;?\s*$`
	}
	return ""
}

// javaElemRE matches one element or map value as Java source.
func javaElemRE(items string, e any) string {
	if t, ok := numText(e); ok {
		q := regexp.QuoteMeta(t)
		switch {
		case items == "long":
			return q + `[lL]`
		case items == "float":
			return q + `(?:\.0+)?[fF]`
		case items == "double":
			return q + `(?:\.0+)?`
		case items == "integer" || items == "int" || items == "short" || items == "byte":
			return q
		case isIntText(json.Number(t)):
			return q + `[lL]?` // a value parsed without a type: int or long
		}
		return q + `[fF]?`
	}
	if s, ok := e.(string); ok {
		return regexp.QuoteMeta(strconv.Quote(s))
	}
	return regexp.QuoteMeta(javaText(e, true))
}
