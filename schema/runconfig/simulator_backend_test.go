package runconfig

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
)

// TestSimulatorBackendChecks: the simulator's backend gets the checks the
// job's backend gets, against what the simulator asks of it (its model
// and temperature): its own simulator.backend, or the job's backend when
// it names none. Before, simulator.backend had only the header-key and
// keep_alive checks, and a simulator on the job's backend none.
func TestSimulatorBackendChecks(t *testing.T) {
	head := "name: \"x\"\ncases: [\"a.yaml\"]\nserver: builtin: {}\nmatrix: {models: [\"m\"], temperatures: [1]}\n"
	load := func(t *testing.T, rest string) error {
		t.Helper()
		t.Chdir(writeFiles(t, map[string]string{"c.cue": head + rest, "a.yaml": "id: a\nprompt: p\nexpect: {}\n"}))
		_, err := Load("c.cue")
		return err
	}
	for _, tt := range []struct{ name, rest, want string }{
		{"own anthropic: a key in headers",
			"backend: ollama: {}\nsimulator: {model: \"u\", backend: anthropic: headers: {\"x-api-key\": \"sk\"}}\n",
			`c.cue:6:55: simulator.backend.anthropic.headers.x-api-key: a key in headers would be written to config.json; put it in an environment variable and name that in api_key_env`},
		{"own anthropic: temperature over 1",
			"backend: ollama: {}\nsimulator: {model: \"u\", temperature: 1.5, backend: anthropic: {}}\n",
			`c.cue:6:25: simulator.temperature: simulator.backend.anthropic takes temperatures from 0 to 1, got 1.5`},
		{"own anthropic: thinking at the default temperature",
			"backend: ollama: {}\nsimulator: {model: \"u\", backend: anthropic: {thinking_budget: 2048}}\n",
			`c.cue:6:1: simulator.temperature: with thinking_budget the Messages API accepts only temperature 1, got 0 (the default); set simulator.temperature: 1`},
		{"own anthropic: budget over max_tokens",
			"backend: ollama: {}\nsimulator: {model: \"u\", temperature: 1, backend: anthropic: {thinking_budget: 8192}}\n",
			`c.cue:6:62: simulator.backend.anthropic.thinking_budget: the thinking budget (8192) must be less than max_tokens (4096): thinking counts against max_tokens`},
		{"shared anthropic: the simulator's temperature",
			"backend: anthropic: {thinking_budget: 2048}\nsimulator: {model: \"u\", temperature: 0.5}\n",
			`c.cue:6:25: simulator.temperature: with thinking_budget the Messages API accepts only temperature 1, got 0.5`},
		{"own pool: host and hosts",
			"backend: ollama: {}\nsimulator: {model: \"u\", backend: ollama: {host: \"http://x:1\", hosts: [\"http://a:1\"]}}\n",
			`c.cue:6:43: simulator.backend.ollama.host: set host or hosts, not both: with hosts, host is not used`},
		{"own pool: a host twice",
			"backend: ollama: {}\nsimulator: {model: \"u\", backend: openai: base_urls: [\"http://a:1/v1\", \"http://a:1/v1/\"]}\n",
			`c.cue:6:71: simulator.backend.openai.base_urls[1]: host http://a:1/v1/ is already base_urls[0]; list each host once and set its concurrency instead`},
		{"own pool: no host serves the simulator's model",
			"backend: ollama: {}\nsimulator: {model: \"u\", backend: ollama: hosts: [{url: \"http://a:1\", models: [\"m\"]}]}\n",
			`c.cue:6:13: simulator.model: no host in simulator.backend.ollama.hosts serves model "u": every host pins other models; add it to a host's models, or add a host that pins none`},
		{"shared pool: no host serves the simulator's model",
			"backend: ollama: hosts: [{url: \"http://a:1\", models: [\"m\"]}]\nsimulator: model: \"u\"\n",
			`c.cue:6:12: simulator.model: no host in backend.ollama.hosts serves model "u": every host pins other models; add it to a host's models, or add a host that pins none`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := load(t, tt.rest)
			var es schema.Errors
			if !errors.As(err, &es) || es.Error() != tt.want {
				t.Errorf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
	// A shared backend's own settings are reported once, at the backend.
	err := load(t, "backend: anthropic: {thinking_budget: 8192}\nsimulator: {model: \"u\", temperature: 1}\n")
	if err == nil || strings.Count(err.Error(), "must be less than max_tokens") != 1 {
		t.Errorf("shared backend: %v", err)
	}
	// And what is right passes.
	if err := load(t, "backend: ollama: hosts: [{url: \"http://a:1\", models: [\"m\", \"u\"]}]\nsimulator: {model: \"u\", backend: anthropic: {}}\n"); err != nil {
		t.Errorf("valid: %v", err)
	}
}
