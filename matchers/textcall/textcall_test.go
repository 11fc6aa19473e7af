package textcall

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// brief renders found calls as "family tool args" lines for comparison.
func brief(fs []Found) []string {
	var out []string
	for _, f := range fs {
		a, _ := json.Marshal(f.Args)
		out = append(out, f.Family+" "+f.Tool+" "+string(a))
	}
	return out
}

// TestFamilies: one example per family of the embedded file, as models
// write them, each found once, with its name and arguments.
func TestFamilies(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"hermes", `<tool_call>{"name": "calculate", "arguments": {"expression": "1+1"}}</tool_call> Paris`,
			[]string{`hermes calculate {"expression":"1+1"}`}},
		{"hermes, two blocks, no closing tag", "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {\"x\": 1}}",
			[]string{`hermes a {}`, `hermes b {"x":1}`}},
		{"mistral", `[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "calculate", "arguments": {"expression": "2*3"}}]`,
			[]string{`mistral get_weather {"city":"Paris"}`, `mistral calculate {"expression":"2*3"}`}},
		{"mistral v11", `[TOOL_CALLS]calculate[ARGS]{"expression": "1+1"}`,
			[]string{`mistral-args calculate {"expression":"1+1"}`}},
		{"llama python_tag json", `<|python_tag|>{"name": "search_documents", "parameters": {"query": "rate limit"}}<|eom_id|>`,
			[]string{`llama-python-tag search_documents {"query":"rate limit"}`}},
		{"llama python_tag pythonic", `<|python_tag|>brave_search.call(query="capital of Australia", top=3, safe=True)`,
			[]string{`llama-python-tag brave_search {"query":"capital of Australia","safe":true,"top":3}`}},
		{"llama function", `<function=query_database>{"sql": "SELECT 1"}</function>`,
			[]string{`llama-function query_database {"sql":"SELECT 1"}`}},
		{"fenced json", "I will call:\n```json\n{\"name\": \"calculate\", \"arguments\": {\"expression\": \"2+2\"}}\n```\nDone.",
			[]string{`json-fenced calculate {"expression":"2+2"}`}},
		{"bare fence", "```\n[{\"name\": \"calculate\", \"parameters\": {\"expression\": \"2+2\"}}]\n```",
			[]string{`json-fenced calculate {"expression":"2+2"}`}},
		{"pythonic list", `[get_weather(city='Paris', days=[1, 2]), calculate(expression="1+1",)]`,
			[]string{`pythonic get_weather {"city":"Paris","days":[1,2]}`, `pythonic calculate {"expression":"1+1"}`}},
		{"bare json", `Sure. {"name": "calculate", "arguments": {"expression": "3*3"}} is what I would run.`,
			[]string{`json calculate {"expression":"3*3"}`}},
		{"bare json, OpenAI shape with string arguments", `{"type": "function", "function": {"name": "calculate", "arguments": "{\"expression\": \"1\"}"}}`,
			[]string{`json calculate {"expression":"1"}`}},
		{"bare json inside an object that is not a call", `{"plan": {"name": "calculate", "arguments": {}}}`,
			[]string{`json calculate {}`}},
		{"an array with one non-call: its call still counts", `[{"name": "calculate", "arguments": {}}, 5]`,
			[]string{`json calculate {}`}},
	} {
		got := brief(Default().Find(tc.text))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestNotCalls: prose that mentions tool-call markup, and JSON that is
// not a call shape, is not reported.
func TestNotCalls(t *testing.T) {
	for _, text := range []string{
		"",
		"The capital of Australia is Canberra.",
		"I could emit a <tool_call> here, but no tool can help, so: Canberra.",
		"Models such as Mistral prefix calls with [TOOL_CALLS]; Llama uses <|python_tag|> and <function=name>.",
		"<tool_call>calculate 1+1</tool_call>",
		`<tool_call>{"name": "calculate"}</tool_call>`,                                    // no arguments
		`<tool_call>{"name": "calculate", "arguments": "1+1"}</tool_call>`,                // arguments not an object
		`<tool_call>{"name": 7, "arguments": {}}</tool_call>`,                             // name not a string
		`<tool_call>{"name": "two words", "arguments": {}}</tool_call>`,                   // not a tool name
		`<tool_call>{"name": "calculate", "arguments": {"expression": "1+1"}</tool_call>`, // unterminated
		`{"name": "Alice", "arguments": {"a": 1}, "age": 30}`,                             // other keys: a record, not a call
		`The employee is {"name": "Alice", "department": "Engineering"}.`,
		"```json\n{\"result\": 2}\n```",
		"[TOOL_CALLS] []",
		"<function=calculate>not json</function>",
		"See [the docs](https://example.com) and [note(1)].",
		`[print("hello")]`, // a positional argument
		"```go\nfmt.Println(x)\n```",
		// a tool definition echoed back is not a call: it has a description
		`{"name": "calculate", "description": "Evaluates arithmetic.", "parameters": {"type": "object", "properties": {}}}`,
		`{"type": "function", "function": {"name": "calculate", "description": "d", "parameters": {}}}`,
	} {
		if got := Default().Find(text); len(got) > 0 {
			t.Errorf("Find(%q) = %q, want nothing", text, brief(got))
		}
	}
}

// TestHostile: garbage and huge inputs end quickly with bounded output,
// and a call past MaxText is not scanned.
func TestHostile(t *testing.T) {
	call := `<tool_call>{"name": "calculate", "arguments": {}}</tool_call>`
	for name, text := range map[string]string{
		"deep brackets":     strings.Repeat("[", 4<<20),
		"deep objects":      strings.Repeat(`{"a":`, 1<<20),
		"many markers":      strings.Repeat("<tool_call>{", 1<<18),
		"unterminated":      `<tool_call>{"name": "` + strings.Repeat("x", 4<<20),
		"many fences":       strings.Repeat("```json\n{\"name\":", 1<<17),
		"python recursion":  "<|python_tag|>f(a=" + strings.Repeat("[", 1<<16),
		"invalid utf-8":     strings.Repeat("\xff\xfe<tool_call>\x00", 1<<16),
		"bare braces":       strings.Repeat(`{"`, 2<<20),
		"many pythonic":     strings.Repeat("[a(", 1<<18),
		"many calls":        strings.Repeat(call, 1000),
		"call past MaxText": strings.Repeat(" ", MaxText) + call,
	} {
		got := Default().Find(text)
		if len(got) > MaxFound {
			t.Errorf("%s: %d calls, want at most %d", name, len(got), MaxFound)
		}
		switch name {
		case "many calls":
			if len(got) != MaxFound {
				t.Errorf("%s: %d calls, want %d", name, len(got), MaxFound)
			}
		case "call past MaxText":
			if len(got) != 0 {
				t.Errorf("%s: found %q", name, brief(got))
			}
		}
	}
}

// TestFamiliesAreData: a family added in YAML is found without Go
// changes, and mistakes in a families file are errors naming the family.
func TestFamiliesAreData(t *testing.T) {
	s, err := Parse([]byte(`
shape: {name: [tool], arguments: [input], tool_name: '^\w+$'}
families:
  - name: anthropic-xml
    match: '<invoke name="(?P<name>\w+)">\s*'
    payload: [arguments]
  - name: json
    match: '(?P<payload>\{)'
    payload: [calls]
`))
	if err != nil {
		t.Fatal(err)
	}
	got := brief(s.Find(`<invoke name="lookup">{"q": "x"}</invoke> {"tool": "calc", "input": {"e": "1"}}`))
	want := []string{`anthropic-xml lookup {"q":"x"}`, `json calc {"e":"1"}`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []struct{ yaml, msg string }{
		{`{shape: {name: [n], arguments: [a], tool_name: '.'}, families: [{name: x, match: '(', payload: [calls]}]}`, "families[0] (x): match:"},
		{`{shape: {name: [n], arguments: [a], tool_name: '.'}, families: [{name: x, match: 'a*', payload: [calls]}]}`, "matches empty text"},
		{`{shape: {name: [n], arguments: [a], tool_name: '.'}, families: [{name: x, match: 'a', payload: [arguments]}]}`, `needs a group (?P<name>…)`},
		{`{shape: {name: [n], arguments: [a], tool_name: '.'}, families: [{name: x, match: 'a', payload: [xml]}]}`, `unknown extractor "xml"`},
		{`{shape: {name: [n], arguments: [a], tool_name: '.'}, families: [{name: x, match: 'a', payload: [calls]}, {name: x, match: 'b', payload: [calls]}]}`, `duplicate name "x"`},
		{`{shape: {arguments: [a], tool_name: '.'}, families: [{name: x, match: 'a', payload: [calls]}]}`, "shape:"},
	} {
		_, err := Parse([]byte(bad.yaml))
		if err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("Parse(%s): error %v, want one containing %q", bad.yaml, err, bad.msg)
		}
	}
}

// TestBudget: decoding work is charged to the budget and bounded by it.
// Text without any quoted name and arguments keys costs no JSON decoding;
// hostile text with them spends at most MaxTextDecode of it per text, and
// once it is spent nothing more is decoded, not even a real call.
func TestBudget(t *testing.T) {
	b := NewBudget()
	Default().FindWithin(strings.Repeat(`{"a":`, 200_000), b)
	if b.decode != MaxDecode {
		t.Errorf("keyless nesting cost %d bytes of decoding", MaxDecode-b.decode)
	}
	hostile := `"name" "arguments"` + strings.Repeat(`{"a":`, 200_000)
	texts := 0
	for !b.Spent() {
		if texts++; texts > 1000 {
			t.Fatal("the budget is never spent")
		}
		Default().FindWithin(hostile, b)
	}
	if texts < MaxDecode/MaxTextDecode {
		t.Errorf("%d texts of %d bytes spent the whole budget; one may spend at most MaxTextDecode", texts, len(hostile))
	}
	call := `<tool_call>{"name": "calculate", "arguments": {}}</tool_call>`
	if got := Default().FindWithin(call, b); len(got) != 0 {
		t.Errorf("a spent budget still found %q", brief(got))
	}
	if got := Default().FindWithin(call, NewBudget()); len(got) != 1 {
		t.Errorf("a fresh budget found %q", brief(got))
	}
}
