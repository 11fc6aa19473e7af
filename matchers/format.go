package matchers

import (
	"reflect"
	"slices"
	"strings"
)

// The expectation format: the data shape of a case's `expect:` mapping,
// as a case's author writes it. Each field with a cue tag is a field of
// the CUE definition of its type in toolward.cue (#Expect, #Rules,
// #TurnRules, #Call, #ProbeFields), generated from these types by
// package schema's `go generate ./schema/...`; its yaml tag is the key
// CompileExpect allows and reads, and its doc comment is the text the
// author reads. A field of a plain type (bool, string, Count, Order,
// ToolNames) is decoded by its type alone (decodeValue); the fields
// compiledFields names are compiled by CompileExpect. What a field means
// is then the scoring code's, which reads it from the compiled rules.

// Expect is how a run is judged: rules on its calls and answer, and
// overrides of them for some matrix cells.
type Expect struct {
	Rules `yaml:",inline" cue:"#Rules"`
	// Overrides by matrix cell: every entry that selects a run's cell
	// applies, in order.
	When []map[string]any `json:"when,omitempty" yaml:"when,omitempty" cue:"[...#When]"`
}

// Rules are the fields of an expectation that `when` entries override.
type Rules struct {
	TurnRules `yaml:",inline" cue:"#TurnRules"`
	// Rules for the user turns of a conversation (a case with a user
	// block), in order: turns[i] judges the calls made while answering
	// user message i (the opening prompt is 0) and the answer to it. No
	// more entries than the conversation can have user turns (checked
	// in Go).
	Turns []TurnRules `json:"turns,omitempty" yaml:"turns,omitempty" cue:"[...#TurnRules]"`
}

// TurnRules judge a set of calls and one answer: the whole run (expect)
// or one user turn of a conversation (expect.turns[i]).
type TurnRules struct {
	// The tool calls the model must make.
	Calls []ExpectedCall `json:"calls,omitempty" yaml:"calls,omitempty" cue:"[...#Call]"`
	// sequence (the default): the calls in this order, other calls
	// allowed between them; unordered: in any order.
	Order Order `json:"order,omitempty" yaml:"order,omitempty" cue:"\"sequence\" | \"unordered\""`
	// true: a call with an argument its entry in calls does not name
	// fails (BFCL-style); default false.
	StrictArgs bool `json:"strict_args,omitempty" yaml:"strict_args,omitempty" cue:"bool"`
	// Tools the model must not attempt, even if the call is denied.
	Forbid ToolNames `json:"forbid,omitempty" yaml:"forbid,omitempty" cue:"[...#Name]"`
	// The most tool calls the model may make.
	MaxCalls *Count `json:"max_calls,omitempty" yaml:"max_calls,omitempty" cue:"int & >=0"` // nil: no limit
	// At least this many calls to offered tools, whichever; not above
	// max_calls and not with no_calls (checked in Go).
	MinCalls Count `json:"min_calls,omitempty" yaml:"min_calls,omitempty" cue:"int & >=0"`
	// true: the model must not call any tool; not with calls (checked
	// in Go).
	NoCalls bool `json:"no_calls,omitempty" yaml:"no_calls,omitempty" cue:"bool"`
	// A matcher on the final answer's text, or {$judge: RUBRIC} for a
	// model (the run config's judge) to decide by a rubric.
	Answer any `json:"answer,omitempty" yaml:"answer,omitempty" cue:"#Answer"`
	// Probes toolward calls on the run's server session, never shown to
	// the model: in expect, after the conversation (the end state); in
	// expect.turns[i], after the answer to user turn i, before the next
	// user message, where equals: golden compares with the state the
	// golden's turns 0..i leave on a fresh server.
	State []StateProbe `json:"state,omitempty" yaml:"state,omitempty" cue:"[...#Probe]"`
	// true: the results of the golden's calls (of this user turn, in
	// expect.turns[i]; of the whole golden, in expect), replayed on a
	// fresh server after the case's setup and the golden's earlier
	// turns, must all be among the results of the run's calls so far,
	// each as often as it occurs (a multiset, in any order): BFCL's
	// execution-response check. Needs a golden (checked in Go).
	ContainsGoldenResults bool `json:"contains_golden_results,omitempty" yaml:"contains_golden_results,omitempty" cue:"bool"`
}

// ExpectedCall is one expected tool call.
type ExpectedCall struct {
	// The tool the model calls.
	Tool string `json:"tool" yaml:"tool" cue:"#Name"`
	// Matchers on the call's arguments, by name: every one named must
	// match; others are allowed unless strict_args.
	Args map[string]any `json:"args,omitempty" yaml:"args,omitempty" cue:"#Object"`
}

