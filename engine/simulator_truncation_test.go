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
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/schema/record"
)

// TestLongConversationCutsTheSimulator: a conversation that goes on
// until the simulated user's prompt outgrows the context its server
// gives (no num_ctx: the running instance's context, from /api/ps), with
// the fake counting tokens from the text as it does by default. Left to
// itself Ollama would drop the simulator's oldest messages and answer
// the rest, its count of prompt tokens under the context (so the run
// failed with max_turns, judged on replies to a conversation the
// simulator no longer saw); asked not to (truncate false), it refuses.
// The run is a context_truncated error of the simulated user, tried
// once and unscored; the conversation up to it is kept.
func TestLongConversationCutsTheSimulator(t *testing.T) {
	long := strings.Repeat("five ", 120)
	models := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "m"}}, Script: func(*api.ChatRequest) fakeollama.Reply {
		return fakeollama.Reply{Content: "2 + 3 = 5. " + long}
	}})
	users := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "u"}}, Context: 1024, Script: func(*api.ChatRequest) fakeollama.Reply {
		return fakeollama.Reply{Content: "Tell me more."}
	}})
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/suite.yaml", []byte(`
id: long
prompt: What is 2 + 3?
needs: [add]
user:
  instructions: You want 2 + 3, and then to hear more about it. Never stop asking.
  max_turns: 8
expect:
  answer: {$contains: "5"}
