package mcpserver

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
	"gopkg.in/yaml.v3"
)

//go:embed tools.yaml
var toolsYAML []byte

// ProbeOnlyMeta is the _meta key marking a probe_only tool; the engine
// reads it as schema.ProbeOnlyMeta (this package does not import schema).
const ProbeOnlyMeta = "toolward/probe_only"

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
	// ProbeOnly marks a state tool for toolward's state probes: its MCP
	// _meta says so (schema.ProbeOnlyMeta), and toolward never offers it
	// to the model. It must be read-only.
	ProbeOnly bool `yaml:"probe_only" json:"probe_only,omitempty"`
	// UncheckedArgs offers InputSchema as documentation only: the server
	// does not validate a call's arguments against it or fill in its
	// defaults, and its enum and default values need not fit their own
	// schemas; the structure is still checked (JSON types, a schema
	// mapping under properties and items), but it may carry keys outside
	// JSON Schema (BFCL's optional) and require a property it does not
	// define, and is offered exactly as written. It is for schemas a
	// benchmark shows models as written but never enforces (BFCL's
	// functions, docs/bfcl.md): the case's expectations judge the call,
	// and a refusal by the server would be a second judge the benchmark
	// does not have.
	UncheckedArgs bool `yaml:"unchecked_args" json:"unchecked_args,omitempty"`

	where string               // file:line of the definition, for errors
	tmpl  *template.Template   // parsed Result
	input *jsonschema.Resolved // InputSchema, resolved for validating calls (nil: UncheckedArgs)
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
	if d.ProbeOnly {
		t.Meta = mcp.NewMetaFromMap(map[string]any{ProbeOnlyMeta: true})
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
		msg := strings.ReplaceAll(err.Error(), "in type mcpserver.ToolDef", "(known fields: name, domain, description, input_schema, output_schema, annotations, result, probe_only, unchecked_args)")
		return nil, fmt.Errorf("%s: %s", source, msg)
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("%s: no tools (want a YAML list of tools)", source)
	}
	var errs []error
	for i, d := range defs {
		if d == nil {
			errs = append(errs, fmt.Errorf("%s: tool #%d is empty", source, i+1))
			continue
		}
		node := &yaml.Node{}
		if i < len(doc.Content[0].Content) {
			node = doc.Content[0].Content[i]
		}
		d.where = fmt.Sprintf("%s:%d", source, node.Line)
		// JSON numbers are float64 on the wire; make the schemas agree.
		d.InputSchema = jsonRoundTrip(d.InputSchema)
		d.OutputSchema = jsonRoundTrip(d.OutputSchema)
		if err := d.validate(); err != nil {
			name := d.Name
			if name == "" {
				name = fmt.Sprintf("#%d", i+1)
			}
			var at []string
			if te, ok := err.(*defError); ok {
				at = te.at
			}
			n := nodeAt(node, at)
			errs = append(errs, fmt.Errorf("%s:%d:%d: tool %s: %v", source, n.Line, n.Column, name, err))
		}
	}
	// Every tool is checked, so one pass over a catalog shows all its
	// mistakes (toolward validate prints one line each).
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
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

// defError is a mistake in one tool definition. at is the path of
// mapping keys from the tool to the node it is about (empty: the tool), so
// the error can name that node's line and column.
type defError struct {
	at  []string
	msg string
}

func (e *defError) Error() string { return e.msg }

// errAt is a defError at the path at.
func errAt(at []string, format string, args ...any) error {
	return &defError{at: slices.Clone(at), msg: fmt.Sprintf(format, args...)}
}

