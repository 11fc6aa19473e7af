package runconfig

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/matchers"

	"github.com/toolward/toolward/schema"
)

// The loader checks a case against the JSON Schema translated from
// #Case, and its matchers with matchers.CompileExpect (see schema's
// package doc). These tests hold both to CUE: the CUE schema (#Case,
// #Matcher) and the loader must accept and reject the same corpus. Rules
// the CUE schema documents as "checked in Go" are marked goOnly: CUE
// accepts those inputs and only Go rejects them.

var matcherCorpus = []struct {
	spec string // YAML
	ok   bool
}{
	{`5`, true}, {`"x"`, true}, {`null`, true}, {`true`, true}, {`[1, [2, {a: 3}]]`, true},
	{`{a: 1, b: {c: [x]}}`, true}, {`{}`, true}, {`{"": 1}`, true},
	{`{$any: true}`, true}, {`{$any: false}`, false}, {`{$any: 1}`, false},
	{`{$contains: x}`, true}, {`{$contains: {$regex: a}}`, true}, {`{$contains: [1]}`, true},
	{`{$one_of: [a, {$contains: b}, 3]}`, true}, {`{$one_of: []}`, false}, {`{$one_of: a}`, false},
	{`{$absent_or: {$one_of: [1, 2]}}`, true}, {`{$absent_or: {$nope: 1}}`, false},
	{`{$regex: "^a+$"}`, true}, {`{$regex: 5}`, false},
	{`{$not: {$contains: deleted}}`, true}, {`{$not: {$contians: x}}`, false},
	{`{$approx: {value: 1.5, tol: 0.1}}`, true}, {`{$approx: {value: 1}}`, false},
	{`{$approx: {value: 1, tol: -1}}`, false}, {`{$approx: {value: a, tol: 1}}`, false},
	{`{$approx: {value: 1, tol: 1, x: 2}}`, false}, {`{$approx: 3}`, false},
	{`{$contains: x, $regex: y}`, false}, {`{$contains: x, a: 1}`, false},
	{`{$contians: x}`, false}, {`{a: {b: {$oneof: [1]}}}`, false}, {`[{$any: true}, {$anything: 1}]`, false},
	{`{a: {$any: true}, b: {$absent_or: null}}`, true},
	{`{$norm: "New York"}`, true}, {`{$norm: 5}`, false}, {`{$norm: [a]}`, false},
	{`{$int: 10}`, true}, {`{$int: -3}`, true}, {`{$int: 1.5}`, false}, {`{$int: "10"}`, false},
}

func TestMatcherAgreement(t *testing.T) {
	if err := load(); err != nil {
		t.Fatal(err)
	}
	def := compiled.root.LookupPath(cue.ParsePath("#Matcher"))
	for _, tt := range matcherCorpus {
		var v any
		if err := yaml.Unmarshal([]byte(tt.spec), &v); err != nil {
			t.Fatal(err)
		}
		_, goErr := matchers.CompileExpect(map[string]any{"answer": v})
		cueErr := cueCheck(t, def, v)
		if (goErr == nil) != tt.ok || (cueErr == nil) != tt.ok {
			t.Errorf("%s: want ok=%v; Go: %v; CUE: %v", tt.spec, tt.ok, goErr, cueErr)
		}
	}
}

// cueCheck unifies the JSON form of v with def.
func cueCheck(t *testing.T, def cue.Value, v any) error {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	compiled.mu.Lock()
	defer compiled.mu.Unlock()
	val := compiled.ctx.CompileBytes(js)
	if err := val.Err(); err != nil {
		t.Fatal(err)
	}
	return def.Unify(val).Validate(cue.Concrete(true))
}

const base = `id: c1
prompt: p
needs: [f, g]
`

