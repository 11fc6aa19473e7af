package mcpserver

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"gopkg.in/yaml.v3"
)

//go:embed tools.yaml
var toolsYAML []byte

// ToolDef is one tool as data: the format of tools.yaml and of catalog
// files (fixtures/catalog/*.yaml, --catalog).
type ToolDef struct {
	Name         string         `yaml:"name" json:"name"`
	Domain       string         `yaml:"domain" json:"domain,omitempty"`
	Description  string         `yaml:"description" json:"description"`
	InputSchema  map[string]any `yaml:"input_schema" json:"input_schema"`
	OutputSchema map[string]any `yaml:"output_schema" json:"output_schema,omitempty"`
	Annotations  Annotations    `yaml:"annotations" json:"annotations"`
	// Result is a Go text/template over the call's arguments map; catalog
	// tools answer with it. Real tools have Go handlers instead.
	Result string `yaml:"result" json:"result,omitempty"`

	where string             // file:line of the definition, for errors
	tmpl  *template.Template // parsed Result
}

// Annotations are the MCP behaviour hints. A hint left out of a file
// takes the default of a harmless lookup: read-only, not destructive,
// idempotent, closed-world.
type Annotations struct {
	ReadOnly    *bool `yaml:"readOnlyHint" json:"readOnlyHint,omitempty"`
	Destructive *bool `yaml:"destructiveHint" json:"destructiveHint,omitempty"`
	Idempotent  *bool `yaml:"idempotentHint" json:"idempotentHint,omitempty"`
	OpenWorld   *bool `yaml:"openWorldHint" json:"openWorldHint,omitempty"`
}

func orDefault(p *bool, def bool) *bool {
	if p != nil {
		v := *p
		return &v
	}
	return &def
}

// mcp returns the annotations with every hint set explicitly.
func (a Annotations) mcp() mcp.ToolAnnotation {
	return mcp.ToolAnnotation{
		ReadOnlyHint:    orDefault(a.ReadOnly, true),
		DestructiveHint: orDefault(a.Destructive, false),
		IdempotentHint:  orDefault(a.Idempotent, true),
		OpenWorldHint:   orDefault(a.OpenWorld, false),
	}
}

// MCPTool converts the definition to the tool a client lists.
func (d *ToolDef) MCPTool() mcp.Tool {
	in, _ := json.Marshal(d.InputSchema)
	t := mcp.Tool{
		Name:           d.Name,
		Description:    d.Description,
		RawInputSchema: in,
		Annotations:    d.Annotations.mcp(),
	}
	if d.OutputSchema != nil {
		t.RawOutputSchema, _ = json.Marshal(d.OutputSchema)
	}
	return t
}

// ParseToolDefs reads a YAML list of tool definitions from data; source
// names the file in errors. Each definition is validated (see validate).
func ParseToolDefs(data []byte, source string) ([]*ToolDef, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %v", source, err)
	}
	if len(doc.Content) > 0 && doc.Content[0].Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: want a YAML list of tools (- name: …)", source, doc.Content[0].Line)
	}
	var defs []*ToolDef
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&defs); err != nil && err != io.EOF {
		msg := strings.ReplaceAll(err.Error(), "in type mcpserver.ToolDef", "(known fields: name, domain, description, input_schema, output_schema, annotations, result)")
		return nil, fmt.Errorf("%s: %s", source, msg)
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("%s: no tools (want a YAML list of tools)", source)
	}
	for i, d := range defs {
		if d == nil {
			return nil, fmt.Errorf("%s: tool #%d is empty", source, i+1)
		}
		d.where = source
		if i < len(doc.Content[0].Content) {
			d.where = fmt.Sprintf("%s:%d", source, doc.Content[0].Content[i].Line)
		}
		// JSON numbers are float64 on the wire; make the schemas agree.
		d.InputSchema = jsonRoundTrip(d.InputSchema)
		d.OutputSchema = jsonRoundTrip(d.OutputSchema)
		if err := d.validate(); err != nil {
			name := d.Name
			if name == "" {
				name = fmt.Sprintf("#%d", i+1)
			}
			return nil, fmt.Errorf("%s: tool %s: %v", d.where, name, err)
		}
	}
	return defs, nil
}

