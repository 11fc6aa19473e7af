package textcall

import (
	"encoding/json"
	"testing"
)

// FuzzFind checks that no text makes Find panic or exceed its bounds, and
// that every call it reports has a tool name and arguments that encode
// as JSON.
func FuzzFind(f *testing.F) {
	for _, s := range []string{
		`<tool_call>{"name": "calculate", "arguments": {"expression": "1+1"}}</tool_call> Paris`,
		`[TOOL_CALLS] [{"name": "a", "arguments": {}}]`,
		`[TOOL_CALLS]a[ARGS]{"x": [1, 2]}`,
		`<|python_tag|>b.call(q="x", n=-1.5e3, ok=None, l=[{'k': 'v'}])`,
		`<function=f>{"a": 1}</function>`,
		"```json\n[{\"name\": \"a\", \"parameters\": {}}]\n```",
		`[f(a=1), g(b="\"")]`,
		`{"function": {"name": "f", "arguments": "{}"}, "type": "function"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := Default().Find(text)
		if len(got) > MaxFound {
			t.Fatalf("%d calls", len(got))
		}
		for _, c := range got {
			if c.Tool == "" || c.Args == nil || c.Offset < 0 || c.Offset >= len(text) {
				t.Fatalf("bad call %+v", c)
			}
			if _, err := json.Marshal(c.Args); err != nil {
				t.Fatalf("args of %s do not encode: %v", c.Tool, err)
			}
		}
	})
}
