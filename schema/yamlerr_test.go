package schema

import (
	"strings"
	"testing"
)

// TestYAMLSyntaxErrorLine covers yaml.v3 reporting a block parser error
// at the start of the enclosing construct: a mis-indented key in a later
// document, or deep in a nested mapping, was reported where the document
// or the mapping starts.
func TestYAMLSyntaxErrorLine(t *testing.T) {
	first := "id: a\nprompt: p\nexpect: {}\n"
	tests := []struct{ name, src, want string }{
		{"second document", first + "---\nid: b\nprompt: p\nneeds: [f]\nexpect:\n  calls: []\n  answer: x\n max_calls: 3\n",
			"x.yaml:11:2: YAML syntax: did not find expected key"},
		{"nested mapping", "id: a\nprompt: p\nexpect:\n  calls:\n    - tool: f\n      args:\n        x: 1\n       y: 2\n",
			"x.yaml:8:8: YAML syntax: did not find expected key"},
		{"sequence item", "id: a\nprompt: p\nexpect:\n  calls:\n    - tool: f\n   - tool: g\n",
			"x.yaml:6:4: YAML syntax: did not find expected key"},
		{"tab in a later document", first + "---\nid: b\nprompt: p\nexpect:\n\tanswer: x\n",
			"x.yaml:8:1: YAML syntax: found character that cannot start any token (this line is indented with a tab"},
		{"tab after spaces", "id: a\nprompt: p\nexpect:\n  \tanswer: x\n",
			"x.yaml:4:3: YAML syntax: found character that cannot start any token (this line is indented with a tab"},
		// yaml.v3 reports this one at the line before the tab.
		{"tab on a deep line", "id: a\nprompt: p\nneeds: [calculate]\nexpect:\n  calls:\n    - tool: calculate\n      args:\n        expression: x\n  max_calls: 3\n\tanswer: x\n",
			"x.yaml:10:1: YAML syntax: found a tab character that violates indentation (this line is indented with a tab"},
		{"unquoted colon", "id: b\nprompt: Compute this: 2+2\nexpect:\n  no_calls: true\n",
			`x.yaml:2:21: YAML syntax: mapping values are not allowed in this context (the value of prompt has a colon followed by a space, which YAML reads as a new key: quote the value`},
		{"unquoted colon nested", "id: b\nprompt: p\nexpect:\n  answer:\n    $contains: note: x\n",
			`x.yaml:5:20: YAML syntax: mapping values are not allowed in this context (the value of $contains has a colon`},
		// A flow mapping's error stays at the line where it opens.
		{"unclosed flow mapping", "id: a\nprompt: p\nexpect:\n  answer: {$contains: x\n  max_calls: 2\n",
			"x.yaml:4:1: YAML syntax: did not find expected ',' or '}' (a { … } mapping that starts on this line is not closed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := ParseCases("x.yaml", []byte(tt.src))
			if len(errs) != 1 {
				t.Fatalf("got %d errors: %v", len(errs), errs)
			}
			if got := errs[0].Error(); !strings.HasPrefix(got, tt.want) {
				t.Errorf("got  %s\nwant %s…", got, tt.want)
			}
		})
	}
}
