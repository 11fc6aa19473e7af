package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/fixtures/fakes/fakeanthropic"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/runconfig"
)

// goldenScript plays each case's golden trajectory, one call per turn
// and then the answer, found by the case's prompt.
func goldenScript(t *testing.T, cases []*schema.Case) fakeanthropic.Script {
	byPrompt := map[string]*schema.Golden{}
	for _, c := range cases {
		if c.Golden == nil || c.Prompt == "" {
			t.Fatalf("case %s has no golden or no prompt", c.ID)
		}
		byPrompt[c.Prompt] = c.Golden
	}
	return func(req *fakeanthropic.Request) fakeanthropic.Reply {
		g := byPrompt[fakeanthropic.FirstUser(req)]
		if g == nil {
			return fakeanthropic.Reply{Status: 500, Error: "unscripted prompt"}
		}
		done := len(fakeanthropic.ToolResults(req))
		if done >= len(g.Calls) {
			return fakeanthropic.Reply{Content: g.Answer}
		}
		args, _ := json.Marshal(g.Calls[done].Args)
		return fakeanthropic.Reply{ToolCalls: []fakeanthropic.ToolCall{{Name: g.Calls[done].Tool, Args: string(args)}}}
	}
}

// writeConfig writes cfg as a config file (CUE reads JSON).
func writeConfig(t *testing.T, path string, cfg *schema.Config) {
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func verdicts(t *testing.T, dir string) map[string]string {
	f, err := os.Open(filepath.Join(dir, "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	r := record.NewReader(f, "runs.jsonl")
	for r.Scan() {
		rec, err := r.Record()
		if err != nil {
			t.Fatal(err)
		}
		var reasons []string
		for _, rs := range rec.Reasons {
			reasons = append(reasons, rs.Code)
		}
		out[rec.ID] = string(rec.Outcome) + " " + strings.Join(reasons, ",")
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestClaudeConfig: configs/claude.cue, pointed at the fake Anthropic API
// playing each case's golden, runs every case to a pass; recorded with
// --record and replayed from the cassettes, every run comes to the same
// verdict under the same id.
func TestClaudeConfig(t *testing.T) {
	const keyEnv, key = "TOOLWARD_TEST_CLAUDE_KEY", "sk-ant-claude-config-test"
	t.Setenv(keyEnv, key)
	repo, _ := filepath.Abs("../..")
	t.Chdir(repo) // the config's case paths are relative to the repository
	cfg, err := runconfig.Load("configs/claude.cue")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Backend.Anthropic == nil || !strings.HasPrefix(cfg.Matrix.Values(cell.Model)[0], "claude-") {
		t.Fatalf("configs/claude.cue: backend %+v, models %v", cfg.Backend, cfg.Matrix.Values(cell.Model))
	}
	cases, err := schema.LoadCases(cfg.Cases)
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeanthropic.Start(t, fakeanthropic.Options{APIKey: key, Script: goldenScript(t, cases), Models: []fakeanthropic.Model{{ID: cfg.Matrix.Values(cell.Model)[0]}}})
	cfg.Backend.Anthropic.BaseURL, cfg.Backend.Anthropic.APIKeyEnv = fake.URL, keyEnv
	cfg.Prices = map[string]schema.Price{cfg.Matrix.Values(cell.Model)[0]: {Input: 3, Output: 15}}

	tmp := t.TempDir()
	live, cassettes := filepath.Join(tmp, "claude.cue"), filepath.Join(tmp, "cassettes")
	writeConfig(t, live, cfg)
	var stdout, stderr strings.Builder
	if code := Main([]string{"run", live, "--filter", "seed=1", "--out", filepath.Join(tmp, "live"), "--record", cassettes}, &stdout, &stderr); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	got := verdicts(t, filepath.Join(tmp, "live"))
	want := len(cases) * len(cfg.Matrix.Values(cell.Temperature)) * len(cfg.Matrix.Tools)
	if len(got) != want {
		t.Fatalf("%d runs, want %d\n%s", len(got), want, stdout.String())
	}
	for id, v := range got {
		if v != "pass " {
			t.Errorf("run %s: %s", id, v)
		}
	}

	// plan --estimate: the whole plan (three seeds) from the seed-1
	// runs is three times what those runs cost.
	var sum struct{ Cost struct{ Total float64 } }
	b, _ := os.ReadFile(filepath.Join(tmp, "live", "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil || sum.Cost.Total <= 0 {
		t.Fatalf("summary.json cost %+v: %v", sum, err)
	}
	stdout.Reset()
	if code := Main([]string{"plan", live, "--estimate", filepath.Join(tmp, "live")}, &stdout, &stderr); code != 0 {
		t.Fatalf("plan --estimate: exit %d\n%s", code, stderr.String())
	}
	var est float64
	var runs int
	line := stdout.String()[strings.Index(stdout.String(), "estimated cost: "):]
	if _, err := fmt.Sscanf(line, "estimated cost: $%g for %d runs", &est, &runs); err != nil || runs != 3*want || math.Abs(est-3*sum.Cost.Total) > 0.01*est {
		t.Errorf("estimate %g for %d runs, want %g for %d: %v\n%s", est, runs, 3*sum.Cost.Total, 3*want, err, line)
	}
	if !strings.Contains(line, fmt.Sprintf("%d runs matched by case and model, 0 by case only, 0 by the mean", 3*want)) {
		t.Errorf("estimate: %s", line)
	}

	cfg.Prices = nil
	cfg.Backend = schema.Backend{Replay: cassettes}
	replayed := filepath.Join(tmp, "replay.cue")
	writeConfig(t, replayed, cfg)
	stdout.Reset()
	if code := Main([]string{"run", replayed, "--filter", "seed=1", "--out", filepath.Join(tmp, "replayed")}, &stdout, &stderr); code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	stderr.Reset()
	if code := Main([]string{"plan", replayed, "--estimate", filepath.Join(tmp, "live")}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "--estimate needs prices") {
		t.Errorf("plan --estimate without prices: exit %d: %s", code, stderr.String())
	}
	again := verdicts(t, filepath.Join(tmp, "replayed"))
	for _, id := range slices.Sorted(maps.Keys(got)) {
		if again[id] != got[id] {
			t.Errorf("run %s: live %q, replayed %q", id, got[id], again[id])
		}
	}
	if len(again) != len(got) {
		t.Errorf("%d runs replayed, %d live", len(again), len(got))
	}
}
