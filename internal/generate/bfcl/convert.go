package bfcl

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
)

// Case is one imported case: the case format's own type, which writes
// itself in the field order of a case file.
type Case = schema.Case

// Tool is one catalog entry for the bundled server (mcpserver.ToolDef's
// file format).
type Tool struct {
	Name        string         `yaml:"name"`
	Domain      string         `yaml:"domain"`
	Description string         `yaml:"description"`
	InputSchema map[string]any `yaml:"input_schema"`
	// UncheckedArgs is always true: BFCL offers its schemas as written
	// and never checks a call against them (only against the answer),
	// so the server must not refuse a call for them (docs/bfcl.md).
	UncheckedArgs bool   `yaml:"unchecked_args"`
	Result        string `yaml:"result"`

	category string
	bfclName string
	key      string // identity of the definition
}

// Suite is the converted data.
type Suite struct {
	// Cases by category, in the order read.
	Cases      map[string][]Case
	Categories []string
	Tools      []*Tool
	Skipped    []Skipped
}

// Golden answers of the replayed model.
const (
	answerAfterCalls  = "Done."
	answerIrrelevance = "None of the available functions can do that."
)

// Convert converts what Read found. reserved names tools that exist
// already in the server the catalog is added to (the bundled server's own
// tools and distractors): a BFCL function of that name gets a suffix.
func Convert(d *Data, reserved map[string]bool) *Suite {
	s := &Suite{Cases: map[string][]Case{}, Skipped: append([]Skipped(nil), d.Skipped...)}
	reg := &registry{reserved: reserved, byName: map[string]*Tool{}}
	cats := slices.Clone(d.Categories)
	// The first definition of a function name keeps it: simple categories
	// first, irrelevance (which reuses their functions) after them.
	slices.SortStableFunc(cats, func(a, b *Category) int { return categoryRank(a.Name) - categoryRank(b.Name) })
	for _, c := range cats {
		s.Categories = append(s.Categories, c.Name)
		for i := range c.Entries {
			cs, err := convertEntry(c, &c.Entries[i], reg)
			if err != nil {
				s.Skipped = append(s.Skipped, Skipped{What: c.Entries[i].ID, Reason: err.Error()})
				continue
			}
			s.Cases[c.Name] = append(s.Cases[c.Name], *cs)
		}
	}
	s.Tools = reg.tools
	return s
}

func categoryRank(name string) int {
	if i := slices.Index(SupportedCategories, name); i >= 0 {
		return i
	}
	return len(SupportedCategories) // v3 names
}

// Renamed returns the tools whose name is not their BFCL function's
// (beyond mapping dots to underscores): a name another definition, or a
// tool of the server, already holds.
func (s *Suite) Renamed() []*Tool {
	var out []*Tool
	for _, t := range s.Tools {
		if t.Name != ToolName(t.bfclName) {
			out = append(out, t)
		}
	}
	return out
}

// BFCLName is the function name the tool stands for.
func (t *Tool) BFCLName() string { return t.bfclName }

// registry gives every distinct function definition one tool name.
type registry struct {
	reserved map[string]bool
	byName   map[string]*Tool
	tools    []*Tool
}

// add returns the tool name of fn, adding it to the catalog if new. Two
// entries that define the same function identically share a tool; a
// different definition under a taken name gets the first free suffix
// _2, _3, ….
func (r *registry) add(fn *Function, c *Category) string {
	t := &Tool{
		Domain:        "bfcl",
		Description:   strings.TrimSpace(fn.Description + languageHint(c.Language)),
		InputSchema:   InputSchema(fn, c.Language),
		UncheckedArgs: true,
		Result:        fmt.Sprintf("%s ran. (A BFCL function has no implementation; this is a stub result.)", strings.ReplaceAll(fn.Name, "{{", "{ {")),
		category:      c.Name,
		bfclName:      fn.Name,
	}
	b, _ := json.Marshal([]any{fn.Name, t.Description, t.InputSchema})
	t.key = string(b)
	base := ToolName(fn.Name)
	for n := 1; ; n++ {
		name := base
		if n > 1 {
			suf := fmt.Sprintf("_%d", n)
			name = base[:min(len(base), 64-len(suf))] + suf
		}
		if r.reserved[name] {
			continue
		}
		if prev, ok := r.byName[name]; ok {
			if prev.key == t.key {
				return name
			}
			continue
		}
		t.Name = name
		r.byName[name] = t
		r.tools = append(r.tools, t)
		return name
	}
}

