package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/ollama"
	"github.com/toolward/toolward/engine/user"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
	"github.com/toolward/toolward/schema/record"
)

// cutThanks is a simulated user's last reply cut inside its stop marker
// (###STOP###): sent on, the conversation would go on past it and the
// model fail with max_turns.
const cutThanks = "Perfect, thank you! ###ST"

// TestCutSimulatorReplyIsAnError: a simulated user's reply that stops at
// its token limit (Ollama's done_reason length, OpenAI's finish_reason
// length) or at toolward's reply limit is the simulator's failure: an
// error of kind simulator naming the done reason, tried once, never
// scored, the cut reply kept in the trace as unsent. Before, the cut
// reply was sent to the model as whole and the run failed with
// max_turns (outcome fail, 3 user messages sent).
func TestCutSimulatorReplyIsAnError(t *testing.T) {
	model := func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Content: "2 + 3 = 5."} }
	for _, tt := range []struct {
		name, reason string
		setup        func(t *testing.T) (sim string, be backend.Backend)
	}{
		{"ollama length", "length", func(t *testing.T) (string, backend.Backend) {
			users := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "u"}}, Script: func(*api.ChatRequest) fakeollama.Reply {
				return fakeollama.Reply{Content: cutThanks, DoneReason: "length"}
			}})
			return fmt.Sprintf("{model: \"u\", backend: ollama: host: %q}", users.URL), nil
		}},
		{"openai length", "length", func(t *testing.T) (string, backend.Backend) {
			users := fakeopenai.Start(t, fakeopenai.Options{Models: []fakeopenai.Model{{ID: "u"}}, Script: func(*fakeopenai.Request) fakeopenai.Reply {
				return fakeopenai.Reply{Content: cutThanks, FinishReason: "length"}
			}})
			return fmt.Sprintf("{model: \"u\", backend: openai: base_url: %q}", users.BaseURL), nil
		}},
		{"toolward's reply limit", "reply_limit", func(t *testing.T) (string, backend.Backend) {
			users := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "u"}}, Script: func(*api.ChatRequest) fakeollama.Reply {
				return fakeollama.Reply{Content: cutThanks + "OP###"}
			}})
			be, err := ollama.New(ollama.Config{Host: users.URL, MaxReplyBytes: len(cutThanks)})
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("{model: \"u\", backend: ollama: host: %q}", users.URL), be
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			models := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "m"}}, Script: model})
			sim, be := tt.setup(t)
			t.Chdir(t.TempDir())
			os.MkdirAll("cases", 0o755)
			os.WriteFile("cases/suite.yaml", []byte(strings.Replace(simulatedCase, "max_turns: 2", "max_turns: 3", 1)), 0o644)
			os.WriteFile("c.cue", []byte(fmt.Sprintf("name: \"sim\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: ollama: host: %q\nsimulator: %s\nmatrix: models: [\"m\"]\n", models.URL, sim)), 0o644)
			res, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff, Simulator: be})
			if err != nil {
				t.Fatal(err)
			}
			r := readRuns(t, res.Dir)[0]
			if r.Outcome != record.Error || r.Error == nil || r.Error.Kind != user.KindSimulator || r.Attempts != 1 || len(r.Reasons) != 0 {
				t.Fatalf("outcome %s, error %+v, %d attempts, reasons %v; want one simulator error, unscored", r.Outcome, r.Error, r.Attempts, r.Reasons)
			}
			if !strings.Contains(r.Error.Message, "done reason "+tt.reason) {
				t.Errorf("message %q does not name done reason %s", r.Error.Message, tt.reason)
			}
			if len(r.Trace.Users) != 2 || !r.Trace.Users[1].Unsent || !strings.HasPrefix(r.Trace.Users[1].Content, "Perfect") {
				t.Errorf("users %+v; want the opening and the cut reply, unsent", r.Trace.Users)
			}
			if res.Unretryable != 1 {
				t.Errorf("result %+v; want the error unretryable", res)
			}
		})
	}
}

// TestConversationIsBounded: a simulated user whose every reply is long
// (here 20,000 bytes; up to the 4 MiB reply limit in the wild) and who
// never stops makes the conversation, sent whole at every turn, grow
// past toolward's bound on one conversation: the run ends there as the
// simulator's error naming the limit, unscored, instead of sending the
// history again for every turn of user.max_turns. Before, it went on to
// user.max_turns (16 user messages, the last request over 300,000 bytes
// here; 63 MB with 4 MiB replies) and failed the model with max_turns.
func TestConversationIsBounded(t *testing.T) {
	long := "Tell me more. " + strings.Repeat("and more ", 20_000/9)
	talk := fakeollama.PerModel(map[string]fakeollama.Script{
		"m": func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Content: "2 + 3 = 5."} },
		"u": func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Content: long} },
	})
	fake := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "m"}, {Name: "u"}}, Script: talk})
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/suite.yaml", []byte(strings.Replace(simulatedCase, "max_turns: 2", "max_turns: 16", 1)), 0o644)
	os.WriteFile("c.cue", []byte(fmt.Sprintf("name: \"sim\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: ollama: host: %q\nsimulator: {model: \"u\"}\nmatrix: models: [\"m\"]\n", fake.URL)), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff, MaxConversationBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	r := readRuns(t, res.Dir)[0]
	if r.Outcome != record.Error || r.Error == nil || r.Error.Kind != user.KindSimulator || r.Attempts != 1 || len(r.Reasons) != 0 {
		t.Fatalf("outcome %s, error %+v, %d attempts, reasons %v, %d user messages; want one simulator error, unscored", r.Outcome, r.Error, r.Attempts, r.Reasons, len(r.Trace.Users))
	}
	if !strings.Contains(r.Error.Message, "over toolward's limit of 65,536 bytes for one conversation") {
		t.Errorf("message %q does not name the limit", r.Error.Message)
	}
	// 20,000-byte replies: the fourth puts the conversation over 64 KiB.
	if len(r.Trace.Users) != 5 || len(r.Trace.Turns) != 4 {
		t.Errorf("%d user messages, %d model turns; want the opening and 4 replies, 4 answers", len(r.Trace.Users), len(r.Trace.Turns))
	}
}
