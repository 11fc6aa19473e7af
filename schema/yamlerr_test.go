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