var caseCorpus = []struct {
	name   string
	doc    string
	ok     bool
	goOnly bool // a rule only Go checks (CUE accepts)
}{
	{"minimal", base + "expect: {}\n", true, false},
	{"full", `id: sql-engineering-raise
description: d
tags: [sql, multi-step]
prompt: What's the average salary?
system: be brief
needs: [query_database, calculate]
expect:
  calls:
    - tool: query_database
      args: {sql: {$contains: Engineering}}
    - tool: calculate
      args: {expression: {$any: true}}
  order: sequence
  strict_args: false
  forbid: [delete_employee]
  max_calls: 6
  answer: {$contains: "84,960"}
  when:
    - confirm: deny
      answer: {$not: {$contains: deleted}}
    - {model: [a, b], temperature: [0, 0.7], tools: n8, descriptions: terse, order: unordered, no_calls: false, max_calls: 2, forbid: [], strict_args: true, calls: []}
golden:
  calls:
    - {tool: query_database, args: {sql: "SELECT 1 -- Engineering"}}
    - {tool: calculate, args: {expression: "1"}}
  answer: It costs 84,960.
`, true, false},
	{"messages", "id: m\nmessages: [{role: user, content: hi}, {role: assistant, content: hello}]\nexpect: {no_calls: true}\n", true, false},
	{"missing id", "prompt: p\nexpect: {}\n", false, false},
	{"missing expect", "id: x\nprompt: p\n", false, false},
	{"missing prompt", "id: x\nexpect: {}\n", false, false},
	{"prompt and messages", "id: x\nprompt: p\nmessages: [{role: user, content: hi}]\nexpect: {}\n", false, false},
	{"empty prompt", "id: x\nprompt: ''\nexpect: {}\n", false, false},
	{"empty messages", "id: x\nmessages: []\nexpect: {}\n", false, false},
	{"bad role", "id: x\nmessages: [{role: robot, content: hi}]\nexpect: {}\n", false, false},
	{"message extra field", "id: x\nmessages: [{role: user, content: hi, name: n}]\nexpect: {}\n", false, false},
	{"bad id", "id: 'has space'\nprompt: p\nexpect: {}\n", false, false},
	{"numeric id", "id: 42\nprompt: p\nexpect: {}\n", false, false},
	{"unknown field", base + "expect: {}\npromt: x\n", false, false},
	{"tags not list", base + "tags: x\nexpect: {}\n", false, false},
	{"needs bad name", "id: c\nprompt: p\nneeds: ['a b']\nexpect: {}\n", false, false},
	{"expect not mapping", base + "expect: [1]\n", false, false},
	{"expect unknown field", base + "expect: {answr: x}\n", false, false},
	{"call without tool", base + "expect: {calls: [{args: {}}]}\n", false, false},
	{"call extra field", base + "expect: {calls: [{tool: f, arg: {}}]}\n", false, false},
	{"call args list", base + "expect: {calls: [{tool: f, args: [1]}]}\n", false, false},
	{"call args operator", base + "expect: {calls: [{tool: f, args: {$any: true}}]}\n", false, false},
	{"call bad tool name", base + "expect: {calls: [{tool: 'a b'}]}\n", false, false},
	{"bad matcher", base + "expect: {calls: [{tool: f, args: {x: {$contians: y}}}]}\n", false, false},
	{"bad order", base + "expect: {order: random}\n", false, false},
	{"negative max_calls", base + "expect: {max_calls: -1}\n", false, false},
	{"min_calls", base + "expect: {min_calls: 1}\n", true, false},
	{"negative min_calls", base + "expect: {min_calls: -1}\n", false, false},
	{"min_calls with no_calls", base + "expect: {min_calls: 1, no_calls: true}\n", false, true},
	{"golden todo", base + "expect: {}\ngolden: {answer: a, todo: write the arguments}\n", false, true},
	{"golden todo not a string", base + "expect: {}\ngolden: {answer: a, todo: 1}\n", false, false},
	{"strict_args string", base + "expect: {strict_args: 'yes'}\n", false, false},
	{"forbid string", base + "expect: {forbid: f}\n", false, false},
	{"answer matcher", base + "expect: {answer: {$one_of: [a, {$regex: b}]}}\n", true, false},
	{"answer bad", base + "expect: {answer: {$one_of: []}}\n", false, false},
	{"when unknown field", base + "expect: {when: [{confrim: deny, answer: x}]}\n", false, false},
	{"when bad confirm", base + "expect: {when: [{confirm: maybe, answer: x}]}\n", false, false},
	{"when empty selector", base + "expect: {when: [{model: '', answer: x}]}\n", false, false},
	{"when bad temperature", base + "expect: {when: [{temperature: hot, answer: x}]}\n", false, false},
	{"when not list", base + "expect: {when: {confirm: deny}}\n", false, false},
	{"when golden", base + `expect:
  calls: [{tool: f, args: {x: 1}}]
  answer: {$contains: done}
  when:
    - confirm: deny
      answer: {$contains: declined}
      golden:
        calls: [{tool: f, args: {x: 1}}]
        answer: The user declined; nothing was done.
    - {model: [m, n], temperature: [0.7], no_calls: true, answer: {$any: true}, golden: {answer: "I can't."}}
golden: {calls: [{tool: f, args: {x: 1}}], answer: done}
`, true, false},
	{"when golden no answer", base + "expect: {when: [{confirm: deny, answer: x, golden: {calls: []}}]}\n", false, false},
	{"when golden extra", base + "expect: {when: [{confirm: deny, answer: x, golden: {answer: x, note: y}}]}\n", false, false},
	{"when golden not mapping", base + "expect: {when: [{confirm: deny, answer: x, golden: x}]}\n", false, false},
	{"when golden call no tool", base + "expect: {when: [{confirm: deny, answer: x, golden: {answer: x, calls: [{args: {}}]}}]}\n", false, false},
	{"when golden args list", base + "expect: {when: [{confirm: deny, answer: x, golden: {answer: x, calls: [{tool: f, args: [1]}]}}]}\n", false, false},
	{"golden no answer", base + "expect: {}\ngolden: {calls: []}\n", false, false},
	{"golden extra", base + "expect: {}\ngolden: {answer: a, note: x}\n", false, false},
	{"golden call no tool", base + "expect: {}\ngolden: {answer: a, calls: [{args: {}}]}\n", false, false},
	{"golden args list", base + "expect: {}\ngolden: {answer: a, calls: [{tool: f, args: [1]}]}\n", false, false},
	{"state result", base + "expect: {state: [{tool: s, args: {x: 1}, result: {tickets: [{priority: high}]}}]}\n", true, false},
	{"state equals initial", base + "expect: {state: [{tool: s, equals: initial, ignore: ['a[*].id', '$.b'], ignore_order: true}]}\n", true, false},
	{"state equals golden", base + "expect: {state: [{tool: s, equals: golden}]}\ngolden: {calls: [{tool: f}], answer: done}\n", true, false},
	{"state in when", base + "expect: {when: [{confirm: deny, state: [{tool: s, equals: initial}]}]}\n", true, false},
	{"state both", base + "expect: {state: [{tool: s, result: 1, equals: golden}]}\n", false, false},
	{"state neither", base + "expect: {state: [{tool: s}]}\n", false, false},
	{"state bad equals", base + "expect: {state: [{tool: s, equals: fresh}]}\n", false, false},
	{"state ignore with result", base + "expect: {state: [{tool: s, result: 1, ignore: [a]}]}\n", false, false},
	{"state ignore_order with result", base + "expect: {state: [{tool: s, result: 1, ignore_order: true}]}\n", false, false},
	{"state ignore_order not bool", base + "expect: {state: [{tool: s, equals: initial, ignore_order: yes}]}\n", false, false},
	{"state unknown field", base + "expect: {state: [{tool: s, equal: golden}]}\n", false, false},
	{"state no tool", base + "expect: {state: [{equals: initial}]}\n", false, false},
	{"state not list", base + "expect: {state: {tool: s, equals: initial}}\n", false, false},
	{"user replies", base + `user: {replies: [Actually make it high., Thanks.]}
expect:
  calls: [{tool: f}]
  answer: {$contains: high}
  turns:
    - {calls: [{tool: f}], answer: {$contains: medium}}
    - {forbid: [g], answer: {$contains: high}}
    - {no_calls: true}
golden:
  turns:
    - {calls: [{tool: f}], answer: medium done}
    - {answer: now high}
    - {answer: "You're welcome: high it is."}
`, true, false},
	{"user simulated", base + "user: {instructions: You want the budget; name the project only when asked., max_turns: 4}\nexpect: {answer: {$contains: '450'}}\ngolden: {turns: [{answer: 'Which project?'}, {calls: [{tool: f}], answer: It is 450.}]}\n", true, false},
	{"user both", base + "user: {replies: [a], instructions: b}\nexpect: {}\n", false, false},
	{"user neither", base + "user: {max_turns: 3}\nexpect: {}\n", false, false},
	{"user empty replies", base + "user: {replies: []}\nexpect: {}\n", false, false},
	{"user empty reply", base + "user: {replies: ['']}\nexpect: {}\n", false, false},
	{"user unknown field", base + "user: {replys: [a]}\nexpect: {}\n", false, false},
	{"user max_turns 1", base + "user: {instructions: b, max_turns: 1}\nexpect: {}\n", false, false},
	{"turns unknown field", base + "user: {replies: [a]}\nexpect: {turns: [{answr: x}]}\n", false, false},
	{"turns in turns", base + "user: {replies: [a]}\nexpect: {turns: [{turns: []}]}\n", false, false},
	{"turns not list", base + "user: {replies: [a]}\nexpect: {turns: {answer: x}}\n", false, false},
	{"golden turns and answer", base + "user: {replies: [a]}\nexpect: {}\ngolden: {answer: x, turns: [{answer: y}, {answer: z}]}\n", false, false},
	{"golden turn no answer", base + "user: {replies: [a]}\nexpect: {}\ngolden: {turns: [{calls: []}, {answer: z}]}\n", false, false},
	// Rules the CUE schema leaves to Go.
	{"user max_turns with replies", base + "user: {replies: [a], max_turns: 3}\nexpect: {}\n", false, true},
	{"turns without user", base + "expect: {turns: [{answer: x}]}\n", false, true},
	{"turns past the replies", base + "user: {replies: [a]}\nexpect: {turns: [{}, {}, {answer: x}]}\n", false, true},
	{"golden turns without user", base + "expect: {}\ngolden: {turns: [{answer: y}]}\n", false, true},
	{"conversation golden without turns", base + "user: {replies: [a]}\nexpect: {}\ngolden: {answer: y}\n", false, true},
	{"golden turns count", base + "user: {replies: [a]}\nexpect: {}\ngolden: {turns: [{answer: y}]}\n", false, true},
	{"golden turn rejected", base + "user: {replies: [a]}\nexpect: {turns: [{}, {answer: yes}]}\ngolden: {turns: [{answer: x}, {answer: no}]}\n", false, true},
	{"state equals golden without golden", base + "expect: {state: [{tool: s, equals: golden}]}\n", false, true},
	{"state bad ignore path", base + "expect: {state: [{tool: s, equals: initial, ignore: ['a[x]']}]}\n", false, true},
	{"when no selector", base + "expect: {when: [{answer: x}]}\n", false, true},
	{"when no override", base + "expect: {when: [{confirm: deny}]}\n", false, true},
	{"no_calls with calls", base + "expect: {calls: [{tool: f}], no_calls: true}\n", false, true},
	{"when no_calls with calls", base + "expect: {when: [{confirm: deny, calls: [{tool: f}], no_calls: true}]}\n", false, true},
	{"bad regex", base + "expect: {answer: {$regex: '(a'}}\n", false, true},
	{"needs missing tool", base + "expect: {calls: [{tool: h}]}\n", false, true},
	{"golden rejected", base + "expect: {answer: yes}\ngolden: {answer: no}\n", false, true},
	{"when golden rejected", base + "expect: {answer: yes, when: [{confirm: deny, answer: declined, golden: {answer: yes}}]}\n", false, true},
	// The entry's own selectors pick the cell: under confirm: deny the
	// base answer no longer applies, so a deny answer passes.
	{"when golden in its cell", base + "expect: {answer: yes, when: [{confirm: [deny, approve], answer: declined, golden: {answer: declined}}]}\n", true, false},
	// Every entry selecting the cell applies, as in a run.
	{"when golden later entry", base + "expect: {when: [{confirm: deny, answer: declined, golden: {answer: declined}}, {tools: [n8], confirm: deny, answer: n8}]}\n", true, false},
	{"when golden other entry applies", base + "expect: {when: [{confirm: deny, answer: declined}, {confirm: deny, tools: n8, max_calls: 0, golden: {answer: declined, calls: [{tool: f}]}}]}\n", false, true},
	{"when golden no selector", base + "expect: {when: [{answer: x, golden: {answer: x}}]}\n", false, true},
	{"when golden needs", base + "expect: {when: [{confirm: deny, calls: [{tool: f}], golden: {answer: x}}]}\n", false, true},
}

