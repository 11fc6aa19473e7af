package runconfig

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

func TestLoadOptionsSets(t *testing.T) {
	src := `name: "o"
cases: ["a.yaml"]
server: builtin: {}
backend: ollama: {}
options_sets: {
	fast: ollama: think: false
	deep: ollama: {think: "high", num_ctx: 32768, top_p: 0.9, top_k: 20, min_p: 0.05, repeat_penalty: 1.1, num_predict: 512}
}
matrix: {models: ["m"], options: ["default", "fast", "deep"]}
`
	dir := writeFiles(t, map[string]string{"c.cue": src, "a.yaml": "id: a\nprompt: p\nexpect: {}\n"})
	t.Chdir(dir)
	cfg, err := Load("c.cue")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Matrix.Values(cell.Options), []string{"default", "fast", "deep"}) {
		t.Errorf("matrix.options %v", cfg.Matrix.Values(cell.Options))
	}
	deep := cfg.OptionsSets["deep"].Ollama
	if deep == nil || deep.Think != "high" || *deep.NumCtx != 32768 || *deep.TopP != 0.9 || *deep.TopK != 20 || *deep.MinP != 0.05 || *deep.RepeatPenalty != 1.1 || *deep.NumPredict != 512 {
		t.Errorf("deep %+v", deep)
	}
	if f := cfg.OptionsSets["fast"].Ollama; f == nil || f.Think != false {
		t.Errorf("fast %+v", f)
	}
	// Without the axis the default is one value, "default".
	dir = writeFiles(t, map[string]string{"c.cue": "name: \"o\"\ncases: [\"a.yaml\"]\nserver: builtin: {}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\n", "a.yaml": "id: a\nprompt: p\nexpect: {}\n"})
	t.Chdir(dir)
	if cfg, err = Load("c.cue"); err != nil || !reflect.DeepEqual(cfg.Matrix.Values(cell.Options), []string{"default"}) {
		t.Errorf("default axis %v %v", cfg.Matrix.Values(cell.Options), err)
	}
}

