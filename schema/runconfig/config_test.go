package runconfig

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

var update = flag.Bool("update", false, "rewrite fixtures/invalid/*/want.txt")

// TestInvalidFixtures runs Validate in every fixtures/invalid/<name>/
// directory and compares its lines with want.txt.
func TestInvalidFixtures(t *testing.T) {
	root, err := filepath.Abs("../../fixtures/invalid")
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
			errs := validate([]string{"."})
			var got strings.Builder
			repo, err := filepath.Abs("../../..")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range errs {
				// Hints name absolute directories: written from $REPO.
				got.WriteString(strings.ReplaceAll(e.Error(), repo, "$REPO") + "\n")
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
	cfg, err := Load("configs/min.cue")
	if err != nil {
		t.Fatal(err)
	}
	want := &schema.Config{
		Name: "min", Cases: []string{"cases/**/*.yaml"},
		Server:  schema.Server{Builtin: &schema.Builtin{}},
		Backend: schema.Backend{Ollama: &schema.Ollama{Host: "http://127.0.0.1:11434"}},
		Matrix: schema.Matrix{Tools: []schema.ToolSubset{{Name: "needed"}}}.With(cell.Model, "qwen3:0.6b").With(cell.Seed, "1").With(cell.Temperature, "0").
			With(cell.Confirm, "auto").With(cell.Descriptions, "default").With(cell.Options, "default"),
		Limits: schema.Limits{MaxIterations: 8, RunTimeout: schema.Duration{Duration: 120 * time.Second}, CallTimeout: schema.Duration{Duration: 30 * time.Second},
			Concurrency: 2, Retries: 2, ThrottleWait: schema.Duration{Duration: 10 * time.Minute}},
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
	cfg, err := Load("configs/variance.cue")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.URL != "http://127.0.0.1:8765/mcp" || cfg.Server.Headers["Authorization"] != "Bearer x" || cfg.Server.Builtin != nil {
		t.Errorf("server %+v", cfg.Server)
	}
	if o := cfg.Backend.Ollama; o == nil || !reflect.DeepEqual(*o, schema.Ollama{Host: "http://gpu:11434", NumCtx: 4096, KeepAlive: "5m", Think: true, HostConcurrency: 3}) {
		t.Errorf("backend %+v", cfg.Backend.Ollama)
	}
	wantTools := []schema.ToolSubset{{Name: "needed"}, {Name: "n8", Count: 8}, {Name: "n16", Count: 16},
		{Name: "web", Include: []string{"fetch"}, Order: "given"}, {Name: "all"}}
	if !reflect.DeepEqual(cfg.Matrix.Tools, wantTools) {
		t.Errorf("tools %+v", cfg.Matrix.Tools)
	}
	if !reflect.DeepEqual(cfg.Matrix.Values(cell.Temperature), []string{"0", "0.7"}) || !reflect.DeepEqual(cfg.Matrix.Values(cell.Seed), []string{"1", "2", "3"}) {
		t.Errorf("matrix %+v", cfg.Matrix)
	}
	if cfg.Limits != (schema.Limits{MaxIterations: 4, RunTimeout: schema.Duration{Duration: 2 * time.Minute}, CallTimeout: schema.Duration{Duration: 0}, Concurrency: 8, Retries: 0, ThrottleWait: schema.Duration{Duration: 10 * time.Minute}}) {
		t.Errorf("limits %+v", cfg.Limits)
	}
	if !reflect.DeepEqual(cfg.Filter, []string{"case=a*", "tag=demo"}) {
		t.Errorf("filter %v", cfg.Filter)
	}
	if cfg.Output != "out" {
		t.Errorf("output %q", cfg.Output)
	}
	if got := schema.DescriptionFile(cfg, "terse"); got != filepath.Join("fixtures", "descriptions", "terse.yaml") {
		t.Errorf("DescriptionFile terse = %q", got)
	}
	if got := schema.DescriptionFile(cfg, "loud"); got != "sets/loud.yaml" {
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
			`c.cue:4:10: backend: want exactly one of ollama, openai, anthropic, replay, got ollama and replay`},
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
		// {run_dir} without isolation "run" would reach the server as
		// literal text, one path for every run (validate accepted it).
		{head + "server: {command: [\"x\", \"--db={run_dir}/db\"], env: {B: \"{run_dir}\", A: \"a\"}}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\n",
			"c.cue:3:25: server.command[1]: {run_dir} names each run's fresh directory, which only isolation \"run\" gives; set server.isolation: \"run\"\n" +
				"c.cue:3:53: server.env.B: {run_dir} names each run's fresh directory, which only isolation \"run\" gives; set server.isolation: \"run\""},
		{head + "server: {command: [\"x\"], headers: {a: \"b\"}}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\n",
			`c.cue:3:26: server.headers: headers apply to url servers only`},
		{head + "server: {command: [\"x\"], oauth: {client_id: \"a\", client_secret_env: \"TOOLWARD_TEST_UNSET_SECRET\"}}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\n",
			`c.cue:3:26: server.oauth: oauth applies to url servers only`},
		{head + "server: {url: \"http://127.0.0.1:1/mcp\", oauth: {client_id: \"a\", client_secret_env: \"TOOLWARD_TEST_UNSET_SECRET\"}}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\n",
			`c.cue:3:65: server.oauth.client_secret_env: environment variable TOOLWARD_TEST_UNSET_SECRET (the OAuth client secret) is not set`},
		{head + "server: builtin: {}\nbackend: ollama: {}\nmatrix: {models: [\"m\", \"m\"], seeds: [1, 1]}\n",
			"c.cue:5:24: matrix.models[1]: duplicate value \"m\"\nc.cue:5:41: matrix.seeds[1]: duplicate value 1"},
		// Every axis is checked for repeats, as the axis formats its
		// values: 0.70 repeats 0.7 (two runs of one id otherwise).
		{head + "server: builtin: {}\nbackend: ollama: {}\noptions_sets: deep: ollama: {think: true}\nmatrix: {models: [\"m\"], temperatures: [0.7, 0.70], confirm: [\"deny\", \"deny\"], descriptions: [\"default\", \"default\"], options: [\"deep\", \"deep\"], tools: [{name: \"all\"}, {name: \"all\"}]}\n",
			"c.cue:6:45: matrix.temperatures[1]: duplicate value 0.7\n" +
				"c.cue:6:70: matrix.confirm[1]: duplicate value \"deny\"\n" +
				"c.cue:6:105: matrix.descriptions[1]: duplicate value \"default\"\n" +
				"c.cue:6:135: matrix.options[1]: duplicate value \"deep\"\n" +
				"c.cue:6:167: matrix.tools[1]: duplicate value \"all\""},
		{"name: \"x\"\ncases: [\"nothing/*.yaml\"]\nserver: builtin: {}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\n",
			`c.cue:2:9: cases[0]: pattern "nothing/*.yaml" matches no file; resolved from the working directory $WD (paths in a config resolve from there, not from the config's directory)`},
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
		_, err := Load("c.cue")
		var es schema.Errors
		if !errors.As(err, &es) {
			t.Errorf("%s\n=> %v, want Errors", tt.src, err)
			continue
		}
		if want := strings.ReplaceAll(tt.want, "$WD", dir); es.Error() != want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, es.Error(), want)
		}
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
	sum, errs := checkPaths([]string{"cases", "configs", "cases/a.yaml", "cassettes"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if want := (Summary{CaseFiles: 1, Cases: 1, Configs: 1, Cassettes: 1}); sum != want {
		t.Errorf("summary %+v, want %+v", sum, want)
	}
	errs = validate([]string{"nope", "configs/notes.txt"})
	if len(errs) != 2 || errs[0].Msg != "not a case file, cassette file (.yaml, .yml) or config (.cue)" || errs[1].Msg != "no such file or directory" {
		t.Fatalf("got %v", errs)
	}
	// A directory with nothing to check is reported, not passed silently.
	if err := os.Mkdir("empty", 0o755); err != nil {
		t.Fatal(err)
	}
	errs = validate([]string{"empty"})
	if len(errs) != 1 || errs[0].Error() != "empty: no case files, cassette files (.yaml, .yml) or configs (.cue) in this directory" {
		t.Fatalf("got %v", errs)
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
	_, err := Load("c.cue")
	want := `c.cue:5:19: description_sets.gone: description set sets/gone.yaml: no such file or directory
c.cue:6:60: matrix.descriptions[2]: description set fixtures/descriptions/terse.yaml: want a mapping of tool name to description (line 1: cannot unmarshal !!seq into map[string]string)
c.cue:6:77: matrix.descriptions[4]: description set "absent": no description_sets entry and no file fixtures/descriptions/absent.yaml
c.cue:6:87: matrix.descriptions[5]: description set fixtures/descriptions/blank.yaml: tool "get_time" has an empty description`
	if err == nil || err.Error() != want {
		t.Fatalf("got:\n%v\nwant:\n%s", err, want)
	}
}

// TestOtherBackendsField: a field of another backend's block says which
// backends exist and which take it, instead of a did-you-mean naming the
// field itself.
func TestOtherBackendsField(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": "id: a\nprompt: p\nexpect: {}\n",
		"c.cue": "name: \"x\"\ncases: [\"a.yaml\"]\nserver: builtin: {}\nbackend: ollama: {base_url: \"http://127.0.0.1:1\"}\nmatrix: models: [\"m\"]\n"})
	t.Chdir(dir)
	_, err := Load("c.cue")
	want := `c.cue:4:19: backend.ollama.base_url: unknown field "base_url" (backend ollama does not take it; openai and anthropic take it; the backends are ollama, openai, anthropic and replay)`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