`), 0o644)
	os.WriteFile("c.cue", []byte(fmt.Sprintf("name: \"sim\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: ollama: host: %q\nsimulator: {model: \"u\", backend: ollama: host: %q}\nmatrix: models: [\"m\"]\n",
		models.URL, users.URL)), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	runs := readRuns(t, res.Dir)
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	r := runs[0]
	if r.Outcome != record.Error || r.Error == nil || r.Error.Kind != backend.KindContextTruncated || r.Attempts != 1 || len(r.Reasons) != 0 || r.Trace.OutOfUserTurns {
		t.Fatalf("outcome %s, error %+v, %d attempts, reasons %v, out of user turns %v; want one context_truncated attempt, unscored",
			r.Outcome, r.Error, r.Attempts, r.Reasons, r.Trace.OutOfUserTurns)
	}
	for _, want := range []string{"simulated user", "Ollama gives u a context of 1,024", "set simulator.backend.ollama.num_ctx to at least 2048"} {
		if !strings.Contains(r.Error.Message, want) {
			t.Errorf("message %q does not say %q", r.Error.Message, want)
		}
	}
	// The simulator answered five times before its sixth prompt was cut;
	// the model answered each.
	if len(r.Trace.Users) != 6 || len(r.Trace.Turns) != 6 {
		t.Errorf("%d user messages and %d model turns kept; want the opening and 5 replies, 6 answers", len(r.Trace.Users), len(r.Trace.Turns))
	}
	if !strings.Contains(r.Error.Message, "more than its context") {
		t.Errorf("message %q: want the prompt refused as longer than the context", r.Error.Message)
	}
	if res.Pass != 0 || res.Fail != 0 || res.Unretryable != 1 {
		t.Errorf("result %+v: want the run unscored and unretryable", res)
	}
}

// TestSimulatorContextCheckSkipped: with the context check skipped
// (--no-context-check), a simulated user whose opening does not fit
// does not stop the job; its first turn is cut at run time and the run
// is a context_truncated error, not the model's failure.
func TestSimulatorContextCheckSkipped(t *testing.T) {
	users := simOnItsOwnHost(t, 0)
	res, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff, SkipContextCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	// The chat was sent (the same setup stops at the check without the
	// skip: TestSimulatorContextCheckStopsBeforeAnyRun).
	if n := chats(users); n != 1 {
		t.Errorf("%d simulator chats; want the one that was cut", n)
	}
	r := readRuns(t, res.Dir)[0]
	if r.Outcome != record.Error || r.Error.Kind != backend.KindContextTruncated || !strings.Contains(r.Error.Message, "simulated user") || len(r.Reasons) != 0 {
		t.Fatalf("outcome %s, error %+v, reasons %v", r.Outcome, r.Error, r.Reasons)
	}
}

// TestTruncationSidesAgree: a run whose prompt Ollama cut is the same
// record, report entry and resume whether the prompt was the model's or
// the simulated user's: an unretryable context_truncated error, not
// scored, counted among the report's infrastructure errors with a
// message naming whose prompt it was; --resume runs it again, and with a
// server that no longer cuts it is scored.
func TestTruncationSidesAgree(t *testing.T) {
	// The simulated user asks once more, then ends.
	talk := fakeollama.PerModel(map[string]fakeollama.Script{
		"m": func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Content: "2 + 3 = 5."} },
		"u": func(req *api.ChatRequest) fakeollama.Reply {
			if len(req.Messages) < 4 {
				return fakeollama.Reply{Content: "Are you sure?"}
			}
			return fakeollama.Reply{Content: "Thanks! ###STOP###"}
		},
	})
	// cutAt counts 5000 prompt tokens for model's prompts of at least
	// from messages, 300 for others: prompts that fit at preflight, cut
	// at the conversation's second turn.
	cutAt := func(model string, from int) func(*api.ChatRequest) int {
		return func(req *api.ChatRequest) int {
			if req.Model == model && len(req.Messages) >= from {
				return 5000
			}
			return 300
		}
	}
	for _, tt := range []struct {
		side, cut, says string
		from            int
	}{
		{"model", "m", "ollama at", 3},
		{"simulator", "u", "simulated user: ollama at", 4},
	} {
		t.Run(tt.side, func(t *testing.T) {
			cutting := fakeollama.Start(t, fakeollama.Options{
				Models: []fakeollama.Model{{Name: "m"}, {Name: "u"}}, Context: 4096, PromptTokens: cutAt(tt.cut, tt.from), Script: talk,
			})
			simSuite(t, cutting.URL, `{model: "u"}`)
			os.WriteFile("c.cue", []byte(fmt.Sprintf("name: \"sim\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: ollama: {host: %q, num_ctx: 4096}\nsimulator: {model: \"u\"}\nmatrix: models: [\"m\"]\n", cutting.URL)), 0o644)
			res, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff})
			if err != nil {
				t.Fatal(err)
			}
			r := readRuns(t, res.Dir)[0]
			if r.Outcome != record.Error || r.Error == nil || r.Error.Kind != backend.KindContextTruncated || r.Attempts != 1 || len(r.Reasons) != 0 || r.Rules != "" {
				t.Fatalf("outcome %s, error %+v, %d attempts, reasons %v, rules %q; want one context_truncated attempt, unscored", r.Outcome, r.Error, r.Attempts, r.Reasons, r.Rules)
			}
			if !strings.HasPrefix(r.Error.Message, tt.says) || !strings.Contains(r.Error.Message, "set backend.ollama.num_ctx to at least 8192") {
				t.Errorf("message %q; want it to start %q and name the setting", r.Error.Message, tt.says)
			}
			if res.Unretryable != 1 || res.Errors != 1 {
				t.Errorf("result %+v; want one unretryable error", res)
			}
			sum, err := report.Summarize(res.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.ErrorKinds) != 1 || sum.ErrorKinds[0] != (report.KindCount{Kind: backend.KindContextTruncated, Count: 1}) || sum.Totals.Fail != 0 || sum.Totals.Error != 1 {
				t.Errorf("report: error kinds %+v, totals %+v", sum.ErrorKinds, sum.Totals)
			}
			if e := sum.Cases[0].Cells[0].Example; e == nil || e.Error == nil || e.Error.Message != r.Error.Message {
				t.Errorf("report example %+v; want the run's error", e)
			}

			// Resumed against a server that gives the context the
			// prompts need, the run runs again and is scored.
			fits := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "m"}, {Name: "u"}}, Script: talk})
			be, err := ollama.New(ollama.Config{Host: fits.URL, NumCtx: 4096})
			if err != nil {
				t.Fatal(err)
			}
			res, err = Run(context.Background(), Options{ResumeDir: res.Dir, Backend: be, Builtin: testServer, Backoff: noBackoff})
			if err != nil {
				t.Fatal(err)
			}
			if runs := readRuns(t, res.Dir); len(runs) != 1 || runs[0].Outcome != record.Pass {
				t.Errorf("after resume: %+v", runs)
			}
		})
	}
}
