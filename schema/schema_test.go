package schema

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/matchers"
)

var update = flag.Bool("update", false, "rewrite fixtures/invalid/*/want.txt and case.schema.json")

// TestInvalidFixtures runs Validate in every fixtures/invalid/<name>/
// directory and compares its lines with want.txt.
func TestInvalidFixtures(t *testing.T) {
	root, err := filepath.Abs("../fixtures/invalid")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		n++
		t.Run(d.Name(), func(t *testing.T) {
			dir := filepath.Join(root, d.Name())
			t.Chdir(dir)
			errs := Validate([]string{"."})
			var got strings.Builder
			for _, e := range errs {
				got.WriteString(e.Error() + "\n")
			}
			if *update {
				if err := os.WriteFile("want.txt", []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile("want.txt")
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", got.String(), want)
			}
			if len(errs) == 0 {
				t.Error("an invalid fixture validated cleanly")
			}
		})
	}
	if n < 10 {
		t.Errorf("only %d fixtures", n)
	}
}

func TestJSONSchemaUpToDate(t *testing.T) {
	got := CaseJSONSchema()
	if *update {
		if err := os.WriteFile("case.schema.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("case.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("schema/case.schema.json is stale: run `go test ./schema -run TestJSONSchemaUpToDate -update` (or toolward schema --jsonschema > schema/case.schema.json)")
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadConfigDefaults(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"cases/a.yaml": "id: a\nprompt: p\nexpect: {}\n",
		"configs/min.cue": `name: "min"
cases: ["cases/**/*.yaml"]
server: builtin: {}
backend: ollama: {}
matrix: models: ["qwen3:0.6b"]
`,
	})
	t.Chdir(dir)
	cfg, err := LoadConfig("configs/min.cue")
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Name: "min", Cases: []string{"cases/**/*.yaml"},
		Server:  Server{Builtin: &Builtin{}},
		Backend: Backend{Ollama: &Ollama{Host: "http://127.0.0.1:11434"}},
		Matrix: Matrix{Models: []string{"qwen3:0.6b"}, Seeds: []int{1}, Temperatures: []float64{0},
			Tools: []ToolSubset{{Name: "needed"}}, Confirm: []string{"auto"}, Descriptions: []string{"default"}},
		Limits: Limits{MaxIterations: 8, RunTimeout: Duration{120 * time.Second}, CallTimeout: Duration{30 * time.Second},
			Concurrency: 2, Retries: 2},
		Output: "results",
		File:   "configs/min.cue",
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got  %+v\nwant %+v", cfg, want)
	}
}

