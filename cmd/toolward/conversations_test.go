package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakes/fakejudge"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
	"github.com/toolward/toolward/schema/runconfig"
)

// cassetteScript plays the committed conversation cassettes from a fake
// Ollama: the model's turns for requests to model, the simulated user's
// (role user) for requests to simModel, each conversation found by its
// opening message and the reply by how many turns its side has had.
func cassetteScript(t *testing.T, dir string, cases []*schema.Case, model, simModel string) fakeollama.Script {
	cs, errs := schema.LoadCassettes(dir)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	byCase := map[string]*schema.CassetteRun{}
	for _, c := range cs {
		byCase[c.Case] = &c.Runs[0]
	}
	type sides struct{ model, user []fakeollama.Reply }
	byPrompt := map[string]*sides{}
	for _, c := range cases {
		run := byCase[c.ID]
		if run == nil {
			t.Fatalf("case %s has no cassette", c.ID)
		}
		s := &sides{}
		for _, tu := range run.Turns {
			r := fakeollama.Reply{Content: tu.Content}
			for _, tc := range tu.ToolCalls {
				r.ToolCalls = append(r.ToolCalls, fakeollama.ToolCall{Name: tc.Name, Args: string(tc.Arguments)})
			}
			if tu.Role == schema.CassetteRoleUser {
				s.user = append(s.user, r)
			} else {
				s.model = append(s.model, r)
			}
		}
		byPrompt[c.Prompt] = s
	}
	count := func(msgs []api.Message, role string) int {
		n := 0
		for _, m := range msgs {
			if m.Role == role {
				n++
			}
		}
		return n
	}
	first := func(msgs []api.Message, role string) string {
		for _, m := range msgs {
			if m.Role == role {
				return m.Content
			}
		}
		return ""
	}
	pick := func(replies []fakeollama.Reply, i int) fakeollama.Reply {
		if i < 0 || i >= len(replies) {
			return fakeollama.Reply{Status: 500, Error: "unscripted turn"}
		}
		return replies[i]
	}
	return fakeollama.PerModel(map[string]fakeollama.Script{
		model: func(req *api.ChatRequest) fakeollama.Reply {
			s := byPrompt[first(req.Messages, "user")]
			if s == nil {
				return fakeollama.Reply{Status: 500, Error: "unscripted prompt"}
			}
			return pick(s.model, count(req.Messages, "assistant"))
		},
		// The simulator sees the conversation flipped: its own messages,
		// the opening first, are the assistant's.
		simModel: func(req *api.ChatRequest) fakeollama.Reply {
			s := byPrompt[first(req.Messages, "assistant")]
			if s == nil {
				return fakeollama.Reply{Status: 500, Error: "unscripted opening"}
			}
			return pick(s.user, count(req.Messages, "assistant")-1)
		},
	})
}

