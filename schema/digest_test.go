package schema

import (
	"strings"
	"testing"
)

// TestRunDigestIgnoresScoring: the run digest follows what the model sees
// (prompt, system, messages, needs, avoid) and nothing that only judges or
// describes a run (expect with its when entries, golden, description,
// tags), so editing a matcher keeps every run id.
func TestRunDigestIgnoresScoring(t *testing.T) {
	const base = `id: c
description: d
tags: [a]
system: s
prompt: p
needs: [f, g]
avoid: [h]
expect:
  calls: [{tool: f, args: {x: 1}}]
  answer: {$contains: "5"}
  when:
    - confirm: deny
      answer: {$contains: "no"}
golden:
  calls: [{tool: f, args: {x: 1}}]
  answer: "5"
`
	digest := func(t *testing.T, src string) string {
		t.Helper()
		cs, errs := ParseCases("c.yaml", []byte(src))
		if len(errs) > 0 {
			t.Fatalf("%s\n%v", src, errs)
		}
		return cs[0].RunDigest
	}
	d0 := digest(t, base)
	for _, tc := range []struct {
		name, old, new string
		same           bool
	}{
		{"description", "description: d", "description: other", true},
		{"tags", "tags: [a]", "tags: [a, b]", true},
		{"expect answer", `answer: {$contains: "5"}`, `answer: {$regex: "5"}`, true},
		{"expect args", "args: {x: 1}}]\n  answer", "args: {x: {$any: true}}}]\n  answer", true},
		{"when", `answer: {$contains: "no"}`, `answer: {$contains: "sorry"}`, true},
		{"golden", `answer: "5"`, `answer: "it is 5"`, true},
		{"prompt", "prompt: p", "prompt: q", false},
		{"system", "system: s", "system: t", false},
		{"needs", "needs: [f, g]", "needs: [f, g, i]", false},
		{"needs order", "needs: [f, g]", "needs: [g, f]", false},
		{"avoid", "avoid: [h]", "avoid: [h, j]", false},
		{"messages", "prompt: p", "messages: [{role: user, content: p}]", false},
	} {
		src := strings.Replace(base, tc.old, tc.new, 1)
		if src == base {
			t.Fatalf("%s: edit %q not applied", tc.name, tc.old)
		}
		if got := digest(t, src) == d0; got != tc.same {
			t.Errorf("editing %s: run digest unchanged = %v, want %v", tc.name, got, tc.same)
		}
	}
}