func TestCaseSchemaAgreement(t *testing.T) {
	if err := load(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range caseCorpus {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			_, errs := schema.ParseCases("c.yaml", []byte(tt.doc))
			var v any
			if err := yaml.Unmarshal([]byte(tt.doc), &v); err != nil {
				t.Fatal(err)
			}
			cueErr := cueCheck(t, compiled.caseV, v)
			goOK := len(errs) == 0
			structOK := tt.ok || tt.goOnly
			if goOK != tt.ok {
				t.Errorf("Go: ok=%v, want %v: %v", goOK, tt.ok, errs)
			}
			if (cueErr == nil) != structOK {
				t.Errorf("CUE: ok=%v, want %v: %v", cueErr == nil, structOK, cueErr)
			}
		})
	}
}

// TestJSONSchemaMatchers checks the generated JSON Schema against the
// matcher corpus too, through a case's answer.
func TestJSONSchemaMatchers(t *testing.T) {
	js := caseJSONSchema(t)
	for _, tt := range matcherCorpus {
		var m any
		if err := yaml.Unmarshal([]byte(tt.spec), &m); err != nil {
			t.Fatal(err)
		}
		doc := map[string]any{"id": "x", "prompt": "p", "expect": map[string]any{"answer": m}}
		err := js.Validate(jsonRoundTrip(t, doc))
		// JSON Schema cannot tell a regex RE2 rejects; the corpus has none.
		if (err == nil) != tt.ok {
			t.Errorf("%s: JSON Schema ok=%v, want %v: %v", tt.spec, err == nil, tt.ok, err)
		}
	}
}

// TestRepoCasesAgreement runs the repository's own case suite through
// CUE: every document the loader accepts must satisfy #Case.
func TestRepoCasesAgreement(t *testing.T) {
	files, err := schema.Glob("../../cases/**/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no cases in ../../cases")
	}
	if err := load(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, errs := schema.ParseCases(f, src); len(errs) > 0 {
			continue // TestScripts/validate_repo reports these
		}
		dec := yaml.NewDecoder(bytes.NewReader(src))
		for {
			var v any
			if err := dec.Decode(&v); err != nil {
				break
			}
			if v == nil {
				continue
			}
			n++
			if err := cueCheck(t, compiled.caseV, v); err != nil {
				t.Errorf("%s: CUE rejects a case Go accepts: %v", f, err)
			}
		}
	}
	t.Logf("%d cases checked", n)
}
