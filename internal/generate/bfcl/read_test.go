package bfcl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadSkipsOutOfScope(t *testing.T) {
	d, err := Read("testdata/verdicts", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Skipped) != 1 || d.Skipped[0].What != "BFCL_v4_multi_turn_base.json" || !strings.Contains(d.Skipped[0].Reason, "conversations against BFCL's back ends") {
		t.Errorf("skipped = %+v", d.Skipped)
	}
	var names []string
	for _, c := range d.Categories {
		names = append(names, c.Name)
	}
	want := []string{"irrelevance", "live_relevance", "multiple", "parallel", "simple_java", "simple_javascript", "simple_python"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("categories = %v, want %v", names, want)
	}
}

func TestReadCategories(t *testing.T) {
	d, err := Read("testdata/verdicts", []string{"parallel", "irrelevance"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Categories) != 2 || len(d.Skipped) != 0 {
		t.Errorf("categories %d, skipped %v", len(d.Categories), d.Skipped)
	}
	_, err = Read("testdata/verdicts", []string{"paralel"})
	if err == nil || !strings.Contains(err.Error(), `category "paralel": no BFCL_v*_paralel.json`) {
		t.Errorf("unknown category: %v", err)
	}
	if _, err := Read(t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "no BFCL data files") {
		t.Errorf("empty dir: %v", err)
	}
}

func TestReadErrorsNameTheLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("BFCL_v4_simple_python.json", `{"id": "a", "question": [[{"role": "user", "content": "q"}]], "function": []}`+"\n\n{oops\n")
	_, err := Read(dir, nil)
	if err == nil || !strings.Contains(err.Error(), "BFCL_v4_simple_python.json:3: ") {
		t.Errorf("bad line: %v", err)
	}
	write("BFCL_v4_simple_python.json", `{"id": "a", "question": [[{"role": "user", "content": "q"}]], "function": []}`+"\n")
	_, err = Read(dir, nil)
	if err == nil || !strings.Contains(err.Error(), "possible_answer") || !strings.Contains(err.Error(), "missing") {
		t.Errorf("no answers: %v", err)
	}
}

// TestInputSchema: the offered schema is BFCL's conversion, written here
// by hand from _cast_to_openai_type and convert_to_tool
// (bfcl_eval/model_handler/utils.py) and
// _func_doc_language_specific_pre_processing (bfcl_eval/utils.py): types
// mapped at the depths BFCL maps them and no deeper, a float noted only as
// a property, every other key kept.
func TestInputSchema(t *testing.T) {
	for _, tt := range []struct {
		lang     Language
		fn, want string
	}{
		{Python, `{"name": "f", "parameters": {"type": "dict", "properties": {
			"x": {"type": "float", "description": "X."},
			"t": {"type": "tuple", "items": {"type": "float"}, "description": "T."},
			"m": {"type": "list", "items": {"type": "list", "items": {"type": "float", "items": {"type": "dict"}}}},
			"o": {"type": "array", "items": {"type": "dict", "properties": {"f": {"type": "float", "description": "F."}}}},
			"d": {"type": "dict", "properties": {"k": {"type": "bool"}}, "required": ["k", "zz"]},
			"a": {"type": "any", "optional": true, "default": null}, "w": {"type": "weird"}, "n": {"description": "N."}},
			"required": ["x", "nope"]}}`,
			`{"type": "object", "required": ["x", "nope"], "properties": {
			"x": {"type": "number", "format": "float", "description": "X. This is a float type value."},
			"t": {"type": "array", "items": {"type": "number"}, "description": "T."},
			"m": {"type": "array", "items": {"type": "array", "items": {"type": "number", "items": {"type": "dict"}}}},
			"o": {"type": "array", "items": {"type": "object", "properties": {"f": {"type": "number", "format": "float", "description": "F. This is a float type value."}}}},
			"d": {"type": "object", "properties": {"k": {"type": "boolean"}}, "required": ["k", "zz"]},
			"a": {"type": "string", "optional": true, "default": null}, "w": {"type": "string"}, "n": {"type": "string", "description": "N."}}}`},
		{Java, `{"name": "f", "parameters": {"type": "dict", "properties": {
			"l": {"type": "ArrayList", "items": {"type": "long"}, "description": "L.", "default": []},
			"h": {"type": "HashMap", "properties": {"k": {"type": "long"}}, "description": "H."},
			"v": {"type": "any", "description": "V."}}}}`,
			`{"type": "object", "properties": {
			"l": {"type": "string", "default": [], "description": "L. This is Java ArrayList type parameter in string representation. The list elements are of type long; they are not in string representation."},
			"h": {"type": "string", "properties": {"k": {"type": "long"}}, "description": "H. This is Java HashMap type parameter in string representation."},
			"v": {"type": "string", "description": "V. This parameter can be of any type of Java object in string representation."}}}`},
		{JavaScript, `{"name": "f", "parameters": {"type": "dict", "properties": {
			"d": {"type": "dict", "description": "D.", "properties": {"z": {"type": "String", "description": "\u00e9\"/"}, "a": {"type": "integer"}}},
			"a": {"type": "array", "description": "A.", "items": {"type": "String"}}}}}`,
			`{"type": "object", "properties": {
			"d": {"type": "string", "description": "D. This is JavaScript dict type parameter in string representation. The dictionary entries have the following schema; they are not in string representation. {\"z\": {\"type\": \"String\", \"description\": \"\\u00e9\\\"/\"}, \"a\": {\"type\": \"integer\"}}"},
			"a": {"type": "string", "description": "A. This is JavaScript array type parameter in string representation. The list elements are of type String; they are not in string representation."}}}`},
	} {
		var fn Function
		if err := json.Unmarshal([]byte(tt.fn), &fn); err != nil {
			t.Fatal(err)
		}
		before, _ := json.Marshal(fn.Parameters)
		got, _ := json.Marshal(InputSchema(&fn, tt.lang))
		if !jsonEqual(t, got, []byte(tt.want)) {
			t.Errorf("%s: got %s\nwant %s", tt.lang, got, tt.want)
		}
		if after, _ := json.Marshal(fn.Parameters); string(after) != string(before) {
			t.Errorf("%s: InputSchema changed the function it read", tt.lang)
		}
	}
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

func TestToolNames(t *testing.T) {
	for in, want := range map[string]string{
		"math.factorial": "math_factorial", "a b/c": "a_b_c", "": "_",
		strings.Repeat("x", 70): strings.Repeat("x", 64),
	} {
		if got := ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q", in, got)
		}
	}
	cases := suite(t)
	// A name the server holds already gets a suffix; the same definition
	// twice is one tool.
	d := &Data{Categories: []*Category{{Name: "simple_python", Kind: Simple, Language: Python,
		Entries: []Entry{
			{ID: "e1", Question: [][]Message{{{Role: "user", Content: "q"}}}, Function: []Function{{Name: "calculate", Description: "c"}}},
			{ID: "e2", Question: [][]Message{{{Role: "user", Content: "q"}}}, Function: []Function{{Name: "f", Description: "one"}}},
			{ID: "e3", Question: [][]Message{{{Role: "user", Content: "q"}}}, Function: []Function{{Name: "f", Description: "one"}}},
			{ID: "e4", Question: [][]Message{{{Role: "user", Content: "q"}}}, Function: []Function{{Name: "f", Description: "two"}}},
		},
		Answers: map[string][]map[string]map[string][]any{
			"e1": {{"calculate": {}}}, "e2": {{"f": {}}}, "e3": {{"f": {}}}, "e4": {{"f": {}}},
		}}}}
	s := Convert(d, map[string]bool{"calculate": true})
	var got []string
	for _, c := range s.Cases["simple_python"] {
		got = append(got, c.Needs[0])
	}
	if want := []string{"calculate_2", "f", "f", "f_2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tool names %v, want %v", got, want)
	}
	if len(s.Tools) != 3 || len(s.Renamed()) != 2 {
		t.Errorf("%d tools, %d renamed", len(s.Tools), len(s.Renamed()))
	}
	if c := cases["simple_python_3"]; c.System != "You are a planner." || len(c.Messages) != 0 || !strings.HasPrefix(c.Prompt, "Plan stops") {
		t.Errorf("system prompt: %+v", c)
	}
}