// StateProbe is one entry of expect.state as written: a tool call
// toolward makes after the conversation, and a matcher on its result or
// the state the result must equal. #Probe, hand-written around these
// fields, takes exactly one of result and equals, and ignore and
// ignore_order with equals only.
type StateProbe struct {
	// The tool toolward calls.
	Tool string `json:"tool" yaml:"tool" cue:"#Name"`
	// The call's arguments.
	Args map[string]any `json:"args,omitempty" yaml:"args,omitempty" cue:"{...}"`
	// A matcher on the result.
	Result any `json:"result,omitempty" yaml:"result,omitempty" cue:"#Matcher"`
	// Equal to the result of the same probe on a fresh server after the
	// golden's calls (golden) or after none (initial); golden needs a
	// golden in the case (checked in Go).
	Equals string `json:"equals,omitempty" yaml:"equals,omitempty" cue:"\"golden\" | \"initial\""`
	// Paths removed from both sides before an equals comparison:
	// entities[*].id, tickets[0].ticket_id, *.created_at, ["a key"].
	Ignore []string `json:"ignore,omitempty" yaml:"ignore,omitempty" cue:"[...string]"`
	// Lists compare as multisets in an equals comparison.
	IgnoreOrder bool `json:"ignore_order,omitempty" yaml:"ignore_order,omitempty" cue:"bool"`
}

// Count is a number of calls: a whole number, 0 or more.
type Count int

// Order is how expected calls are found among a run's calls: OrderSequence
// ("" reads as it) or OrderUnordered.
type Order string

// ToolNames is a list of tool names (ToolName).
type ToolNames []string

// compiledFields are the fields of each format type that CompileExpect
// compiles itself (into the matcher trees of rules and calls, or the
// when entries); every other field is plain data, decoded by its type.
var compiledFields = map[reflect.Type][]string{
	reflect.TypeFor[Expect]():       {"when"},
	reflect.TypeFor[Rules]():        {"turns"},
	reflect.TypeFor[TurnRules]():    {"calls", "answer", "state"},
	reflect.TypeFor[ExpectedCall](): {"tool", "args"},
	reflect.TypeFor[StateProbe]():   {"tool", "args", "result", "equals", "ignore"},
}

// callFields lists the fields of an expected call: the yaml keys of
// ExpectedCall.
var callFields = yamlKeys(reflect.TypeFor[ExpectedCall]())

// yamlKeys lists the yaml keys of struct type t in field order, the
// fields of inline embedded structs in their place.
func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case f.Anonymous && opts == "inline":
			out = append(out, yamlKeys(f.Type)...)
		case f.IsExported() && name != "" && name != "-":
			out = append(out, name)
		}
	}
	return out
}

// decodeFields decodes the keys of m that are fields of the struct dst
// (inline embedded structs flattened), in field order, marking each key
// it reads in set: a plain field by its type (decodeValue), one of its
// struct's compiledFields by compile. A value its type refuses is a CompileError
// and leaves the field unset.
func decodeFields(p path, m map[string]any, dst reflect.Value, set map[string]bool, errs *CompileErrors, compile func(key string, v any)) {
	t := dst.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.Anonymous && opts == "inline" {
			decodeFields(p, m, dst.Field(i), set, errs, compile)
			continue
		}
		v, ok := m[name]
		if !ok || !f.IsExported() {
			continue
		}
		set[name] = true
		if slices.Contains(compiledFields[t], name) {
			compile(name, v)
			continue
		}
		errs.add(decodeValue(p.key(name), v, dst.Field(i)))
	}
}

// decodeValue sets dst, a plain field of the format, to v (a value as
// decoded from YAML or JSON) when dst's type admits it, or returns the
// *CompileError saying what the type wants. Each plain type here holds
// exactly what its cue tag states (TestPlainFieldsCUE).
func decodeValue(p path, v any, dst reflect.Value) error {
	switch dst.Type() {
	case reflect.TypeFor[bool]():
		b, ok := v.(bool)
		if !ok {
			return compileErr(p, nil, "want true or false, got %s", show(v))
		}
		dst.SetBool(b)
	case reflect.TypeFor[string]():
		s, ok := v.(string)
		if !ok {
			return compileErr(p, nil, "want a string, got %s", show(v))
		}
		dst.SetString(s)
	case reflect.TypeFor[Count](), reflect.TypeFor[*Count]():
		n, ok := toNumber(v)
		if !ok || n.big != nil || n.f != float64(int(n.f)) || n.f < 0 {
			return compileErr(p, nil, "want a whole number >= 0, got %s", show(v))
		}
		c := Count(n.f)
		if dst.Kind() == reflect.Pointer {
			dst.Set(reflect.ValueOf(&c))
		} else {
			dst.Set(reflect.ValueOf(c))
		}
	case reflect.TypeFor[Order]():
		s, _ := v.(string)
		if s != OrderSequence && s != OrderUnordered {
			return compileErr(p, nil, "want %q or %q, got %s", OrderSequence, OrderUnordered, show(v))
		}
		dst.SetString(s)
	case reflect.TypeFor[ToolNames]():
		list, err := stringList(p, v, "tool names", ToolName)
		if err != nil {
			return err
		}
		dst.Set(reflect.ValueOf(ToolNames(list)))
	default:
		return compileErr(p, nil, "matchers has no decoder for the Go type %s of this field", dst.Type())
	}
	return nil
}
