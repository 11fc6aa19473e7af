package schema

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/matchers"
)

func TestLoadCases(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"cases/b.yaml":     "id: b1\nprompt: p\nneeds: [f]\nexpect: {calls: [{tool: f, args: {x: 1}}]}\n---\n# two\nid: b2\nprompt: q\nexpect: {no_calls: true}\n---\n",
		"cases/sub/a.yml":  "id: a\nprompt: p\nexpect: {answer: {$contains: x}}\n",
		"cases/sub/c.yaml": "id: c\nprompt: p\nexpect: {answr: x}\n",
		"other/d.yaml":     "id: d\nprompt: p\nexpect: {}\n",
	})
	t.Chdir(dir)
	cases, err := LoadCases([]string{"cases/**/*.yaml", "cases/**/*.yml", "missing/*.yaml"})
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("err = %v", err)
	}
	wantErr := "cases/sub/c.yaml:3:10: expect.answr: unknown field \"answr\" (did you mean \"answer\"?)\nmissing/*.yaml: pattern matches no file; resolved from the working directory " + dir +
		" (paths in a config resolve from there, not from the config's directory)"
	if es.Error() != wantErr {
		t.Errorf("errors:\n%s\nwant:\n%s", es.Error(), wantErr)
	}
	var got []string
	for _, c := range cases {
		got = append(got, c.ID+"@"+filepath.ToSlash(c.File)+":"+itoa(c.Line)+":"+itoa(c.Col))
		if len(c.RunDigest) != 64 || c.Expectation == nil {
			t.Errorf("%s: digest %q, expectation %v", c.ID, c.RunDigest, c.Expectation)
		}
	}
	want := []string{"b1@cases/b.yaml:1:1", "b2@cases/b.yaml:7:1", "a@cases/sub/a.yml:1:1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cases %v, want %v", got, want)
	}
	// The digest follows content, not position or formatting.
	d1 := cases[0].RunDigest
	c2, _ := ParseCases("elsewhere.yaml", []byte("# moved\n\nneeds: [f]\nid: b1\nexpect:\n  calls:\n    - tool: f\n      args:\n        x: 1.0\nprompt: p\n"))
	if len(c2) != 1 || c2[0].RunDigest != d1 {
		t.Errorf("digest changed with formatting")
	}
	c3, _ := ParseCases("x.yaml", []byte("id: b1\nprompt: p2\nneeds: [f]\nexpect: {calls: [{tool: f, args: {x: 1}}]}\n"))
	if len(c3) != 1 || c3[0].RunDigest == d1 {
		t.Errorf("digest did not change with content")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestParseCasesDecode(t *testing.T) {
	src := `id: full
description: d
tags: [a, b]
messages:
  - {role: system, content: s}
  - {role: user, content: u}
system: sys
needs: [f]
expect:
  calls: [{tool: f, args: {n: 9007199254740992, neg: -3, flt: 1.5, s: "x", nul: null}}]
golden:
  calls: [{tool: f, args: {n: 9007199254740992, neg: -3.0, flt: 1.5, s: x, nul: null, extra: true}}]
  answer: done
`
	cases, errs := ParseCases("f.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c := cases[0]
	if c.Description != "d" || c.System != "sys" || !reflect.DeepEqual(c.Tags, []string{"a", "b"}) ||
		!reflect.DeepEqual(c.Messages, []Message{{"system", "s"}, {"user", "u"}}) || c.Golden.Answer != "done" ||
		len(c.Golden.Calls) != 1 || c.Golden.Calls[0].Tool != "f" {
		t.Errorf("decoded %+v", c)
	}
}

func TestParseCasesErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"id: a\nprompt: p\nexpect: {}\nexpect: {}\n", `x.yaml:4:1: duplicate key "expect"`},
		{"- a\n- b\n", `x.yaml:1:1: want a case (a mapping with id, prompt, expect, …), got list`},
		{"id: a\nprompt: p\nexpect: {}\ngolden: {answer: x, calls: [{tool: f}]}\n", ""},
		{"id: a\nprompt: p\nexpect: {calls: [{tool: f}]}\n", `x.yaml:3:19: expect.calls[0].tool: tool "f" is not in needs (the case has no needs)`},
		{"id: a\nprompt: p\nexpect: {}\n---\nid: b\nprompt: [\n", `x.yaml:7:1: YAML syntax: did not find expected node content`},
		{"id: a\nprompt: p\nexpect:\n\tanswer: x\n", `x.yaml:4:1: YAML syntax: found character that cannot start any token (this line is indented with a tab: YAML indents with spaces only)`},
		{"id: a\nprompt: \"unclosed\nexpect: {}\n", `x.yaml:2:1: YAML syntax: found unexpected end of stream (a quoted string that starts on this line is not closed?)`},
		{"id: a\nprompt: p\nexpect:\n  answer: x\n bad: 1\n", `x.yaml:5:2: YAML syntax: did not find expected key (check the indentation of this line: it does not line up with the keys or items above it)`},
		{"id: a\nprompt: p\nexpect: {answer: !custom x}\n", `x.yaml:3:18: unsupported tag !custom`},
		// Golden arguments are scored as a model's arrive, JSON numbers
		// with their text: an integer beyond 2^53 is exact, 10.0 is not
		// an $int (validate of a config on Ollama, which re-encodes
		// arguments, checks big integers apart: runconfig).
		{"id: a\nprompt: p\nneeds: [f]\nexpect: {calls: [{tool: f, args: {n: 9007199254740993}}]}\ngolden: {answer: x, calls: [{tool: f, args: {n: 9007199254740993}}]}\n", ""},
		{"id: a\nprompt: p\nneeds: [f]\nexpect: {calls: [{tool: f, args: {n: {$int: 10}}}]}\ngolden: {answer: x, calls: [{tool: f, args: {n: 10.0}}]}\n",
			"x.yaml:5:29: golden: rejected (wrong_args): calls[0].args.n: want integer 10, got 10.0 (expect.calls[0])"},
		{"id: a\nprompt: p\nneeds: [f]\nexpect: {calls: [{tool: f, args: {n: {$int: 10}}}]}\ngolden: {answer: x, calls: [{tool: f, args: {n: 10}}]}\n", ""},
		// A misspelt required field is one line, not also "missing".
		{"id: a\nprompt: p\nexpect: {}\ngolden: {answr: x, calls: [{tol: f}]}\n",
			"x.yaml:4:10: golden.answr: unknown field \"answr\" (did you mean \"answer\"?)\nx.yaml:4:29: golden.calls[0].tol: unknown field \"tol\" (did you mean \"tool\"?)"},
		{"ID: a\nprompt: p\nexpect: {}\n", `x.yaml:1:1: ID: unknown field "ID" (did you mean "id"?)`},
		// Judged answers and their labelled answers; a golden answer is
		// left to judge-check (no judge offline).
		{"id: a\nprompt: p\nexpect: {answer: {$judge: says hi}}\ngolden: {answer: bye}\ncalibration: [{answer: hi, verdict: pass}, {answer: x, verdict: fail, note: n}]\n", ""},
		{"id: a\nprompt: p\nexpect: {answer: {$contains: hi}}\ncalibration: [{answer: hi, verdict: pass}]\n",
			`x.yaml:4:15: calibration[0]: calibration is for a judged answer, but expect.answer has no {$judge: …} in the default cell`},
		{"id: a\nprompt: p\nexpect: {answer: {$judge: hi}}\ncalibration: [{answer: hi, verdict: ok}]\n", `x.yaml:4:28: calibration[0].verdict: want one of "pass", "fail", got "ok"`},
	}
	for _, tt := range tests {
		_, errs := ParseCases("x.yaml", []byte(tt.src))
		got := ""
		if len(errs) > 0 {
			got = errs.Error()
		}
		if got != tt.want {
			t.Errorf("%q:\n got  %s\n want %s", tt.src, got, tt.want)
		}
	}
}

