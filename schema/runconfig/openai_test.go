package runconfig

import (
	"errors"
	"testing"

	"github.com/toolward/toolward/schema"
)

// TestLoadConfigOpenAI: the openai backend block, its defaults and its
// mistakes.
func TestLoadConfigOpenAI(t *testing.T) {
	head := "name: \"x\"\ncases: [\"a.yaml\"]\nserver: builtin: {}\nmatrix: models: [\"m\"]\n"
	load := func(t *testing.T, backend string) (*schema.Config, error) {
		t.Helper()
		t.Chdir(writeFiles(t, map[string]string{"c.cue": head + backend, "a.yaml": "id: a\nprompt: p\nexpect: {}\n"}))
		return Load("c.cue")
	}

	cfg, err := load(t, "backend: openai: {}\n")
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Backend.OpenAI
	if o == nil || o.BaseURL != "http://127.0.0.1:8080/v1" || !o.Stream || o.APIKeyEnv != "" || o.MaxTokens != 0 || o.ToolChoice != "" || o.ParallelToolCalls != nil {
		t.Fatalf("defaults %+v", o)
	}

	cfg, err = load(t, `backend: openai: {base_url: "http://gpu:8000/v1", api_key_env: "VLLM_KEY", headers: {"X-Team": "evals"}, max_tokens: 512, tool_choice: "required", parallel_tool_calls: false, stream: false}`+"\n")
	if err != nil {
		t.Fatal(err)
	}
	o = cfg.Backend.OpenAI
	if o.BaseURL != "http://gpu:8000/v1" || o.APIKeyEnv != "VLLM_KEY" || o.Headers["X-Team"] != "evals" || o.MaxTokens != 512 ||
		o.ToolChoice != "required" || o.ParallelToolCalls == nil || *o.ParallelToolCalls || o.Stream {
		t.Fatalf("full %+v", o)
	}

	for _, tt := range []struct{ backend, want string }{
		{"backend: openai: {base_url: \"http://x/v1\", api_key: \"sk-1\"}\n", `c.cue:5:44: backend.openai.api_key: unknown field "api_key" (did you mean "api_key_env"?)`},
		{"backend: openai: headers: {Authorization: \"Bearer sk-1\"}\n", `c.cue:5:28: backend.openai.headers.Authorization: a key in headers would be written to config.json; put it in an environment variable and name that in api_key_env`},
		{"backend: openai: api_key_env: \"$KEY\"\n", `c.cue:5:31: backend.openai.api_key_env: want an environment variable name (letters, digits, _; not starting with a digit), got "$KEY"`},
		{"backend: openai: tool_choice: \"any\"\n", `c.cue:5:31: backend.openai.tool_choice: want one of "auto", "none", "required", got "any"`},
		{"backend: {ollama: {}, openai: {}}\n", `c.cue:5:10: backend: want exactly one of ollama, openai, anthropic, replay, got ollama and openai`},
	} {
		_, err := load(t, tt.backend)
		var es schema.Errors
		if !errors.As(err, &es) || es.Error() != tt.want {
			t.Errorf("%s got  %v\n want %s", tt.backend, err, tt.want)
		}
	}
}