// TestConversationsConfig: configs/conversations.cue runs offline from
// its cassettes with the verdicts its cases and cassettes mean (one
// failure on purpose, max_turns); the same suite run against a fake
// Ollama playing both the model and the simulated user, recorded with
// --record, replays from the new cassettes to identical verdicts, and
// the live run's verdicts are those of the committed cassettes.
func TestConversationsConfig(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	t.Chdir(repo)
	cfg, err := runconfig.Load("configs/conversations.cue")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := schema.LoadCases(cfg.Cases)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 10 || cfg.Simulator == nil || cfg.Backend.Replay == "" {
		t.Fatalf("configs/conversations.cue: %d cases, simulator %+v, backend %+v", len(cases), cfg.Simulator, cfg.Backend)
	}
	tmp := t.TempDir()
	var stdout, stderr strings.Builder
	run := func(name string, cfg *schema.Config, extra ...string) map[string]string {
		t.Helper()
		path := filepath.Join(tmp, name+".cue")
		writeConfig(t, path, cfg)
		stdout.Reset()
		stderr.Reset()
		code := Main(append([]string{"run", path, "--out", filepath.Join(tmp, name)}, extra...), &stdout, &stderr)
		if code != 0 && code != 1 { // 1: some runs failed, as one does on purpose
			t.Fatalf("%s: exit %d\n%s\n%s", name, code, stdout.String(), stderr.String())
		}
		return verdicts(t, filepath.Join(tmp, name))
	}
	offline := run("offline", cfg)
	if len(offline) != len(cases) {
		t.Fatalf("%d runs offline, want %d\n%s", len(offline), len(cases), stderr.String())
	}
	fails := 0
	for id, v := range offline {
		if v != "pass " {
			fails++
			if !strings.HasPrefix(v, "fail max_turns") {
				t.Errorf("run %s: %s", id, v)
			}
		}
	}
	if fails != 1 {
		t.Errorf("%d runs failed offline, want 1 (conv-sim-retention-years): %v", fails, offline)
	}
	if t.Failed() {
		b, _ := os.ReadFile(filepath.Join(tmp, "offline", "runs.jsonl"))
		t.Fatalf("offline records:\n%s", b)
	}

	model, simModel, judgeModel := cfg.Matrix.Values(cell.Model)[0], cfg.Simulator.Model, cfg.Judge.Model
	// The live judge is fakejudge: it grades by the rubric (its quoted
	// phrases) inside the delimited material.
	var judgeRequests atomic.Int64
	script := cassetteScript(t, cfg.Backend.Replay, cases, model, simModel)
	fake := fakeollama.Start(t, fakeollama.Options{
		Models: []fakeollama.Model{{Name: model}, {Name: simModel}, {Name: judgeModel}},
		Script: func(req *api.ChatRequest) fakeollama.Reply {
			if req.Model == judgeModel {
				judgeRequests.Add(1)
				return fakejudge.Ollama(req)
			}
			return script(req)
		},
	})
	liveCfg := *cfg
	liveCfg.Backend = schema.Backend{Ollama: &schema.Ollama{Host: fake.URL}}
	cassettes := filepath.Join(tmp, "cassettes")
	live := run("live", &liveCfg, "--record", cassettes)

	replayCfg := *cfg
	replayCfg.Backend = schema.Backend{Replay: cassettes}
	replayed := run("replayed", &replayCfg)
	for _, id := range slices.Sorted(maps.Keys(offline)) {
		if live[id] != offline[id] || replayed[id] != offline[id] {
			t.Errorf("run %s: committed cassettes %q, live %q, its recording replayed %q", id, offline[id], live[id], replayed[id])
		}
	}
	if len(live) != len(offline) || len(replayed) != len(offline) {
		t.Errorf("%d runs offline, %d live, %d replayed", len(offline), len(live), len(replayed))
	}
	// The judged answers: the committed judge turns give the verdicts a
	// live rubric-following judge gives, on the same inputs, and its
	// recording replays to them; one judge request per judged answer.
	offJ, liveJ, repJ := judgements(t, filepath.Join(tmp, "offline")), judgements(t, filepath.Join(tmp, "live")), judgements(t, filepath.Join(tmp, "replayed"))
	judged := 0
	for id, j := range offJ {
		judged += strings.Count(j, "\n")
		if liveJ[id] != j || repJ[id] != j {
			t.Errorf("run %s judged: committed cassettes\n%s live\n%s replayed\n%s", id, j, liveJ[id], repJ[id])
		}
	}
	if judged != 3 || judgeRequests.Load() != int64(judged) {
		t.Errorf("%d judged answers offline, %d live judge requests: want 3 and one request each", judged, judgeRequests.Load())
	}
	// Both sides were recorded: the simulated users' turns are there.
	rs, errs := schema.LoadCassettes(cassettes)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	committed, errs := schema.LoadCassettes(cfg.Backend.Replay)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	judgeTurns := func(cs []*schema.Cassette) map[string][]string {
		out := map[string][]string{}
		for _, c := range cs {
			for _, tu := range c.Runs[0].Turns {
				if tu.Role == schema.CassetteRoleJudge {
					out[c.Case] = append(out[c.Case], tu.Input+" "+tu.Content)
				}
			}
		}
		return out
	}
	users := 0
	for _, c := range rs {
		for _, tu := range c.Runs[0].Turns {
			if tu.Role == schema.CassetteRoleUser {
				users++
			}
		}
	}
	if users != 6 {
		t.Errorf("%d simulated user turns recorded, want the cassettes' 6", users)
	}
	// The committed judge turns are the recorded ones.
	if rec, com := judgeTurns(rs), judgeTurns(committed); !maps.EqualFunc(rec, com, slices.Equal) {
		for _, c := range rs {
			if !slices.Equal(rec[c.Case], com[c.Case]) {
				b, _ := os.ReadFile(filepath.Join(cassettes, c.Case+".yaml"))
				t.Errorf("%s: committed judge turns %q, recorded %q; the recording:\n%s", c.Case, com[c.Case], rec[c.Case], b)
			}
		}
	}
}

// judgements returns each run's judged answers in dir: one line per
// answer with where, input digest, verdict and reason.
func judgements(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_, err := results.RunsLines(func(rec *record.Record, _ []byte) error {
		var b strings.Builder
		for _, j := range rec.Judged {
			fmt.Fprintf(&b, "%s %s %v %s\n", j.Where, j.Input, j.Pass, j.Reason)
		}
		if b.Len() > 0 {
			out[rec.ID] = b.String()
		}
		return nil
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
