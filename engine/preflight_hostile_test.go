package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
	"github.com/toolward/toolward/schema/record"
)

// TestContextCheckIsRetried: the context check's one-token requests are
// tried as a run's turns are (limits.retries 2: three tries): a server
// whose first two measurements answer 500 still lets the job run, and
// one that fails more stops it with a message saying how often it was
// tried. Before, the first 500 stopped the job ("measuring the longest
// prompt ... nothing ran: 500 Internal Server Error").
func TestContextCheckIsRetried(t *testing.T) {
	for _, tt := range []struct {
		fail int
		want string // "" : the job runs
	}{{2, ""}, {3, "(tried 3 times, limits.retries)"}} {
		t.Run(fmt.Sprint(tt.fail), func(t *testing.T) {
			fake := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "m"}}, Script: answers, FailProbes: tt.fail})
			simSuite(t, fake.URL, `{model: "m"}`)
			os.WriteFile("cases/suite.yaml", []byte("id: one\nprompt: What is 2 + 3?\nneeds: [add]\nexpect: {answer: {$contains: \"5\"}}\n"), 0o644)
			res, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff})
			if tt.want == "" {
				if err != nil || res.Pass != 1 {
					t.Fatalf("%d failed measurements: %+v, %v; want the run to pass", tt.fail, res, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "measuring the longest prompt") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v; want the measurement's, saying %q", err, tt.want)
			}
		})
	}
}

// TestNothingLeftContactsNoServer: a resume with every run done (after
// an edit of how runs are judged) re-scores from the records and asks
// the model server nothing: with the server gone it still succeeds.
// Before, it preflighted and measured a prompt, and failed ("backend
// preflight failed, nothing ran: cannot reach Ollama").
func TestNothingLeftContactsNoServer(t *testing.T) {
	fake := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "m"}, {Name: "u"}}, Script: answers})
	simSuite(t, fake.URL, `{model: "u"}`)
	res, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff})
	if err != nil || res.Pass != 1 {
		t.Fatalf("first run: %+v, %v", res, err)
	}
	fake.Close()
	os.WriteFile("cases/suite.yaml", []byte(strings.Replace(simulatedCase, `{$contains: "5"}`, `{$contains: "6"}`, 1)), 0o644)
	res, err = Run(context.Background(), Options{ResumeDir: res.Dir, Builtin: testServer, Backoff: noBackoff})
	if err != nil {
		t.Fatalf("resume with nothing to run: %v", err)
	}
	if res.Ran != 0 || res.Skipped != 1 {
		t.Errorf("resume: %+v; want the one run done already", res)
	}
	if runs := readRuns(t, res.Dir); len(runs) != 1 || runs[0].Outcome != record.Fail {
		t.Errorf("runs %+v; want the run re-scored as a fail", runs)
	}
}

// TestSimulatorPreflightOffersNoTools: the simulated user is offered no
// tools, so its preflight neither offers it one nor asks whether it
// takes them: a simulator model without tool support passes, on an
// OpenAI-compatible server (which refuses a request offering tools) and
// on Ollama (whose model lacks the tools capability). Before, the job
// stopped: "simulator preflight failed (model u), nothing ran: ... does
// not support tools" / "model u cannot call tools".
func TestSimulatorPreflightOffersNoTools(t *testing.T) {
	t.Run("openai", func(t *testing.T) {
		users := fakeopenai.Start(t, fakeopenai.Options{Models: []fakeopenai.Model{{ID: "u", NoTools: true}}, Script: func(*fakeopenai.Request) fakeopenai.Reply {
			return fakeopenai.Reply{Content: "Thanks! ###STOP###"}
		}})
		models := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "m"}}, Script: answers})
		simSuite(t, models.URL, fmt.Sprintf("{model: \"u\", backend: openai: base_url: %q}", users.BaseURL))
		res, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff})
		if err != nil || res.Pass != 1 {
			t.Fatalf("%+v, %v; want the run to pass", res, err)
		}
	})
	t.Run("ollama", func(t *testing.T) {
		users := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "u", NoTools: true}}, Script: func(*api.ChatRequest) fakeollama.Reply {
			return fakeollama.Reply{Content: "Thanks! ###STOP###"}
		}})
		models := fakeollama.Start(t, fakeollama.Options{Models: []fakeollama.Model{{Name: "m"}}, Script: answers})
		simSuite(t, models.URL, fmt.Sprintf("{model: \"u\", backend: ollama: host: %q}", users.URL))
		res, err := Run(context.Background(), Options{ConfigPath: "c.cue", Builtin: testServer, Backoff: noBackoff})
		if err != nil || res.Pass != 1 {
			t.Fatalf("%+v, %v; want the run to pass", res, err)
		}
	})
}
