package schema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/toolward/toolward/matchers"
)

// caseSchemaJSON is the case JSON Schema generated from #Case
// (written by `go generate ./schema/...`, kept current by
// TestGeneratedFilesCurrent).
//
//go:embed case.schema.json
var caseSchemaJSON []byte

// CaseJSONSchema returns the JSON Schema of case files, for editors
// (`toolward schema --jsonschema`, and the schema line `toolward init`
// and the BFCL importer write).
func CaseJSONSchema() []byte { return slices.Clone(caseSchemaJSON) }

// The loader checks every case against the case JSON Schema with
// santhosh-tekuri/jsonschema (about 17 µs of BenchmarkParseCase's case,
// a tenth of its parse) and words each of the
// library's errors itself (formatIssues), at the YAML position of the
// value it is about. expect is left to matchers.CompileExpect, which
// checks all of it with messages of its own: the schema sees an empty
// expect in its place, and the goldens of when entries at their index.

// caseFormat is the compiled schema and its JSON document (for the
// names of allowed fields and one-of forms, which errors do not carry).
var caseFormat = sync.OnceValues(func() (*caseSchema, error) { return compileCaseSchema(caseSchemaJSON) })

func compileCaseSchema(src []byte) (*caseSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	const url = "case.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	return &caseSchema{s, doc}, nil
}

type caseSchema struct {
	compiled *jsonschema.Schema
	doc      any
}

// formatIssues checks a case mapping against the case JSON Schema.
func formatIssues(m map[string]any) []caseIssue {
	s, err := caseFormat()
	if err != nil {
		return []caseIssue{{msg: "the embedded case.schema.json does not compile: " + err.Error()}}
	}
	return s.check(m)
}

// check checks a case mapping against s.
func (s *caseSchema) check(m map[string]any) []caseIssue {
	err := s.compiled.Validate(withoutExpect(m))
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []caseIssue{{msg: err.Error()}}
	}
	is := s.issues(m, ve)
	// A misspelt required field is one mistake: report the unknown field
	// with its suggestion, not also the missing one.
	suggested := map[string]bool{}
	for _, i := range is {
		if i.suggests != "" {
			suggested[pathString(append(slices.Clone(i.elems[:len(i.elems)-1]), i.suggests))] = true
		}
	}
	return slices.DeleteFunc(is, func(i caseIssue) bool {
		return slices.ContainsFunc(i.missing, func(f string) bool { return suggested[pathString(append(slices.Clone(i.elems), f))] })
	})
}

// withoutExpect is m with an empty expect, but for the goldens of its
// when entries, at their index.
func withoutExpect(m map[string]any) map[string]any {
	e, ok := m["expect"].(map[string]any)
	if !ok {
		return m
	}
	out := maps.Clone(m)
	_, goldens := splitWhenGoldens(e)
	if goldens == nil {
		out["expect"] = map[string]any{}
		return out
	}
	whens := make([]any, slices.Max(slices.Collect(maps.Keys(goldens)))+1)
	for i := range whens {
		whens[i] = map[string]any{}
		if g, ok := goldens[i]; ok {
			whens[i] = map[string]any{"golden": g}
		}
	}
	out["expect"] = map[string]any{"when": whens}
	return out
}

// issues words the errors of the tree ve, whose instance locations are
// in the case v.
func (s *caseSchema) issues(v any, ve *jsonschema.ValidationError) []caseIssue {
	at, val := elemsOf(v, ve.InstanceLocation)
	issue := func(format string, args ...any) []caseIssue {
		return []caseIssue{{elems: at, msg: fmt.Sprintf(format, args...)}}
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		key := "anyOf"
		if _, ok := k.(*kind.OneOf); ok {
			key = "oneOf"
		}
		forms := s.formNames(ve.SchemaURL, key)
		if o, ok := k.(*kind.OneOf); ok && len(o.Subschemas) > 1 {
			if len(forms) > 1 {
				return []caseIssue{{elems: append(slices.Clone(at), forms[o.Subschemas[1]]), msg: fmt.Sprintf("want %s or %s, not both", forms[o.Subschemas[0]], forms[o.Subschemas[1]])}}
			}
			return issue("matches more than one of its forms: give only one of them")
		}
		// None fits: if every form is a field to give, say which;
		// else the mistakes of the form the value came closest to.
		if len(forms) == len(ve.Causes) && len(forms) > 1 {
			quoted := make([]string, len(forms))
			for i, f := range forms {
				quoted[i] = strconv.Quote(f)
			}
			return []caseIssue{{elems: at, missing: forms, msg: fmt.Sprintf("missing field %s (or %s)", quoted[0], strings.Join(quoted[1:], " or "))}}
		}
		var best []caseIssue
		for _, c := range ve.Causes {
			if is := s.issues(v, c); best == nil || closer(is, best) {
				best = is
			}
		}
		return best
	case *kind.Required:
		var out []caseIssue
		for _, f := range k.Missing {
			out = append(out, caseIssue{elems: at, missing: []string{f}, msg: fmt.Sprintf("missing field %q", f)})
		}
		return out
	case *kind.AdditionalProperties:
		allowed := s.fieldNames(ve.SchemaURL)
		var out []caseIssue
		for _, f := range k.Properties {
			i := caseIssue{elems: append(slices.Clone(at), f), msg: fmt.Sprintf("unknown field %q", f)}
			if sug := suggest(f, allowed); sug != "" {
				i.msg += fmt.Sprintf(" (did you mean %q?)", sug)
				i.suggests = sug
			}
			out = append(out, i)
		}
		return out
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = s.typeWords(ve.SchemaURL, w)
		}
		return issue("want %s, got %s", strings.Join(want, " or "), showVal(val))
	case *kind.Enum:
		alts := make([]string, len(k.Want))
		for i, e := range k.Want {
			alts[i] = showVal(e)
		}
		return issue("want one of %s, got %s", strings.Join(alts, ", "), showVal(val))
	case *kind.Const:
		return issue("want %s, got %s", showVal(k.Want), showVal(val))
	case *kind.Pattern:
		if w, ok := patternWords[k.Want]; ok {
			return issue("want %s, got %q", w, k.Got)
		}
		return issue("want a string matching %s, got %q", k.Want, k.Got)
	case *kind.MinLength:
		return issue("want a non-empty string, got %s", showVal(val))
	case *kind.MinItems:
		return issue("want a non-empty list")
	case *kind.Minimum:
		return issue("want at least %s, got %s", k.Want.RatString(), showVal(val))
	case *kind.ExclusiveMinimum:
		return issue("want more than %s, got %s", k.Want.RatString(), showVal(val))
	case *kind.Maximum:
		return issue("want at most %s, got %s", k.Want.RatString(), showVal(val))
	case *kind.ExclusiveMaximum:
		return issue("want less than %s, got %s", k.Want.RatString(), showVal(val))
	case *kind.Not, *kind.FalseSchema:
		return issue("not allowed here")
	}
	if len(ve.Causes) == 0 {
		return issue("%v", ve.ErrorKind)
	}
	var out []caseIssue
	for _, c := range ve.Causes {
		out = append(out, s.issues(v, c)...)
	}
	return out
}