func TestGlob(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"cases/a.yaml": "", "cases/x/b.yaml": "", "cases/x/y/c.yaml": "", "cases/x/d.txt": "",
		"cases/.hidden/e.yaml": "", "other/f.yaml": "",
	})
	t.Chdir(dir)
	tests := []struct {
		pat  string
		want []string
	}{
		{"cases/**/*.yaml", []string{"cases/a.yaml", "cases/x/b.yaml", "cases/x/y/c.yaml"}},
		{"cases/*.yaml", []string{"cases/a.yaml"}},
		{"cases/x/**", []string{"cases/x/b.yaml", "cases/x/d.txt", "cases/x/y/c.yaml"}},
		{"**/f.yaml", []string{"other/f.yaml"}},
		{"cases/x/b.yaml", []string{"cases/x/b.yaml"}},
		{"cases/nope.yaml", nil},
		{"nope/**/*.yaml", nil},
		{filepath.ToSlash(filepath.Join(dir, "other", "*.yaml")), []string{filepath.Join(dir, "other", "f.yaml")}},
	}
	for _, tt := range tests {
		got, err := Glob(tt.pat)
		if err != nil {
			t.Errorf("%s: %v", tt.pat, err)
			continue
		}
		for i := range got {
			got[i] = filepath.ToSlash(got[i])
		}
		for i := range tt.want {
			tt.want[i] = filepath.ToSlash(tt.want[i])
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Glob(%q) = %v, want %v", tt.pat, got, tt.want)
		}
	}
	if _, err := Glob("cases/[.yaml"); err == nil {
		t.Error("bad pattern accepted")
	}
}