func TestOptionsErrors(t *testing.T) {
	head := "name: \"x\"\ncases: [\"a.yaml\"]\nserver: builtin: {}\n"
	tests := []struct{ src, want string }{
		{head + "backend: ollama: {}\noptions_sets: deep: ollama: {thinks: true}\nmatrix: {models: [\"m\"], options: [\"deep\"]}\n",
			`c.cue:5:30: options_sets.deep.ollama.thinks: unknown field "thinks" (did you mean "think"?)`},
		{head + "backend: ollama: {}\noptions_sets: deep: ollama: {think: \"max\"}\nmatrix: {models: [\"m\"], options: [\"deep\"]}\n",
			`c.cue:5:37: options_sets.deep.ollama.think`},
		{head + "backend: openai: {}\noptions_sets: deep: openai: {num_ctx: 4}\nmatrix: {models: [\"m\"], options: [\"deep\"]}\n",
			`c.cue:5:30: options_sets.deep.openai.num_ctx: unknown field "num_ctx"`},
		{head + "backend: ollama: {}\nmatrix: {models: [\"m\"], options: [\"default\", \"deep\"]}\n",
			`c.cue:5:46: matrix.options[1]: options set "deep": no options_sets entry (defined: none)`},
		{head + "backend: openai: {}\noptions_sets: deep: ollama: {think: true}\nmatrix: {models: [\"m\"], options: [\"deep\"]}\n",
			`c.cue:6:35: matrix.options[0]: options set "deep" has no openai entry, and the backend is openai`},
		{head + "backend: openai: {}\noptions_sets: deep: openai: extra: {model: \"x\"}\nmatrix: {models: [\"m\"], options: [\"deep\"]}\n",
			`c.cue:5:37: options_sets.deep.openai.extra.model: toolward sets "model" itself; extra may not replace it`},
		{head + "backend: anthropic: {}\noptions_sets: deep: anthropic: thinking_budget: 8192\nmatrix: {models: [\"m\"], temperatures: [1], options: [\"deep\"]}\n",
			`c.cue:5:32: options_sets.deep.anthropic.thinking_budget: the thinking budget (8192) must be less than max_tokens (4096): thinking counts against max_tokens`},
		// An options set's thinking, checked as the backend's own is, on the
		// settings its cells send (the set's over the backend's).
		{head + "backend: anthropic: {tool_choice: \"any\"}\noptions_sets: deep: anthropic: thinking_budget: 2048\nmatrix: {models: [\"m\"], temperatures: [1], options: [\"default\", \"deep\"]}\n",
			`c.cue:5:32: options_sets.deep.anthropic.thinking_budget: options set "deep" turns thinking on, and with thinking the Messages API accepts tool_choice auto or none only: backend.anthropic.tool_choice "any" forces a call`},
		{head + "backend: anthropic: {tool_choice: {tool: \"calc\"}}\noptions_sets: deep: anthropic: {thinking_budget: 2048}\nmatrix: {models: [\"m\"], temperatures: [1], options: [\"deep\"]}\n",
			`c.cue:5:33: options_sets.deep.anthropic.thinking_budget: options set "deep" turns thinking on, and with thinking the Messages API accepts tool_choice auto or none only: backend.anthropic.tool_choice {tool: "calc"} forces a call`},
		{head + "backend: anthropic: {}\noptions_sets: deep: anthropic: thinking_budget: 2048\nmatrix: {models: [\"m\"], temperatures: [1, 0.7], options: [\"default\", \"deep\"]}\n",
			`c.cue:5:32: options_sets.deep.anthropic.thinking_budget: options set "deep" turns thinking on, and with thinking the Messages API accepts only temperature 1: matrix.temperatures has 0.7`},
		{head + "backend: anthropic: {}\noptions_sets: deep: anthropic: thinking_budget: 2048\nmatrix: {models: [\"m\"], options: [\"deep\"]}\n",
			`c.cue:5:32: options_sets.deep.anthropic.thinking_budget: options set "deep" turns thinking on, and with thinking the Messages API accepts only temperature 1: matrix.temperatures has 0 (the default); set matrix.temperatures: [1]`},
		{head + "backend: anthropic: {thinking_budget: 2048}\noptions_sets: short: anthropic: max_tokens: 2048\nmatrix: {models: [\"m\"], temperatures: [1], options: [\"default\", \"short\"]}\n",
			`c.cue:5:33: options_sets.short.anthropic.max_tokens: max_tokens (2048) must be more than the thinking budget (2048, from backend.anthropic.thinking_budget): thinking counts against max_tokens`},
		{head + "backend: anthropic: {max_tokens: 16000}\noptions_sets: deep: anthropic: {thinking_budget: 4096, max_tokens: 4000}\nmatrix: {models: [\"m\"], temperatures: [1], options: [\"deep\"]}\n",
			`c.cue:5:33: options_sets.deep.anthropic.thinking_budget: the thinking budget (4096) must be less than max_tokens (4000): thinking counts against max_tokens`},
		{head + "backend: ollama: {}\noptions_sets: default: ollama: {think: true}\nmatrix: {models: [\"m\"]}\n",
			`c.cue:5:15: options_sets.default`},
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
		if !strings.HasPrefix(es.Error(), tt.want) {
			t.Errorf("%s\n got  %s\n want %s", tt.src, es.Error(), tt.want)
		}
	}
}

// TestAnthropicOptionsSetsAccepted: the thinking rules of options sets
// refuse only what the Messages API would: a set the matrix does not run,
// tool_choice auto or none, temperature 1, and a set's max_tokens that
// leaves room for the budget all load.
func TestAnthropicOptionsSetsAccepted(t *testing.T) {
	head := "name: \"x\"\ncases: [\"a.yaml\"]\nserver: builtin: {}\n"
	for _, src := range []string{
		head + "backend: anthropic: {tool_choice: \"any\"}\noptions_sets: deep: anthropic: thinking_budget: 2048\nmatrix: {models: [\"m\"], temperatures: [0.5], options: [\"default\"]}\n",
		head + "backend: anthropic: {tool_choice: \"none\"}\noptions_sets: deep: anthropic: thinking_budget: 2048\nmatrix: {models: [\"m\"], temperatures: [1], options: [\"default\", \"deep\"]}\n",
		head + "backend: anthropic: {thinking_budget: 2048}\noptions_sets: long: anthropic: max_tokens: 8192\nmatrix: {models: [\"m\"], temperatures: [1], options: [\"long\"]}\n",
		head + "backend: anthropic: {}\noptions_sets: deep: anthropic: {thinking_budget: 4096, max_tokens: 8192}\nmatrix: {models: [\"m\"], temperatures: [1], options: [\"deep\"]}\n",
	} {
		dir := writeFiles(t, map[string]string{"c.cue": src, "a.yaml": "id: a\nprompt: p\nexpect: {}\n"})
		t.Chdir(dir)
		if _, err := Load("c.cue"); err != nil {
			t.Errorf("%s\n=> %v", src, err)
		}
	}
}