// patternWords name the patterns of the case format in messages.
var patternWords = map[string]string{
	reID.String():              "an id (letters, digits, _ . : / -)",
	matchers.ToolName.String(): "a tool name",
}

var kindWords = map[string]string{"null": "null", "boolean": "a boolean", "string": "a string", "integer": "a whole number",
	"number": "a number", "array": "a list", "object": "a mapping"}

// node returns the schema object at the JSON pointer of url, following
// a $ref there.
func (s *caseSchema) node(url string) map[string]any {
	_, ptr, _ := strings.Cut(url, "#")
	var n any = s.doc
	for _, p := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if p == "" {
			continue
		}
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		switch x := n.(type) {
		case map[string]any:
			n = x[p]
		case []any:
			i, _ := strconv.Atoi(p)
			if i < 0 || i >= len(x) {
				return nil
			}
			n = x[i]
		}
	}
	m, _ := n.(map[string]any)
	if ref, ok := m["$ref"].(string); ok && len(m) <= 2 {
		return s.node(ref)
	}
	return m
}

// fieldNames are the properties of the schema object at url.
func (s *caseSchema) fieldNames(url string) []string {
	props, _ := s.node(url)["properties"].(map[string]any)
	return slices.Sorted(maps.Keys(props))
}

// formNames names each form of the key (oneOf or anyOf) of the schema
// at url by the one field the form requires; nil unless every form is
// such.
func (s *caseSchema) formNames(url, key string) []string {
	forms, _ := s.node(url)[key].([]any)
	var out []string
	for _, f := range forms {
		fm, _ := f.(map[string]any)
		req, _ := fm["required"].([]any)
		if len(req) != 1 {
			return nil
		}
		name, _ := req[0].(string)
		out = append(out, name)
	}
	return out
}

// typeWords names the JSON type typ of the schema at url in messages:
// with what the schema says of its strings, or of a list's items.
func (s *caseSchema) typeWords(url, typ string) string {
	n := s.node(url)
	pattern, _ := n["pattern"].(string)
	switch {
	case typ == "string" && patternWords[pattern] != "":
		return patternWords[pattern]
	case typ == "string" && n["minLength"] != nil:
		return "a non-empty string"
	case typ == "array":
		items, _ := n["items"].(map[string]any)
		switch {
		case items["type"] == "string" && items["pattern"] == nil:
			return "a list of strings"
		case items["$ref"] == "#/definitions/Name":
			return "a list of tool names"
		}
	}
	return kindWords[typ]
}

// suggest is matchers.Suggest, but none when another field is as
// close: the schema's fields have no order to choose between them by.
func suggest(f string, allowed []string) string {
	sug := matchers.Suggest(f, allowed)
	reversed := slices.Clone(allowed)
	slices.Reverse(reversed)
	if matchers.Suggest(f, reversed) != sug {
		return ""
	}
	return sug
}

// elemsOf turns an instance location into path elements of v (list
// indexes as ints) and returns the value there.
func elemsOf(v any, loc []string) ([]any, any) {
	out := make([]any, 0, len(loc))
	for _, p := range loc {
		if l, ok := v.([]any); ok {
			i, _ := strconv.Atoi(p)
			out, v = append(out, i), nil
			if i >= 0 && i < len(l) {
				v = l[i]
			}
			continue
		}
		m, _ := v.(map[string]any)
		out, v = append(out, p), m[p]
	}
	return out, v
}

// closer reports whether issues a point deeper into the value than b
// (the alternative got further), or as deep with fewer issues.
func closer(a, b []caseIssue) bool {
	da, db := depth(a), depth(b)
	if da != db {
		return da > db
	}
	return len(a) < len(b)
}

func depth(is []caseIssue) int {
	d := 0
	for _, i := range is {
		d = max(d, len(i.elems))
	}
	return d
}

func showVal(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