// convertEntry converts one entry, or says why it cannot.
func convertEntry(c *Category, e *Entry, reg *registry) (*Case, error) {
	if len(e.Question) != 1 {
		return nil, fmt.Errorf("%d question turns: only single-turn entries are imported", len(e.Question))
	}
	if len(e.Function) == 0 && c.Kind != Irrelevance {
		// BFCL scores live_irrelevance entries without functions (correct
		// when no call is made); others need a function to call.
		return nil, fmt.Errorf("no functions")
	}
	if !schema.ValidCaseID(e.ID) {
		return nil, fmt.Errorf("its id is not a case id (letters, digits and _ . : / -, starting with a letter or digit), so validate and run would refuse the case")
	}
	cs := &Case{ID: e.ID, Tags: []string{"bfcl", c.Name, string(c.Language)}}
	if err := setQuestion(cs, e.Question[0]); err != nil {
		return nil, err
	}
	names := map[string]string{} // BFCL name -> tool name
	var bfclNames []string
	for i := range e.Function {
		fn := &e.Function[i]
		if err := checkKeys(fn.Parameters, "function "+fn.Name); err != nil {
			return nil, err
		}
		tn := reg.add(fn, c)
		names[fn.Name] = tn
		if slices.Contains(cs.Needs, tn) {
			continue // the same function listed twice
		}
		cs.Needs = append(cs.Needs, tn)
		if tn != fn.Name {
			bfclNames = append(bfclNames, tn+" = "+fn.Name)
		}
	}
	cs.Description = fmt.Sprintf("BFCL %s %s.", c.Name, e.ID)
	if len(bfclNames) > 0 {
		cs.Description += " Tool names for BFCL functions: " + strings.Join(bfclNames, ", ") + "."
	}
	switch c.Kind {
	case Irrelevance:
		cs.Expect = map[string]any{"no_calls": true}
		cs.Golden = &schema.Golden{Answer: answerIrrelevance}
		return cs, nil
	case Relevance:
		// BFCL passes any call: at least one, to any of the functions.
		cs.Expect = map[string]any{"min_calls": 1}
		cs.Golden = &schema.Golden{Calls: []schema.GoldenCall{{Tool: cs.Needs[0], Args: sampleArgs(&e.Function[0], c.Language)}}, Answer: answerAfterCalls}
		return cs, nil
	}
	gt, ok := c.Answers[e.ID]
	if !ok || len(gt) == 0 {
		return nil, fmt.Errorf("no possible answer")
	}
	var calls []any
	cs.Golden = &schema.Golden{}
	var unpassable []string
	for _, call := range gt {
		if len(call) != 1 {
			return nil, fmt.Errorf("an answer call names %d functions, want 1", len(call))
		}
		for fname, possible := range call {
			tn, ok := names[fname]
			if !ok {
				return nil, fmt.Errorf("the answer calls %s, which the entry does not define", fname)
			}
			fn := functionNamed(e, fname)
			spec, gold, never, err := callSpec(fn, possible, c.Language)
			if err != nil {
				return nil, err
			}
			for _, k := range never {
				unpassable = append(unpassable, fname+"."+k)
			}
			calls = append(calls, matchers.ExpectedCall{Tool: tn, Args: spec})
			cs.Golden.Calls = append(cs.Golden.Calls, schema.GoldenCall{Tool: tn, Args: gold})
		}
	}
	cs.Golden.Answer = answerAfterCalls
	cs.Expect = map[string]any{"calls": calls, "strict_args": true, "max_calls": len(calls)}
	if len(calls) > 1 {
		cs.Expect["order"] = "unordered"
	}
	if len(unpassable) > 0 {
		// BFCL's checker passes no output here: the case stays, counted in
		// its category, never passing, and has no golden to prove.
		cs.Tags = append(cs.Tags, TagUnpassable)
		cs.Description += " BFCL's checker passes no output for this entry (" + strings.Join(unpassable, ", ") + ": an empty set of acceptable values, or a parameter the function does not define without \"\" among its values), so neither does this case."
		cs.Golden = nil
	}
	return cs, nil
}

