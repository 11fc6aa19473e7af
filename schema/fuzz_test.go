package schema

import (
	"testing"

	"github.com/toolward/toolward/bench/casegen"
)

// FuzzParseCases checks that no input makes the case loader panic, and
// that every error it reports has a position inside the file.
//
// It found yaml.v3's parser errors at the end of the input pointing one
// line past it ("[" gave line 2).
func FuzzParseCases(f *testing.F) {
	f.Add(casegen.Case(0))
	f.Add(casegen.Case(1))
	f.Add("id: a\nprompt: p\nexpect: {calls: [{tool: f, args: {x: {$contians: 1}}}]}\n---\n- x\n")
	f.Add("a: &x [*x]\n")
	f.Add("[")
	f.Add("id: a\nprompt: p\nexpect: {answer: .nan}\ngolden: {answer: x}\n")
	f.Fuzz(func(t *testing.T, src string) {
		_, errs := ParseCases("f.yaml", []byte(src))
		lines := maxLine([]byte(src))
		for _, e := range errs {
			if e.Line < 0 || e.Line > lines || e.Col < 0 || e.Msg == "" {
				t.Fatalf("bad error %+v in a file of %d lines", e, lines)
			}
		}
	})
}
