package runconfig

import (
	"errors"
	"reflect"
	"testing"

	"github.com/toolward/toolward/schema"
)

// loadPoolConfig loads a config whose backend line is backend and whose
// models are models.
func loadPoolConfig(t *testing.T, backend, models string) (*schema.Config, error) {
	t.Helper()
	src := "name: \"x\"\ncases: [\"a.yaml\"]\nserver: builtin: {}\n" + backend + "\nmatrix: models: " + models + "\n"
	dir := writeFiles(t, map[string]string{"c.cue": src, "a.yaml": "id: a\nprompt: p\nexpect: {}\n"})
	t.Chdir(dir)
	return Load("c.cue")
}

func TestPoolHosts(t *testing.T) {
	c, err := loadPoolConfig(t, `backend: ollama: {host_concurrency: 2, hosts: ["http://a:1", {url: "http://b:2", concurrency: 5, models: ["m"]}]}`, `["m", "n"]`)
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.PoolHost{{URL: "http://a:1", Concurrency: 2}, {URL: "http://b:2", Concurrency: 5, Models: []string{"m"}}}
	if got := c.Backend.Ollama.PoolHosts(); !reflect.DeepEqual(got, want) {
		t.Errorf("PoolHosts = %+v, want %+v", got, want)
	}
	c, err = loadPoolConfig(t, `backend: openai: {host_concurrency: 3}`, `["m"]`)
	if err != nil {
		t.Fatal(err)
	}
	want = []schema.PoolHost{{URL: "http://127.0.0.1:8080/v1", Concurrency: 3}}
	if got := c.Backend.OpenAI.PoolHosts(); !reflect.DeepEqual(got, want) {
		t.Errorf("single base_url: PoolHosts = %+v, want %+v", got, want)
	}
}

func TestPoolConfigErrors(t *testing.T) {
	tests := []struct{ backend, models, want string }{
		{`backend: ollama: {host: "http://x:1", hosts: ["http://a:1"]}`, `["m"]`,
			`c.cue:4:19: backend.ollama.host: set host or hosts, not both: with hosts, host is not used`},
		{`backend: openai: {base_urls: ["http://a:1/v1", "http://a:1/v1/"]}`, `["m"]`,
			`c.cue:4:48: backend.openai.base_urls[1]: host http://a:1/v1/ is already base_urls[0]; list each host once and set its concurrency instead`},
		{`backend: ollama: hosts: [{url: "http://a:1", models: ["m"]}]`, `["m", "n"]`,
			`c.cue:5:23: matrix.models[1]: no host in backend.ollama.hosts serves model "n": every host pins other models; add it to a host's models, or add a host that pins none`},
		{`backend: ollama: hosts: [{url: "http://a:1", gpus: 2}]`, `["m"]`,
			// CUE tries both forms of a host; the second line is the one that helps.
			"c.cue:4:26: backend.ollama.hosts[0]: want string, got {url:\"http://a:1\",gpus:2}\nc.cue:4:46: backend.ollama.hosts[0].gpus: unknown field \"gpus\""},
		{`backend: ollama: hosts: []`, `["m"]`,
			`c.cue:4:18: backend.ollama.hosts: want at least 1 element(s), got 0`},
	}
	for _, tt := range tests {
		_, err := loadPoolConfig(t, tt.backend, tt.models)
		var es schema.Errors
		if !errors.As(err, &es) {
			t.Errorf("%s\n=> %v, want Errors", tt.backend, err)
			continue
		}
		if es.Error() != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.backend, es.Error(), tt.want)
		}
	}
}