// TagUnpassable marks an imported case that no output can pass, as none
// passes BFCL's checker for its entry: an answer parameter with an empty
// set of acceptable values, or one the function does not define.
const TagUnpassable = "bfcl-unpassable"

// never is a matcher no value, and no absence, satisfies.
var never = map[string]any{"$not": map[string]any{"$absent_or": map[string]any{"$any": true}}}

func functionNamed(e *Entry, name string) *Function {
	for i := range e.Function {
		if e.Function[i].Name == name {
			return &e.Function[i]
		}
	}
	return nil
}

// callSpec returns the args matcher and golden args of one answer call,
// and the parameters no output can satisfy (BFCL lists no acceptable
// value, or the function does not define the parameter): their matcher
// is never.
func callSpec(fn *Function, possible map[string][]any, lang Language) (map[string]any, map[string]any, []string, error) {
	spec := map[string]any{}
	gold := map[string]any{}
	var unpassable []string
	for _, k := range sortedKeys(possible) {
		if err := checkKey(k, "parameter"); err != nil {
			return nil, nil, nil, err
		}
		if err := checkValueKeys(possible[k]); err != nil {
			return nil, nil, nil, fmt.Errorf("parameter %s: %v", k, err)
		}
		p := paramOf(fn, k)
		if !p.defined && slices.Contains(possible[k], any("")) {
			// BFCL rejects an output that gives a parameter the function
			// does not define; with "" listed, leaving it out passes.
			spec[k] = map[string]any{"$not": map[string]any{"$any": true}}
			continue
		}
		if len(possible[k]) == 0 || !p.defined {
			spec[k] = never
			unpassable = append(unpassable, k)
			continue
		}
		s, g, ok := paramSpec(p, possible[k], lang)
		spec[k] = s
		if ok {
			gold[k] = g
		}
	}
	return spec, gold, unpassable, nil
}

// checkKey rejects names that toolward's matcher language would read as
// operators.
func checkKey(k, what string) error {
	if strings.HasPrefix(k, "$") {
		return fmt.Errorf("%s %q starts with $, which a case reads as a matcher operator", what, k)
	}
	return nil
}

func checkKeys(params map[string]any, what string) error {
	props, _ := params["properties"].(map[string]any)
	for k := range props {
		if err := checkKey(k, what+" parameter"); err != nil {
			return err
		}
	}
	return nil
}

func checkValueKeys(v any) error {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if err := checkKey(k, "key"); err != nil {
				return err
			}
			if err := checkValueKeys(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := checkValueKeys(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// setQuestion sets the prompt, or the system prompt and messages.
func setQuestion(cs *Case, msgs []Message) error {
	if len(msgs) > 0 && msgs[0].Role == "system" {
		cs.System = msgs[0].Content
		msgs = msgs[1:]
	}
	if len(msgs) == 0 {
		return fmt.Errorf("the question has no user message")
	}
	for _, m := range msgs {
		switch m.Role {
		case "user", "assistant", "system":
		default:
			return fmt.Errorf("question message with role %q (want user, assistant or system)", m.Role)
		}
		if strings.TrimSpace(m.Content) == "" {
			return fmt.Errorf("question message with empty content")
		}
	}
	if len(msgs) == 1 && msgs[0].Role == "user" {
		cs.Prompt = msgs[0].Content
		return nil
	}
	for _, m := range msgs {
		cs.Messages = append(cs.Messages, schema.Message{Role: m.Role, Content: m.Content})
	}
	return nil
}

// sampleArgs builds arguments for a relevance golden: a placeholder for
// every required parameter.
func sampleArgs(fn *Function, lang Language) map[string]any {
	args := map[string]any{}
	props, _ := fn.Parameters["properties"].(map[string]any)
	req, _ := fn.Parameters["required"].([]any)
	for _, r := range req {
		name, _ := r.(string)
		if _, ok := props[name]; !ok {
			continue
		}
		args[name] = "x"
		if lang == Python {
			switch paramOf(fn, name).typ {
			case "integer", "float", "number":
				args[name] = int64(1)
			case "boolean", "bool":
				args[name] = true
			case "array", "tuple", "list":
				args[name] = []any{}
			case "dict", "object":
				args[name] = map[string]any{}
			}
		}
	}
	return args
}
