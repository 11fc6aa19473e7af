package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
)

// chats counts the requests of fake that were chats, not one-token
// measurements (num_predict 1).
func chats(fake *fakeollama.Server) int {
	n := 0
	for _, r := range fake.Requests() {
		if p, ok := r.Options["num_predict"].(float64); !ok || p != 1 {
			n++
		}
	}
	return n
}

// simTokens counts 5000 prompt tokens for the simulator (model u) once
// its prompt holds at least from messages, 300 for everything else: the
// sizes of a simulated user whose prompt outgrows num_ctx 4096, as
// Ollama cuts it (backend/ollama/testdata/wire/truncation.txt).
func simTokens(from int) func(*api.ChatRequest) int {
	return func(req *api.ChatRequest) int {
		if req.Model == "u" && len(req.Messages) >= from {
			return 5000
		}
		return 300
	}
}

// TestSimulatorContextCheckStopsBeforeAnyRun: a simulated user whose
// system prompt and opening do not fit its context stops run before any
// run, naming the setting that fits (its own backend's, or the job's it
// borrows), and leaves no result directory.
func TestSimulatorContextCheckStopsBeforeAnyRun(t *testing.T) {
	models := []fakeollama.Model{{Name: "m"}, {Name: "u", ContextLength: 40960}}
	own := fakeollama.Start(t, fakeollama.Options{Models: models, Context: 4096, PromptTokens: simTokens(0), Script: answers})
	shared := fakeollama.Start(t, fakeollama.Options{Models: models, Context: 4096, PromptTokens: simTokens(0), Script: answers})
	for _, tt := range []struct {
		name, backend, sim, want string
		fake                     *fakeollama.Server
	}{
		{"own backend", fmt.Sprintf("{host: %q}", own.URL), fmt.Sprintf("{model: \"u\", backend: ollama: {host: %q, num_ctx: 4096}}", own.URL),
			"set simulator.backend.ollama.num_ctx to at least 8192", own},
		{"shared backend", fmt.Sprintf("{host: %q, num_ctx: 4096}", shared.URL), `{model: "u"}`,
			"set backend.ollama.num_ctx to at least 8192", shared},
	} {
		t.Run(tt.name, func(t *testing.T) {
			simSuite(t, "unused", tt.sim)
			os.WriteFile("c.cue", []byte(fmt.Sprintf("name: \"sim\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: ollama: %s\nsimulator: %s\nmatrix: models: [\"m\"]\n", tt.backend, tt.sim)), 0o644)
			_, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff})
			want := "the opening of case sim need 5,000 prompt tokens; num_ctx is 4096: " + tt.want
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing ran") {
				t.Fatalf("Run error = %v; want it to say %q", err, want)
			}
			if strings.Contains(tt.name, "own") && strings.Contains(err.Error(), "set backend.ollama") {
				t.Errorf("the job's backend is named for the simulator's: %v", err)
			}
			if _, err := os.Stat("results"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a result directory was made: %v", err)
			}
			if n := chats(tt.fake); n != 0 {
				t.Errorf("%d chat requests ran; want none", n)
			}
		})
	}
}

// simOnItsOwnHost writes the simulator suite with model m and simulated
// user u on hosts of their own, u at num_ctx 4096 and its prompts counted
// by simTokens(from), and returns u's host.
func simOnItsOwnHost(t *testing.T, from int) *fakeollama.Server {
	t.Helper()
	models := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "m"}}, Script: answers})
	users := fakeollama.Start(t, fakeollama.Options{
		Models: []fakeollama.Model{{Name: "u", ContextLength: 40960}}, Context: 4096, PromptTokens: simTokens(from), Script: answers,
	})
	simSuite(t, models.URL, fmt.Sprintf("{model: \"u\", backend: ollama: {host: %q, num_ctx: 4096}}", users.URL))
	return users
}

// TestTruncatedSimulatorTurnIsAnError: a simulator prompt that fits at
// preflight (system prompt and opening) but is cut once it holds the
// model's answer makes the run a context_truncated error, tried once and
// not scored, never a model failure; the message names the simulator's
// setting.
func TestTruncatedSimulatorTurnIsAnError(t *testing.T) {
	simOnItsOwnHost(t, 3)
	res, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	runs := readRuns(t, res.Dir)
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	r := runs[0]
	if r.Outcome != "error" || r.Error == nil || r.Error.Kind != backend.KindContextTruncated || r.Attempts != 1 || len(r.Reasons) != 0 {
		t.Fatalf("outcome %s, error %+v, %d attempts, reasons %v; want one context_truncated attempt, unscored", r.Outcome, r.Error, r.Attempts, r.Reasons)
	}
	for _, want := range []string{"simulated user", "needs 5,000 tokens", "set simulator.backend.ollama.num_ctx to at least 8192"} {
		if !strings.Contains(r.Error.Message, want) {
			t.Errorf("message %q does not say %q", r.Error.Message, want)
		}
	}
	if res.Pass != 0 || res.Fail != 0 {
		t.Errorf("result %+v: the truncated run was scored", res)
	}
}

// TestContextCheckNamesBothSides: when neither the model's prompt nor the
// simulated user's opening fits, one message names both, so one edit of
// the config fixes the job.
func TestContextCheckNamesBothSides(t *testing.T) {
	models := []fakeollama.Model{{Name: "m", ContextLength: 40960}, {Name: "u", ContextLength: 40960}}
	fake := fakeollama.Start(t, fakeollama.Options{Models: models, Context: 4096,
		PromptTokens: func(*api.ChatRequest) int { return 5000 }, Script: answers})
	simSuite(t, fake.URL, `{model: "u"}`)
	os.WriteFile("c.cue", []byte(fmt.Sprintf("name: \"sim\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: ollama: {host: %q, num_ctx: 4096}\nsimulator: {model: \"u\"}\nmatrix: models: [\"m\"]\n", fake.URL)), 0o644)
	_, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff})
	if err == nil {
		t.Fatal("Run did not stop")
	}
	for _, want := range []string{
		"nor the simulated user's its model's, nothing ran (--no-context-check skips this check)",
		"subset needed needs 5,000 prompt tokens; num_ctx is 4096: set backend.ollama.num_ctx to at least 8192 (model m, longest prompt: case sim)",
		"simulated user: its system prompt and the opening of case sim need 5,000 prompt tokens; num_ctx is 4096: set backend.ollama.num_ctx to at least 8192 (simulator model u)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run error %q does not say %q", err, want)
		}
	}
	if _, err := os.Stat("results"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a result directory was made: %v", err)
	}
	if n := chats(fake); n != 0 {
		t.Errorf("%d chat requests ran; want none", n)
	}
}
