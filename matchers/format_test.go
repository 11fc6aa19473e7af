package matchers

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// formatTypes are the expectation's format types, whose fields are the
// CUE definitions generated into toolward.cue.
var formatTypes = []reflect.Type{reflect.TypeFor[Expect](), reflect.TypeFor[Rules](), reflect.TypeFor[TurnRules](), reflect.TypeFor[ExpectedCall](), reflect.TypeFor[StateProbe]()}

// plainTypes are the plain field types decodeValue reads: the cue tag a
// field of the type must carry (what the type holds), a value it admits
// and one it refuses, with the message.
var plainTypes = map[reflect.Type]struct {
	cue       string
	good, bad any
	msg       string
}{
	reflect.TypeFor[bool]():      {"bool", true, "yes", `want true or false, got "yes"`},
	reflect.TypeFor[string]():    {"string", "x", 1, `want a string, got 1`},
	reflect.TypeFor[Count]():     {"int & >=0", 3, -1, `want a whole number >= 0, got -1`},
	reflect.TypeFor[*Count]():    {"int & >=0", 0, 1.5, `want a whole number >= 0, got 1.5`},
	reflect.TypeFor[Order]():     {`"sequence" | "unordered"`, "unordered", "random", `want "sequence" or "unordered", got "random"`},
	reflect.TypeFor[ToolNames](): {"[...#Name]", []any{"a.b"}, []any{"a b"}, `want tool names, got "a b"`},
}

// TestPlainFieldsCUE: every field of the format types is compiled by
// CompileExpect (its type's compiledFields) or of a plain type whose decoder holds
// what its cue tag says, so a new field of a plain type is read and
// checked as toolward.cue states with no code of its own, and a field of
// a type decodeValue does not know fails here.
func TestPlainFieldsCUE(t *testing.T) {
	t.Parallel()
	for _, ft := range formatTypes {
		for i := range ft.NumField() {
			f := ft.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			cue, hasCUE := f.Tag.Lookup("cue")
			switch {
			case f.Anonymous:
				if opts != "inline" || cue != "#"+f.Type.Name() {
					t.Errorf("%s.%s: an embedded format type is yaml \",inline\" with cue %q", ft.Name(), f.Name, "#"+f.Type.Name())
				}
				continue
			case !hasCUE || name == "":
				t.Errorf("%s.%s: a format field needs a yaml key and a cue tag", ft.Name(), f.Name)
				continue
			case slices.Contains(compiledFields[ft], name):
				continue
			}
			pt, ok := plainTypes[f.Type]
			if !ok {
				t.Errorf("%s.%s: decodeValue has no decoder for its type %s (add one, or compile the field)", ft.Name(), f.Name, f.Type)
				continue
			}
			if cue != pt.cue {
				t.Errorf("%s.%s: cue tag %q, but its type %s holds %q", ft.Name(), f.Name, cue, f.Type, pt.cue)
			}
		}
	}
	for typ, pt := range plainTypes {
		if err := decodeValue(path{"x"}, pt.good, reflect.New(typ).Elem()); err != nil {
			t.Errorf("%s refuses %v: %v", typ, pt.good, err)
		}
		err := decodeValue(path{"x"}, pt.bad, reflect.New(typ).Elem())
		if ce, ok := err.(*CompileError); !ok || ce.Msg != pt.msg || !strings.HasPrefix(ce.Path, "x") {
			t.Errorf("%s with %v: error %v, want x: %s", typ, pt.bad, err, pt.msg)
		}
	}
}

// TestExpectWriteReadsBack: an Expect written through its yaml tags (as
// a writer of cases would) compiles back to the same rules, every field
// set.
func TestExpectWriteReadsBack(t *testing.T) {
	t.Parallel()
	two := Count(2)
	turn := TurnRules{
		Calls:      []ExpectedCall{{Tool: "f", Args: map[string]any{"n": 1}}, {Tool: "g"}},
		Order:      OrderUnordered,
		StrictArgs: true,
		Forbid:     ToolNames{"h"},
		MaxCalls:   &two,
		MinCalls:   1,
		Answer:     map[string]any{"$contains": "ok"},
		State: []StateProbe{
			{Tool: "count", Args: map[string]any{"table": "t"}, Equals: EqualsGolden, Ignore: []string{"rows[*].id"}, IgnoreOrder: true},
			{Tool: "count", Result: map[string]any{"n": 2}},
		},
		ContainsGoldenResults: true,
	}
	in := Expect{Rules: Rules{
		TurnRules: turn,
		Turns:     []TurnRules{{NoCalls: true, Answer: "hi"}, turn},
	}}
	b, err := yaml.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	// Every field but when, and no_calls (which contradicts calls; the
	// first turn sets it).
	if len(raw) != len(ExpectFields)-2 {
		t.Errorf("wrote %d fields, want %d:\n%s", len(raw), len(ExpectFields)-2, b)
	}
	e, err := CompileExpect(raw)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !reflect.DeepEqual(e.base.Rules, in.Rules) {
		t.Errorf("read back as\n%#v\nwant\n%#v\n%s", e.base.Rules, in.Rules, b)
	}
}

// TestWhenOverridesPlainFields: a when entry overrides each plain field
// it sets, through the field's index in Rules, and leaves the others.
func TestWhenOverridesPlainFields(t *testing.T) {
	t.Parallel()
	e, err := CompileExpect(map[string]any{
		"max_calls": 3, "forbid": []any{"x"},
		"when": []any{map[string]any{"confirm": "deny", "max_calls": 0, "strict_args": true, "order": "unordered"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	base, deny := e.effective(Cell{}), e.effective(Cell{Confirm: "deny"})
	if base.maxCalls() != 3 || base.StrictArgs || base.Order != "" {
		t.Errorf("base rules %+v", base.Rules)
	}
	if deny.maxCalls() != 0 || !deny.StrictArgs || deny.Order != OrderUnordered || !slices.Equal(deny.Forbid, ToolNames{"x"}) {
		t.Errorf("rules with the override %+v", deny.Rules)
	}
}

// TestRefusedValueIsNotRead: a value its field's type refuses is one
// mistake, not also read (as 0) into another rule's check, and a field a
// turn cannot have is reported as unknown and not compiled as well.
func TestRefusedValueIsNotRead(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		expect string
		want   string
	}{
		{`{max_calls: six, min_calls: 2}`, `expect.max_calls: want a whole number >= 0, got "six"`},
		{`{turns: [{turns: [{answer: 5}], answer: x}]}`, `expect.turns[0].turns: unknown field "turns"`},
	} {
		var raw map[string]any
		if err := yaml.Unmarshal([]byte(tt.expect), &raw); err != nil {
			t.Fatal(err)
		}
		_, err := CompileExpect(raw)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: got\n%v\nwant\n%s", tt.expect, err, tt.want)
		}
	}
}
