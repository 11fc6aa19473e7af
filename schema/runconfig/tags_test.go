package runconfig

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema/cell"
)

// TestTagInjection: -t name=value sets the field the config declares
// with @tag(name), as cue -t does: a default yields to it, type=int makes
// a number, a constraint still holds; a tag the config does not declare
// and a value of the wrong type are errors naming them. Not parallel:
// the tag values are the process's (SetTags).
func TestTagInjection(t *testing.T) {
	t.Chdir(writeFiles(t, map[string]string{
		"a.yaml": "id: a\nprompt: p\nexpect: {}\n",
		"c.cue": `name: "c"
cases: ["*.yaml"]
_model: *"qwen3:0.6b" | string @tag(model)
_seed:  *1 | int @tag(seed,type=int)
server: builtin: {}
backend: replay: "tapes"
matrix: {models: [_model], seeds: [_seed]}
limits: concurrency: *2 | (int & <=8) @tag(workers,type=int)
`,
	}))
	defer SetTags(nil)
	load := func(tags ...string) (model string, seed, workers int, err error) {
		t.Helper()
		if err := SetTags(tags); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load("c.cue")
		if err != nil {
			return "", 0, 0, err
		}
		seed, _ = strconv.Atoi(cfg.Matrix.Values(cell.Seed)[0])
		return cfg.Matrix.Values(cell.Model)[0], seed, cfg.Limits.Concurrency, nil
	}
	if m, s, w, err := load(); err != nil || m != "qwen3:0.6b" || s != 1 || w != 2 {
		t.Errorf("defaults: %q %d %d %v", m, s, w, err)
	}
	if m, s, w, err := load("model=qwen3:4b", "seed=7", `workers=4`); err != nil || m != "qwen3:4b" || s != 7 || w != 4 {
		t.Errorf("injected: %q %d %d %v", m, s, w, err)
	}
	for _, tt := range []struct {
		tags []string
		want string
	}{
		{[]string{"modle=x"}, "c.cue: -t modle: the config declares no field with @tag(modle) (its tags: model, seed, workers)"},
		{[]string{"seed=two"}, "c.cue:4:18: -t seed=two: want an integer (type=int)"},
		{[]string{"workers=9"}, "c.cue:8:"},
	} {
		if _, _, _, err := load(tt.tags...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err %v, want %q", tt.tags, err, tt.want)
		}
	}
	if err := SetTags([]string{"novalue"}); err == nil {
		t.Error("a -t without = accepted")
	}
}

// TestOllamaHostFromEnv: an Ollama backend that names no host takes
// OLLAMA_HOST, read as Ollama's CLI reads it; one that names a host, or
// hosts, keeps it. Not parallel: it sets the environment.
func TestOllamaHostFromEnv(t *testing.T) {
	head := "name: \"c\"\ncases: [\"*.yaml\"]\nserver: builtin: {}\nmatrix: models: [\"m\"]\n"
	t.Chdir(writeFiles(t, map[string]string{
		"a.yaml":    "id: a\nprompt: p\nexpect: {}\n",
		"none.cue":  head + "backend: ollama: num_ctx: 2048\nsimulator: {model: \"m\", backend: ollama: {}}\n",
		"named.cue": head + "backend: ollama: host: \"http://10.0.0.9:11434\"\n",
	}))
	host := func(file string) (string, string) {
		t.Helper()
		cfg, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		sim := ""
		if cfg.Simulator != nil {
			sim = cfg.Simulator.Backend.Ollama.Host
		}
		return cfg.Backend.Ollama.Host, sim
	}
	os.Unsetenv("OLLAMA_HOST")
	t.Setenv("OLLAMA_HOST", "")
	if h, _ := host("none.cue"); h != "http://127.0.0.1:11434" {
		t.Errorf("no OLLAMA_HOST: %s", h)
	}
	t.Setenv("OLLAMA_HOST", "gpu-box:11435")
	if h, sim := host("none.cue"); h != "http://gpu-box:11435" || sim != "http://gpu-box:11435" {
		t.Errorf("OLLAMA_HOST: backend %s, simulator %s", h, sim)
	}
	if h, _ := host("named.cue"); h != "http://10.0.0.9:11434" {
		t.Errorf("a named host: %s", h)
	}
}