func jsonRoundTrip(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return m // checkSchema reports what is wrong with it
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return m
	}
	return out
}

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// validate checks a definition on its own; name clashes are checked when
// catalogs are combined.
func (d *ToolDef) validate() error {
	if !toolNameRE.MatchString(d.Name) {
		return fmt.Errorf("name %q must be 1-64 letters, digits, _ or -", d.Name)
	}
	if strings.TrimSpace(d.Description) == "" {
		return fmt.Errorf("description is empty")
	}
	d.Description = strings.TrimSpace(d.Description)
	if d.InputSchema == nil {
		return fmt.Errorf("input_schema is missing")
	}
	if err := checkSchema(d.InputSchema, "input_schema", true); err != nil {
		return err
	}
	if d.OutputSchema != nil {
		if err := checkSchema(d.OutputSchema, "output_schema", true); err != nil {
			return err
		}
	}
	if d.Result != "" {
		t, err := template.New(d.Name).Option("missingkey=zero").Parse(d.Result)
		if err != nil {
			return fmt.Errorf("result template: %v", err)
		}
		d.tmpl = t
		if _, err := d.render(sampleArgs(d.InputSchema)); err != nil {
			return fmt.Errorf("result template fails on sample arguments: %v", err)
		}
	}
	return nil
}

// render executes the result template over args.
func (d *ToolDef) render(args map[string]any) (string, error) {
	var b strings.Builder
	if err := d.tmpl.Execute(&b, args); err != nil {
		return "", err
	}
	return b.String(), nil
}

// sampleArgs builds a plausible argument map for the required
// properties, to try a result template at load time.
func sampleArgs(schema map[string]any) map[string]any {
	args := map[string]any{}
	props, _ := schema["properties"].(map[string]any)
	for _, r := range stringList(schema["required"]) {
		p, _ := props[r].(map[string]any)
		if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
			args[r] = enum[0]
			continue
		}
		switch p["type"] {
		case "integer", "number":
			args[r] = 1.0
		case "boolean":
			args[r] = true
		case "array":
			args[r] = []any{"x"}
		case "object":
			args[r] = map[string]any{}
		default:
			args[r] = "x"
		}
	}
	return args
}

func stringList(v any) []string {
	var out []string
	switch l := v.(type) {
	case []any:
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = l
	}
	return out
}

// schemaKeywords are the JSON Schema keywords a tool schema may use. The
// validating ones are enforced on every call; the rest only document.
var schemaKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "enum": true, "items": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
	"additionalProperties": true,
	"description":          true, "title": true, "default": true, "examples": true, "format": true,
}

var schemaTypes = map[string]bool{"object": true, "string": true, "integer": true, "number": true, "boolean": true, "array": true, "null": true}

// checkSchema validates a schema against the subset this server enforces.
func checkSchema(s map[string]any, path string, top bool) error {
	for _, k := range sortedKeys(s) {
		if !schemaKeywords[k] {
			return fmt.Errorf("%s: unsupported JSON Schema keyword %q", path, k)
		}
	}
	typ, _ := s["type"].(string)
	if !schemaTypes[typ] {
		return fmt.Errorf("%s: type must be one of object, string, integer, number, boolean, array, null (got %v)", path, s["type"])
	}
	if top && typ != "object" {
		return fmt.Errorf("%s: type must be object", path)
	}
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems"} {
		if v, ok := s[k]; ok {
			if _, ok := toFloat(v); !ok {
				return fmt.Errorf("%s: %s must be a number", path, k)
			}
		}
	}
	if e, ok := s["enum"]; ok {
		if l, ok := e.([]any); !ok || len(l) == 0 {
			return fmt.Errorf("%s: enum must be a non-empty list", path)
		}
	}
	if d, ok := s["description"]; ok {
		if _, ok := d.(string); !ok {
			return fmt.Errorf("%s: description must be a string", path)
		}
	}
	switch typ {
	case "object":
		props := map[string]any{}
		if p, ok := s["properties"]; ok && p != nil {
			m, ok := p.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: properties must be a mapping", path)
			}
			props = m
		}
		s["properties"] = props
		for _, name := range sortedKeys(props) {
			ps, ok := props[name].(map[string]any)
			if !ok {
				return fmt.Errorf("%s.properties.%s: must be a schema mapping", path, name)
			}
			if err := checkSchema(ps, path+".properties."+name, false); err != nil {
				return err
			}
		}
		if r, ok := s["required"]; ok {
			l, ok := r.([]any)
			if !ok {
				return fmt.Errorf("%s: required must be a list of property names", path)
			}
			for _, x := range l {
				name, ok := x.(string)
				if !ok {
					return fmt.Errorf("%s: required must be a list of property names", path)
				}
				if _, ok := props[name]; !ok {
					return fmt.Errorf("%s: required property %q is not in properties", path, name)
				}
			}
		}
		if ap, ok := s["additionalProperties"]; ok {
			if _, ok := ap.(bool); !ok {
				return fmt.Errorf("%s: additionalProperties must be true or false", path)
			}
		}
	case "array":
		if it, ok := s["items"]; ok {
			m, ok := it.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: items must be a schema mapping", path)
			}
			if err := checkSchema(m, path+".items", false); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// checkArgs validates call arguments against a schema from checkSchema and
