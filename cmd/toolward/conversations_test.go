package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
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

	model, simModel := cfg.Matrix.Values(cell.Model)[0], cfg.Simulator.Model
	fake := fakeollama.Start(t, fakeollama.Options{
		Models: []fakeollama.Model{{Name: model}, {Name: simModel}},
		Script: cassetteScript(t, cfg.Backend.Replay, cases, model, simModel),
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
	// Both sides were recorded: the simulated users' turns are there.
	rs, errs := schema.LoadCassettes(cassettes)
	if len(errs) > 0 {
		t.Fatal(errs)
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
}