func TestConvertSkipsWhatItCannotExpress(t *testing.T) {
	q := [][]Message{{{Role: "user", Content: "q"}}}
	fn := func(name string) []Function {
		return []Function{{Name: name, Parameters: map[string]any{"properties": map[string]any{"$ref": map[string]any{"type": "string"}}}}}
	}
	d := &Data{Categories: []*Category{{Name: "simple_python", Kind: Simple, Language: Python,
		Entries: []Entry{
			{ID: "dollar", Question: q, Function: fn("f")},
			{ID: "two-turns", Question: [][]Message{q[0], q[0]}, Function: fn("g")},
			{ID: "no-answer", Question: q, Function: []Function{{Name: "h"}}},
			{ID: "other-function", Question: q, Function: []Function{{Name: "i"}}},
			{ID: "tool-role", Question: [][]Message{{{Role: "tool", Content: "x"}}}, Function: []Function{{Name: "j"}}},
			{ID: "x_<script>", Question: q, Function: []Function{{Name: "k"}}},
			{ID: `a/b\c:d`, Question: q, Function: []Function{{Name: "l"}}},
		},
		Answers: map[string][]map[string]map[string][]any{"other-function": {{"nope": {}}}},
	}}}
	s := Convert(d, nil)
	if len(s.Cases["simple_python"]) != 0 {
		t.Errorf("converted %d cases", len(s.Cases["simple_python"]))
	}
	want := map[string]string{
		"dollar":         `function f parameter "$ref" starts with $`,
		"two-turns":      "2 question turns: only single-turn entries are imported",
		"no-answer":      "no possible answer",
		"other-function": "the answer calls nope, which the entry does not define",
		"tool-role":      `question message with role "tool"`,
		"x_<script>":     "its id is not a case id",
		`a/b\c:d`:        "its id is not a case id",
	}
	for _, sk := range s.Skipped {
		if !strings.Contains(sk.Reason, want[sk.What]) || want[sk.What] == "" {
			t.Errorf("%s: %s", sk.What, sk.Reason)
		}
		delete(want, sk.What)
	}
	if len(want) > 0 {
		t.Errorf("not skipped: %v", want)
	}
}

func TestBareAnswerValues(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "possible_answer"), 0o755)
	os.WriteFile(filepath.Join(dir, "BFCL_v4_simple_python.json"), []byte(`{"id": "a", "question": [[{"role": "user", "content": "q"}]], "function": [{"name": "f", "parameters": {"properties": {"n": {"type": "integer"}}}}]}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "possible_answer", "BFCL_v4_simple_python.json"), []byte(`{"id": "a", "ground_truth": [{"f": {"n": 3}}]}`+"\n"), 0o644)
	d, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Categories[0].Answers["a"][0]["f"]["n"]; len(got) != 1 || got[0] != json.Number("3") {
		t.Errorf("answer = %v", got)
	}
}