// fills in defaults of absent top-level properties. The error names the
// offending argument.
func checkArgs(schema map[string]any, args map[string]any) error {
	props, _ := schema["properties"].(map[string]any)
	for _, r := range stringList(schema["required"]) {
		if v, ok := args[r]; !ok || v == nil {
			return fmt.Errorf("missing required argument %q", r)
		}
	}
	for _, name := range sortedKeys(args) {
		p, ok := props[name].(map[string]any)
		if !ok {
			// As in JSON Schema, undeclared properties are allowed unless
			// additionalProperties is false.
			if ap, set := schema["additionalProperties"].(bool); set && !ap {
				return fmt.Errorf("unknown argument %q (accepted: %s)", name, strings.Join(sortedKeys(props), ", "))
			}
			continue
		}
		if err := checkValue(p, args[name], name); err != nil {
			return err
		}
	}
	for name, p := range props {
		if _, ok := args[name]; !ok {
			if d, ok := p.(map[string]any)["default"]; ok {
				args[name] = d
			}
		}
	}
	return nil
}

func checkValue(s map[string]any, v any, path string) error {
	typ, _ := s["type"].(string)
	bad := func(want string) error {
		return fmt.Errorf("argument %q must be %s, got %s", path, want, jsonType(v))
	}
	switch typ {
	case "string":
		str, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		n := float64(utf8.RuneCountInString(str))
		if m, ok := toFloat(s["minLength"]); ok && n < m {
			return fmt.Errorf("argument %q must be at least %v characters", path, m)
		}
		if m, ok := toFloat(s["maxLength"]); ok && n > m {
			return fmt.Errorf("argument %q must be at most %v characters, got %v", path, m, n)
		}
	case "integer", "number":
		f, ok := toFloat(v)
		if !ok {
			return bad("a number")
		}
		if typ == "integer" && (f != math.Trunc(f) || math.Abs(f) > 1<<53) {
			return bad("an integer")
		}
		if m, ok := toFloat(s["minimum"]); ok && f < m {
			return fmt.Errorf("argument %q must be at least %v, got %v", path, m, f)
		}
		if m, ok := toFloat(s["maximum"]); ok && f > m {
			return fmt.Errorf("argument %q must be at most %v, got %v", path, m, f)
		}
		if m, ok := toFloat(s["exclusiveMinimum"]); ok && f <= m {
			return fmt.Errorf("argument %q must be greater than %v, got %v", path, m, f)
		}
		if m, ok := toFloat(s["exclusiveMaximum"]); ok && f >= m {
			return fmt.Errorf("argument %q must be less than %v, got %v", path, m, f)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return bad("true or false")
		}
	case "array":
		l, ok := v.([]any)
		if !ok {
			return bad("an array")
		}
		if m, ok := toFloat(s["minItems"]); ok && float64(len(l)) < m {
			return fmt.Errorf("argument %q must have at least %v items", path, m)
		}
		if m, ok := toFloat(s["maxItems"]); ok && float64(len(l)) > m {
			return fmt.Errorf("argument %q must have at most %v items", path, m)
		}
		if it, ok := s["items"].(map[string]any); ok {
			for i, x := range l {
				if err := checkValue(it, x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return bad("an object")
		}
		if _, has := s["properties"]; has {
			if err := checkArgs(s, m); err != nil {
				return fmt.Errorf("in argument %q: %v", path, err)
			}
		}
	case "null":
		if v != nil {
			return bad("null")
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		for _, e := range enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				return nil
			}
		}
		var opts []string
		for _, e := range enum {
			opts = append(opts, fmt.Sprint(e))
		}
		return fmt.Errorf("argument %q must be one of %s, got %v", path, strings.Join(opts, ", "), v)
	}
	return nil
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", x)
	case float64, int:
		return fmt.Sprintf("number %v", x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