func TestErrorString(t *testing.T) {
	for _, tt := range []struct {
		e    Error
		want string
	}{
		{Error{File: "a.yaml", Line: 3, Col: 5, Path: "expect.calls[0]", Msg: "m"}, "a.yaml:3:5: expect.calls[0]: m"},
		{Error{File: "a.yaml", Line: 3, Col: 5, Msg: "m"}, "a.yaml:3:5: m"},
		{Error{File: "a.yaml", Msg: "m"}, "a.yaml: m"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestWhenCell(t *testing.T) {
	for _, tt := range []struct {
		entry string
		want  matchers.Cell
	}{
		{"{confirm: deny, answer: x}", matchers.Cell{Temperature: 0, Tools: "needed", Confirm: "deny", Descriptions: "default"}},
		{"{confirm: [approve, deny], answer: x}", matchers.Cell{Tools: "needed", Confirm: "approve", Descriptions: "default"}},
		{"{model: [m1, m2], temperature: [0.7, 0], tools: n8, descriptions: [terse], answer: x}",
			matchers.Cell{Model: "m1", Temperature: 0.7, Tools: "n8", Confirm: "auto", Descriptions: "terse"}},
		{"{temperature: 1, answer: x}", matchers.Cell{Temperature: 1, Tools: "needed", Confirm: "auto", Descriptions: "default"}},
		{"{answer: x}", GoldenCell},
	} {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(tt.entry), &m); err != nil {
			t.Fatal(err)
		}
		if got := WhenCell(m); got != tt.want {
			t.Errorf("WhenCell(%s) = %+v, want %+v", tt.entry, got, tt.want)
		}
	}
}

func TestWhenGoldens(t *testing.T) {
	const doc = `id: a
prompt: p
needs: [f]
expect:
  calls: [{tool: f}]
  answer: done
  when:
    - {tools: n8, max_calls: 3}
    - confirm: deny
      answer: {$contains: declined}
      golden: {calls: [{tool: f, args: {n: 1}}], answer: It was declined.}
golden: {calls: [{tool: f}], answer: done}
`
	cs, errs := ParseCases("c.yaml", []byte(doc))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c := cs[0]
	want := []WhenGolden{{When: 1, Golden: Golden{Calls: []GoldenCall{{Tool: "f", Args: map[string]any{"n": json.Number("1")}}}, Answer: "It was declined."}}}
	if !reflect.DeepEqual(c.WhenGoldens, want) {
		t.Errorf("WhenGoldens = %+v, want %+v", c.WhenGoldens, want)
	}
	// The matchers never see the goldens: the stored expectation has none.
	if w := c.Expect["when"].([]any)[1].(map[string]any); w["golden"] != nil || w["confirm"] != "deny" {
		t.Errorf("Expect keeps when[1] = %v", w)
	}
	// and the rest still compiles.
	if _, err := matchers.CompileExpect(c.Expect); err != nil {
		t.Errorf("stored Expect does not compile: %v", err)
	}
	// A when-golden judges no run: editing it keeps the run digest.
	cs2, errs := ParseCases("c.yaml", []byte(strings.Replace(doc, "It was declined.", "It was declined by the user.", 1)))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if cs2[0].RunDigest != c.RunDigest {
		t.Error("changing a when golden changed the run digest")
	}
}
