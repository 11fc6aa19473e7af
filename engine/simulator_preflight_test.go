package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend/ollama"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/schema/results"
)

const simulatedCase = `
id: sim
prompt: What is 2 + 3?
needs: [add]
user:
  instructions: You want 2 + 3. Once you have it, end the conversation.
  max_turns: 2
expect:
  answer: {$contains: "5"}
`

// simSuite writes simulatedCase and a config whose backend is the Ollama
// at host and whose simulator block is sim, in a working directory of
// the test's own.
func simSuite(t *testing.T, host, sim string) {
	t.Helper()
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/suite.yaml", []byte(simulatedCase), 0o644)
	os.WriteFile("c.cue", []byte(fmt.Sprintf("name: \"sim\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: ollama: host: %q\nsimulator: %s\nmatrix: models: [\"m\"]\n", host, sim)), 0o644)
}

// answers is a fake Ollama script: the model under test answers 5, the
// simulated user (model u) ends the conversation.
var answers = fakeollama.PerModel(map[string]fakeollama.Script{
	"m": func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Content: "2 + 3 = 5."} },
	"u": func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Content: "Thanks! ###STOP###"} },
})

func digestOf(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

// TestSimulatorModelMissing: a simulator model its backend does not have
// stops run before any run, with the pull command, leaving no result
// directory: on a backend of its own and on the job's.
func TestSimulatorModelMissing(t *testing.T) {
	models := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "m"}}, Script: answers})
	other := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "x"}}, Script: answers})
	for name, sim := range map[string]string{
		"own backend":    fmt.Sprintf("{model: \"u\", backend: ollama: host: %q}", other.URL),
		"shared backend": `{model: "u"}`,
	} {
		t.Run(name, func(t *testing.T) {
			simSuite(t, models.URL, sim)
			_, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff})
			if err == nil || !strings.Contains(err.Error(), "simulator preflight failed (model u), nothing ran") || !strings.Contains(err.Error(), "`ollama pull u`") {
				t.Fatalf("err = %v", err)
			}
			if _, err := os.Stat("results"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a result directory was made: %v", err)
			}
		})
	}
	if n := len(models.Requests()) + len(other.Requests()); n != 0 {
		t.Errorf("%d chat requests before the preflight stopped the job", n)
	}
}

// TestSimulatorFactsInConfig: the simulator backend's preflight facts
// (server, the simulator model's digest) are in config.json next to the
// model backend's, shown in the report, and a resume with a simulator
// model that changed is refused as one with a changed model is.
func TestSimulatorFactsInConfig(t *testing.T) {
	models := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "m"}}, Script: answers})
	users := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "u"}}, Script: answers})
	simSuite(t, models.URL, fmt.Sprintf("{model: \"u\", backend: ollama: host: %q}", users.URL))
	res, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pass != 1 {
		t.Fatalf("result %+v", res)
	}
	m, err := results.ReadMeta(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Backend == nil || m.Backend.Digests["m"] != digestOf("m") || !strings.Contains(m.Backend.Server, models.URL) {
		t.Errorf("backend facts %+v", m.Backend)
	}
	if m.Simulator == nil || m.Simulator.Digests["u"] != digestOf("u") || !strings.Contains(m.Simulator.Server, users.URL) {
		t.Fatalf("simulator facts %+v", m.Simulator)
	}
	sum, err := report.Summarize(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sum.Meta, report.Field{Name: "simulator digest u", Value: digestOf("u")[:12]}) {
		t.Errorf("the report does not show the simulator's digest: %+v", sum.Meta)
	}

	// The same config, the simulator's model now another, and the run
	// to do again (a resume with nothing left to run asks no server,
	// TestNothingLeftContactsNoServer).
	if err := os.WriteFile(filepath.Join(res.Dir, results.RunsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	changed := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "u", Digest: "0123456789abcdef"}}, Script: answers})
	sim, err := ollama.New(ollama.Config{Host: changed.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{ResumeDir: res.Dir, Simulator: sim, Builtin: testServer, Backoff: noBackoff})
	if err == nil || !strings.Contains(err.Error(), "simulator model u is not the one the job started with") {
		t.Errorf("resume with another simulator model: %v", err)
	}
}
