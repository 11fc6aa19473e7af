package runconfig

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
)

// TestLoadConfigAnthropic: the anthropic backend block, its defaults, and
// what the Messages API would refuse, positioned in the file.
func TestLoadConfigAnthropic(t *testing.T) {
	head := "name: \"x\"\ncases: [\"a.yaml\"]\nserver: builtin: {}\n"
	load := func(t *testing.T, rest string) (*schema.Config, error) {
		t.Helper()
		t.Chdir(writeFiles(t, map[string]string{"c.cue": head + rest, "a.yaml": "id: a\nprompt: p\nexpect: {}\n"}))
		return Load("c.cue")
	}
	models := "matrix: models: [\"claude-sonnet-4-6\"]\n"

	cfg, err := load(t, models+"backend: anthropic: {}\n")
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Backend.Anthropic
	if a == nil || a.BaseURL != "https://api.anthropic.com" || a.APIKeyEnv != "ANTHROPIC_API_KEY" || a.MaxTokens != 4096 ||
		a.ToolChoice != nil || a.DisableParallelToolUse || a.ThinkingBudget != 0 {
		t.Fatalf("defaults %+v", a)
	}

	cfg, err = load(t, "matrix: {models: [\"m\"], temperatures: [1]}\n"+`backend: anthropic: {base_url: "http://127.0.0.1:9/", api_key_env: "CLAUDE_KEY", headers: {"anthropic-beta": "x"}, max_tokens: 8192, tool_choice: "none", disable_parallel_tool_use: true, thinking_budget: 2048}`+"\n")
	if err != nil {
		t.Fatal(err)
	}
	a = cfg.Backend.Anthropic
	if a.BaseURL != "http://127.0.0.1:9/" || a.APIKeyEnv != "CLAUDE_KEY" || a.Headers["anthropic-beta"] != "x" || a.MaxTokens != 8192 ||
		a.ToolChoice == nil || a.ToolChoice.Type != "none" || !a.DisableParallelToolUse || a.ThinkingBudget != 2048 {
		t.Fatalf("full %+v", a)
	}
	cfg, err = load(t, models+`backend: anthropic: {tool_choice: {tool: "calculate"}, api_key_env: ""}`+"\n")
	if err != nil {
		t.Fatal(err)
	}
	if tc := cfg.Backend.Anthropic.ToolChoice; tc == nil || *tc != (schema.ToolChoice{Type: "tool", Tool: "calculate"}) || cfg.Backend.Anthropic.APIKeyEnv != "" {
		t.Fatalf("tool choice %+v", cfg.Backend.Anthropic)
	}

	for _, tt := range []struct{ rest, want string }{
		{models + "backend: anthropic: headers: {\"X-Api-Key\": \"sk-ant-1\"}\n",
			`c.cue:5:31: backend.anthropic.headers.X-Api-Key: a key in headers would be written to config.json; put it in an environment variable and name that in api_key_env`},
		{"matrix: {models: [\"m\"], temperatures: [0, 0.5, 1.2]}\nbackend: anthropic: {}\n",
			`c.cue:4:48: matrix.temperatures[2]: backend.anthropic takes temperatures from 0 to 1, got 1.2`},
		{"matrix: {models: [\"m\"], temperatures: [0.7, 1]}\nbackend: anthropic: {thinking_budget: 2048}\n",
			`c.cue:4:40: matrix.temperatures[0]: with thinking_budget the Messages API accepts only temperature 1, got 0.7`},
		{models + "backend: anthropic: {thinking_budget: 2048}\n",
			`c.cue:5:22: backend.anthropic.thinking_budget: with thinking_budget the Messages API accepts only temperature 1, got 0 (the default); set matrix.temperatures: [1]`},
		{"matrix: {models: [\"m\"], temperatures: [1]}\nbackend: anthropic: {thinking_budget: 4096}\n",
			`c.cue:5:22: backend.anthropic.thinking_budget: the thinking budget (4096) must be less than max_tokens (4096): thinking counts against max_tokens`},
		{"matrix: {models: [\"m\"], temperatures: [1]}\nbackend: anthropic: {thinking_budget: 1024, tool_choice: \"any\"}\n",
			`c.cue:5:45: backend.anthropic.tool_choice: with thinking_budget the Messages API accepts tool_choice auto or none only, not a forced call`},
		{models + "backend: anthropic: {thinking_budget: 512}\n",
			`c.cue:5:39: backend.anthropic.thinking_budget: want >=1024, got 512`},
		{models + "backend: anthropic: tool_choice: \"required\"\n",
			`c.cue:5:34: backend.anthropic.tool_choice: want one of "any", "auto", "none", struct, got "required"`},
		{models + "backend: {anthropic: {}, openai: {}}\n", `c.cue:5:10: backend: want exactly one of ollama, openai, anthropic, replay, got openai and anthropic`},
	} {
		_, err := load(t, tt.rest)
		var es schema.Errors
		if !errors.As(err, &es) || es.Error() != tt.want {
			t.Errorf("%s got  %v\n want %s", tt.rest, err, tt.want)
		}
	}
}

// TestLoadConfigPrices: prices per model, and a negative one refused at
// its position.
func TestLoadConfigPrices(t *testing.T) {
	head := "name: \"x\"\ncases: [\"a.yaml\"]\nserver: builtin: {}\nbackend: anthropic: {}\nmatrix: models: [\"m\"]\n"
	t.Chdir(writeFiles(t, map[string]string{"c.cue": head + "prices: m: {input: 3, output: 15, cached_input: 0.3}\n", "bad.cue": head + "prices: m: {input: -1, output: 15}\n", "a.yaml": "id: a\nprompt: p\nexpect: {}\n"}))
	cfg, err := Load("c.cue")
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Prices["m"]; p.Input != 3 || p.Output != 15 || p.CachedInput == nil || *p.CachedInput != 0.3 || p.Cost(1_000_000, 0, 0) != 3 {
		t.Errorf("prices %+v", cfg.Prices)
	}
	_, err = Load("bad.cue")
	var es schema.Errors
	if !errors.As(err, &es) || !strings.Contains(es.Error(), "bad.cue:6:20: prices.m.input: want >=0, got -1") {
		t.Errorf("negative price: %v", err)
	}
}