// nodeAt follows the mapping keys at from n as far as they lead and
// returns the last key node reached (n itself when the first is absent).
func nodeAt(n *yaml.Node, at []string) *yaml.Node {
	found := n
	for _, key := range at {
		if n.Kind != yaml.MappingNode {
			break
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				found, next = n.Content[i], n.Content[i+1]
				break
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return found
}

// validate checks a definition on its own; name clashes are checked when
// catalogs are combined.
func (d *ToolDef) validate() error {
	if !toolNameRE.MatchString(d.Name) {
		return errAt([]string{"name"}, "name %q must be 1-64 letters, digits, _ or -", d.Name)
	}
	if strings.TrimSpace(d.Description) == "" {
		return errAt([]string{"description"}, "description is empty")
	}
	d.Description = strings.TrimSpace(d.Description)
	if d.InputSchema == nil {
		return fmt.Errorf("input_schema is missing")
	}
	if err := checkSchema(d.InputSchema, []string{"input_schema"}, true, !d.UncheckedArgs); err != nil {
		return err
	}
	if !d.UncheckedArgs {
		in, err := resolveSchema(d.InputSchema)
		if err != nil {
			return errAt([]string{"input_schema"}, "input_schema: %v", err)
		}
		d.input = in
	}
	if d.OutputSchema != nil {
		if err := checkSchema(d.OutputSchema, []string{"output_schema"}, true, true); err != nil {
			return err
		}
		if _, err := resolveSchema(d.OutputSchema); err != nil {
			return errAt([]string{"output_schema"}, "output_schema: %v", err)
		}
	}
	if d.ProbeOnly && !(d.Annotations.ReadOnly != nil && *d.Annotations.ReadOnly) {
		return errAt([]string{"probe_only"}, "probe_only: a state tool must be read-only (annotations: {readOnlyHint: true})")
	}
	if d.Result != "" {
		t, err := template.New(d.Name).Option("missingkey=zero").Parse(d.Result)
		if err != nil {
			return errAt([]string{"result"}, "result template: %v", err)
		}
		d.tmpl = t
		if _, err := d.render(sampleArgs(d.InputSchema)); err != nil {
			return errAt([]string{"result"}, "result template fails on sample arguments: %v", err)
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

// checkSchema validates a schema against the subset this server enforces;
// at is its path of keys in the tool. With values, every enum value and
// default must fit the rest of its schema (a default of an unchecked
// schema only documents, so it may not).
func checkSchema(s map[string]any, at []string, top, values bool) error {
	path := strings.Join(at, ".")
	for _, k := range sortedKeys(s) {
		// An unchecked schema is documentation: it may carry the keys its
		// benchmark writes (BFCL's optional), offered as written.
		if !schemaKeywords[k] && values {
			return errAt(append(at, k), "%s: unsupported JSON Schema keyword %q", path, k)
		}
	}
	typ, _ := s["type"].(string)
	if !schemaTypes[typ] {
		return errAt(append(at, "type"), "%s: type must be one of object, string, integer, number, boolean, array, null (got %v)", path, s["type"])
	}
	if top && typ != "object" {
		return errAt(append(at, "type"), "%s: type must be object", path)
	}
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems"} {
		if v, ok := s[k]; ok {
			if _, ok := toFloat(v); !ok {
				return errAt(append(at, k), "%s: %s must be a number", path, k)
			}
		}
	}
	enum, hasEnum := s["enum"]
	if hasEnum {
		if l, ok := enum.([]any); !ok || len(l) == 0 {
			return errAt(append(at, "enum"), "%s: enum must be a non-empty list", path)
		}
	}
	if d, ok := s["description"]; ok {
		if _, ok := d.(string); !ok {
			return errAt(append(at, "description"), "%s: description must be a string", path)
		}
	}
	switch typ {
	case "object":
		props := map[string]any{}
		if p, ok := s["properties"]; ok && p != nil {
			m, ok := p.(map[string]any)
			if !ok {
				return errAt(append(at, "properties"), "%s: properties must be a mapping", path)
			}
			props = m
		}
		if values {
			s["properties"] = props // an unchecked schema is offered as written
		}
		for _, name := range sortedKeys(props) {
			sub := slices.Concat(at, []string{"properties", name})
			ps, ok := props[name].(map[string]any)
			if !ok {
				return errAt(sub, "%s.properties.%s: must be a schema mapping", path, name)
			}
			if err := checkSchema(ps, sub, false, values); err != nil {
				return err
			}
		}
		if r, ok := s["required"]; ok {
			l, ok := r.([]any)
			if !ok {
				return errAt(append(at, "required"), "%s: required must be a list of property names", path)
			}
			for _, x := range l {
				name, ok := x.(string)
				if !ok {
					return errAt(append(at, "required"), "%s: required must be a list of property names", path)
				}
				if _, ok := props[name]; !ok && values {
					return errAt(append(at, "required"), "%s: required property %q is not in properties", path, name)
				}
			}
		}
		if ap, ok := s["additionalProperties"]; ok {
			if _, ok := ap.(bool); !ok {
				return errAt(append(at, "additionalProperties"), "%s: additionalProperties must be true or false", path)
			}
		}
	case "array":
		if it, ok := s["items"]; ok {
			m, ok := it.(map[string]any)
			if !ok {
				return errAt(append(at, "items"), "%s: items must be a schema mapping", path)
			}
			if err := checkSchema(m, slices.Concat(at, []string{"items"}), false, values); err != nil {
				return err
			}
		}
	}
	if !values {
		return nil
	}
	// After the subschemas, whose own defaults are checked by now.
	if hasEnum {
		if err := checkEnum(s, enum.([]any)); err != nil {
			return errAt(append(at, "enum"), "%s: %v", path, err)
		}
	}
	if d, ok := s["default"]; ok {
		if err := fits(s, "default", d); err != nil {
			return errAt(append(at, "default"), "%s: default %s does not fit the schema: %s", path, jsonText(d), validationText(err))
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

// resolveSchema compiles a schema map (already checked by checkSchema)
// with the JSON Schema library that validates calls; defaults must fit
// their own schemas.
func resolveSchema(m map[string]any) (*jsonschema.Resolved, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(b, &js); err != nil {
		return nil, err
	}
	return js.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
}

// checkEnum refuses an enum value that the rest of its schema rejects
// (type: string with enum: [1, 2]): no argument could ever be valid.
func checkEnum(s map[string]any, enum []any) error {
	for _, v := range enum {
		if err := fits(s, "enum", v); err != nil {
			return fmt.Errorf("enum value %s does not fit the schema: %s", jsonText(v), validationText(err))
		}
	}
	return nil
}

// fits validates v against s without its keyword key (and without its
// default, which is checked on its own).
func fits(s map[string]any, key string, v any) error {
	rest := maps.Clone(s)
	delete(rest, key)
	delete(rest, "default")
	r, err := resolveSchema(rest)
	if err != nil {
		return err
	}
	return r.Validate(v)
}

// checkArgs validates call arguments against the tool's input schema and
// fills in the defaults of absent properties. The error says what is
// wrong in words a model can act on.
func (d *ToolDef) checkArgs(args map[string]any) error {
	if d.input == nil { // UncheckedArgs
		return nil
	}
	if err := d.input.ApplyDefaults(&args); err != nil {
		return errors.New(validationText(err))
	}
	if err := d.input.Validate(args); err != nil {
		return errors.New(validationText(err))
	}
	return nil
}

// validationText turns the library's error chain ("validating root:
// validating /properties/n: minimum: …") into "argument n: minimum: …",
// at most maxMessage characters: the library quotes the offending value
// whole, and a model's 20,000-character argument must not come back.
func validationText(err error) string {
	msg := strings.TrimPrefix(err.Error(), "validating root: ")
	msg = strings.ReplaceAll(msg, "<invalid reflect.Value>", "null") // the library's text for a JSON null
	where := ""
	for strings.HasPrefix(msg, "validating /") {
		rest := msg[len("validating /"):]
		i := strings.Index(rest, ": ")
		if i < 0 {
			break
		}
		where, msg = rest[:i], rest[i+2:] // each level names the whole pointer
	}
	if where != "" {
		where = strings.ReplaceAll(where, "/items", "[]")
		where = strings.ReplaceAll(strings.TrimPrefix(where, "properties/"), "/properties/", ".")
		msg = "argument " + where + ": " + msg
	}
	if r := []rune(msg); len(r) > maxMessage {
		msg = string(r[:maxMessage]) + "…"
	}
	return msg
}

// maxMessage bounds an argument error's length in characters.
const maxMessage = 300

// jsonText renders a value as JSON for messages.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