func TestLoadConfigFull(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"cases/x/a.yaml":                   "id: a\nprompt: p\nexpect: {}\n",
		"fixtures/descriptions/terse.yaml": "get_weather: Weather.\n",
		"sets/loud.yaml":                   "get_weather: WEATHER!\n",
		"configs/variance.cue": `name:  "variance"
cases: ["cases/**/*.yaml"]
server: url: "http://127.0.0.1:8765/mcp"
server: headers: Authorization: "Bearer x"
backend: ollama: {host: "http://gpu:11434", num_ctx: 4096, keep_alive: "5m", think: true, host_concurrency: 3}
description_sets: loud: "sets/loud.yaml"
filter: ["case=a*", "tag=demo"]
matrix: {
	models: ["qwen3:0.6b", "llama3.2:1b"]
	seeds: [1, 2, 3]
	temperatures: [0, 0.7]
	tools: [{name: "needed"}, for n in [8, 16] {name: "n\(n)", count: n}, {name: "web", include: ["fetch"], order: "given"}, {name: "all"}]
	confirm: ["approve", "deny"]
	descriptions: ["default", "terse", "loud"]
}
limits: {max_iterations: 4, run_timeout: "2m", call_timeout: "0", concurrency: 8, retries: 0}
output: "out"
`,
	})
	t.Chdir(dir)
	cfg, err := LoadConfig("configs/variance.cue")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.URL != "http://127.0.0.1:8765/mcp" || cfg.Server.Headers["Authorization"] != "Bearer x" || cfg.Server.Builtin != nil {
		t.Errorf("server %+v", cfg.Server)
	}
	if o := cfg.Backend.Ollama; o == nil || !reflect.DeepEqual(*o, Ollama{Host: "http://gpu:11434", NumCtx: 4096, KeepAlive: "5m", Think: true, HostConcurrency: 3}) {
		t.Errorf("backend %+v", cfg.Backend.Ollama)
	}
	wantTools := []ToolSubset{{Name: "needed"}, {Name: "n8", Count: 8}, {Name: "n16", Count: 16},
		{Name: "web", Include: []string{"fetch"}, Order: "given"}, {Name: "all"}}
	if !reflect.DeepEqual(cfg.Matrix.Tools, wantTools) {
		t.Errorf("tools %+v", cfg.Matrix.Tools)
	}
	if !reflect.DeepEqual(cfg.Matrix.Temperatures, []float64{0, 0.7}) || !reflect.DeepEqual(cfg.Matrix.Seeds, []int{1, 2, 3}) {
		t.Errorf("matrix %+v", cfg.Matrix)
	}
	if cfg.Limits != (Limits{MaxIterations: 4, RunTimeout: Duration{2 * time.Minute}, CallTimeout: Duration{0}, Concurrency: 8, Retries: 0}) {
		t.Errorf("limits %+v", cfg.Limits)
	}
	if !reflect.DeepEqual(cfg.Filter, []string{"case=a*", "tag=demo"}) {
		t.Errorf("filter %v", cfg.Filter)
	}
	if cfg.Output != "out" {
		t.Errorf("output %q", cfg.Output)
	}
	if got := DescriptionFile(cfg, "terse"); got != filepath.Join("fixtures", "descriptions", "terse.yaml") {
		t.Errorf("DescriptionFile terse = %q", got)
	}
	if got := DescriptionFile(cfg, "loud"); got != "sets/loud.yaml" {
		t.Errorf("DescriptionFile loud = %q", got)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	head := "name: \"x\"\ncases: [\"a.yaml\"]\n"
	tests := []struct{ src, want string }{
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\nlimits: concurency: 8\n",
			`c.cue:6:9: limits.concurency: unknown field "concurency" (did you mean "concurrency"?)`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: models: []\n",
			`c.cue:5:9: matrix.models: want at least 1 element(s), got 0`},
		{head + "server: {}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\n",
			`c.cue:3:9: server: want exactly one of builtin, command, url, got none`},
		{head + "server: {builtin: {}, url: \"http://x\"}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\n",
			`c.cue:3:9: server: want exactly one of builtin, command, url, got builtin and url`},
		{head + "server: builtin: {}\nbackend: {ollama: {}, replay: \"c\"}\nmatrix: models: [\"m\"]\n",
			`c.cue:4:10: backend: want exactly one of ollama, openai, replay, got ollama and replay`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: {models: [\"m\"], confirm: [\"maybe\"]}\n",
			`c.cue:5:35: matrix.confirm[0]: want one of "approve", "auto", "deny", got "maybe"`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\nlimits: run_timeout: \"2 minutes\"\n",
			`c.cue:6:22: limits.run_timeout: want a duration such as "90s" or "2m", got "2 minutes"`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\nlimits: max_iterations: 0\n",
			`c.cue:6:25: limits.max_iterations: want >0, got 0`},
		{head + "server: builtin: {}\nbackend: ollama: {}\n",
			`c.cue:1:1: missing field "matrix"`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\nmatrix: models: [\"n\"]\n",
			`c.cue:6:18: matrix.models[0]: want "m", got "n"`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: {models: [\"m\"], tools: [{name: \"n8\", count: 8, include: [\"f\"]}]}\n",
			`c.cue:5:33: matrix.tools[0]: count and include are exclusive`},
		{head + "server: {command: [\"x\"], headers: {a: \"b\"}}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\n",
			`c.cue:3:26: server.headers: headers apply to url servers only`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: {models: [\"m\", \"m\"], seeds: [1, 1]}\n",
			"c.cue:5:24: matrix.models[1]: duplicate value \"m\"\nc.cue:5:41: matrix.seeds[1]: duplicate value 1"},
		{"name: \"x\"\ncases: [\"nothing/*.yaml\"]\nserver: builtin: {}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\n",
			`c.cue:2:9: cases[0]: pattern "nothing/*.yaml" matches no file`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: {models: [\"m\"], seeds: \"1\"}\n",
			`c.cue:5:32: matrix.seeds: want list, got "1"`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: {models: [\"m\"], temperatures: [0, \"hot\"]}\n",
			`c.cue:5:43: matrix.temperatures[1]: want number, got "hot"`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: {models: [\"m\"], tools: [{name: \"n\", count: -1}]}\n",
			`c.cue:5:52: matrix.tools[0].count: want >0, got -1`},
		{head + "server: builtin: {}\nbackend: ollama: host: \"localhost\"\nmatrix: models: [\"m\"]\n",
			`c.cue:4:24: backend.ollama.host: want an http:// or https:// URL, got "localhost"`},
		{"name: \"my run\"\ncases: [\"a.yaml\"]\nserver: builtin: {}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\n",
			`c.cue:1:7: name: want a name (letters, digits, _ . -), got "my run"`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: {models: [\"m\"], tools: [{name: \"x\", include: [\"bad tool\"]}]}\n",
			`c.cue:5:55: matrix.tools[0].include[0]: want a tool name (letters, digits, _ . : / -), got "bad tool"`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: models: [\"m\"\n",
			`c.cue:5:22: expected ']', found 'EOF'`},
	}
	for _, tt := range tests {
		dir := writeFiles(t, map[string]string{"c.cue": tt.src, "a.yaml": "id: a\nprompt: p\nexpect: {}\n"})
		t.Chdir(dir)
		_, err := LoadConfig("c.cue")
		var es Errors
		if !errors.As(err, &es) {
			t.Errorf("%s\n=> %v, want Errors", tt.src, err)
			continue
		}
		if es.Error() != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, es.Error(), tt.want)
		}
	}
}

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
	wantErr := "cases/sub/c.yaml:3:10: expect.answr: unknown field \"answr\" (did you mean \"answer\"?)\nmissing/*.yaml: pattern matches no file"
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
		// Golden arguments are scored as a model's would arrive (JSON
		// numbers are float64), so an integer beyond 2^53 cannot pass.
		{"id: a\nprompt: p\nneeds: [f]\nexpect: {calls: [{tool: f, args: {n: 9007199254740993}}]}\ngolden: {answer: x, calls: [{tool: f, args: {n: 9007199254740993}}]}\n",
			"x.yaml:5:29: golden: rejected (wrong_args): calls[0].args.n: want 9007199254740993, got 9007199254740992 " +
				"(model arguments are JSON numbers, exact only up to 2^53: write the value as a string or use $approx) (expect.calls[0])"},
		// A misspelt required field is one line, not also "missing".
		{"id: a\nprompt: p\nexpect: {}\ngolden: {answr: x, calls: [{tol: f}]}\n",
			"x.yaml:4:10: golden.answr: unknown field \"answr\" (did you mean \"answer\"?)\nx.yaml:4:29: golden.calls[0].tol: unknown field \"tol\" (did you mean \"tool\"?)"},
		{"ID: a\nprompt: p\nexpect: {}\n", `x.yaml:1:1: ID: unknown field "ID" (did you mean "id"?)`},
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

func TestValidateClean(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"cases/a.yaml":      "id: a\nprompt: p\nneeds: [f]\nexpect: {calls: [{tool: f}]}\ngolden: {calls: [{tool: f}], answer: ok}\n",
		"configs/c.cue":     "name: \"c\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"cassettes\"\nmatrix: models: [\"m\"]\n",
		"configs/notes.txt": "ignored",
		"cassettes/a.yaml":  "case: a\nruns: [{turns: [{content: ok}]}]\n",
	})
	t.Chdir(dir)
	sum, errs := Check([]string{"cases", "configs", "cases/a.yaml", "cassettes"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if want := (Summary{CaseFiles: 1, Cases: 1, Configs: 1, Cassettes: 1}); sum != want {
		t.Errorf("summary %+v, want %+v", sum, want)
	}
	errs = Validate([]string{"nope", "configs/notes.txt"})
	if len(errs) != 2 || errs[0].Msg != "not a case file, cassette file (.yaml, .yml) or config (.cue)" || errs[1].Msg != "no such file or directory" {
		t.Fatalf("got %v", errs)
	}
	// A directory with nothing to check is reported, not passed silently.
	if err := os.Mkdir("empty", 0o755); err != nil {
		t.Fatal(err)
	}
	errs = Validate([]string{"empty"})
	if len(errs) != 1 || errs[0].Error() != "empty: no case files, cassette files (.yaml, .yml) or configs (.cue) in this directory" {
		t.Fatalf("got %v", errs)
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

func TestLoadConfigDescriptionFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.yaml":                           "id: a\nprompt: p\nexpect: {}\n",
		"fixtures/descriptions/terse.yaml": "- not a mapping\n",
		"fixtures/descriptions/plain.yaml": "get_weather: Weather now.\n",
		"fixtures/descriptions/blank.yaml": "get_weather: Weather now.\nget_time: \"  \"\n",
		"c.cue": `name: "x"
cases: ["a.yaml"]
server: builtin: {}
backend: ollama: {}
description_sets: gone: "sets/gone.yaml"
matrix: {models: ["m"], descriptions: ["default", "plain", "terse", "gone", "absent", "blank"]}
`,
	})
	t.Chdir(dir)
	_, err := LoadConfig("c.cue")
	want := `c.cue:5:19: description_sets.gone: description set sets/gone.yaml: no such file or directory
c.cue:6:60: matrix.descriptions[2]: description set fixtures/descriptions/terse.yaml: want a mapping of tool name to description (line 1: cannot unmarshal !!seq into map[string]string)
c.cue:6:77: matrix.descriptions[4]: description set "absent": no description_sets entry and no file fixtures/descriptions/absent.yaml
c.cue:6:87: matrix.descriptions[5]: description set fixtures/descriptions/blank.yaml: tool "get_time" has an empty description`
	if err == nil || err.Error() != want {
		t.Fatalf("got:\n%v\nwant:\n%s", err, want)
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
	want := []WhenGolden{{When: 1, Golden: Golden{Calls: []GoldenCall{{Tool: "f", Args: map[string]any{"n": int64(1)}}}, Answer: "It was declined."}}}
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
