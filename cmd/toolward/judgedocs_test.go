package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolward/toolward/fixtures/fakes/fakejudge"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// TestJudgeDocs: docs/judge.md's worked example is a real run. Its
// config (the conversation suite, its judge on an OpenAI-compatible
// server) runs with fakejudge serving the judge over loopback, giving
// the verdicts the committed judge turns give offline; judge-check with
// it prints what the page shows, figures of time aside; and judge-check
// refuses the offline config, whose judge replays from cassettes.
func TestJudgeDocs(t *testing.T) {
	page := doc(t, "docs/judge.md")
	fake := fakeopenai.Start(t, fakeopenai.Options{
		Models: []fakeopenai.Model{{ID: "fakejudge"}},
		Script: fakejudge.OpenAI,
	})
	repo, _ := filepath.Abs("../..")
	t.Chdir(repo)
	tmp := t.TempDir()
	cfg := liveJudgeConfig(t, page, tmp, fake.BaseURL, "fakejudge")
	main := mainExits(t)

	main(0, "run", "configs/conversations.cue", "--out", filepath.Join(tmp, "offline"))
	main(0, "run", cfg, "--out", filepath.Join(tmp, "live"))
	// The inputs differ (the judge models' names do); the verdicts not.
	digest := regexp.MustCompile(`(?m)^(\S+) [0-9a-f]{16} `)
	off, live := judgements(t, filepath.Join(tmp, "offline")), judgements(t, filepath.Join(tmp, "live"))
	if len(off) != 3 {
		t.Errorf("%d judged runs offline, want 3", len(off))
	}
	for id, j := range off {
		if digest.ReplaceAllString(live[id], "$1 ") != digest.ReplaceAllString(j, "$1 ") {
			t.Errorf("run %s: offline\n%s live judge\n%s", id, j, live[id])
		}
	}
	before := len(fake.Requests())
	if before != 3 {
		t.Errorf("%d judge requests for 3 judged answers", before)
	}

	got := main(0, "judge-check", cfg)
	if n := len(fake.Requests()) - before; n != 3*(24+3) {
		t.Errorf("judge-check sent %d requests, want 81 (24 labelled and 3 golden answers, 3 votes each)", n)
	}
	shown := regexp.MustCompile("(?s)\\$ toolward judge-check judge-live.cue\n(.*?)```").FindStringSubmatch(page)
	if shown == nil {
		t.Fatal("docs/judge.md shows no output of `$ toolward judge-check judge-live.cue`")
	}
	times := regexp.MustCompile(`[0-9.]+ s of judge latency \([0-9.]+ s wall\)`)
	norm := func(s string) string {
		return times.ReplaceAllString(strings.TrimSpace(s), "T s of judge latency (T s wall)")
	}
	if norm(got) != norm(shown[1]) {
		t.Errorf("docs/judge.md shows\n%s\njudge-check printed\n%s", shown[1], got)
	}

	out := main(1, "judge-check", "configs/conversations.cue")
	if !strings.Contains(out, "replays from the cassettes in fixtures/cassettes/conversations") {
		t.Errorf("judge-check of a replayed judge: %s", out)
	}
}

// liveJudgeConfig writes docs/judge.md's config (page) into dir with its
// judge on the OpenAI-compatible server at base, named model, and
// returns its path.
func liveJudgeConfig(t *testing.T, page, dir, base, model string) string {
	t.Helper()
	for _, b := range fences(page, "cue") {
		if strings.HasPrefix(b, "name:") && strings.Contains(b, `base_url: "http://127.0.0.1:8080/v1"`) && strings.Contains(b, `model: "fakejudge"`) {
			path := filepath.Join(dir, "judge-live.cue")
			b = strings.Replace(strings.Replace(b, "http://127.0.0.1:8080/v1", base, 1), `model: "fakejudge"`, fmt.Sprintf("model: %q", model), 1)
			if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
			return path
		}
	}
	t.Fatal(`docs/judge.md has no config whose judge is model "fakejudge" at base_url http://127.0.0.1:8080/v1`)
	return ""
}

// mainExits returns a runner of toolward's Main that fails t unless the
// command exits with want, and returns its stdout and stderr.
func mainExits(t *testing.T) func(want int, args ...string) string {
	return func(want int, args ...string) string {
		t.Helper()
		var stdout, stderr strings.Builder
		if code := Main(args, &stdout, &stderr); code != want {
			t.Fatalf("toolward %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, stdout.String(), stderr.String())
		}
		return stdout.String() + stderr.String()
	}
}

// TestRealOllamaJudge runs the conversation suite with its judge on a
// real Ollama's OpenAI-compatible /v1 when OLLAMA_URL is set, started by
// ../shared/real-ollama/up.sh with SPEC=cmd/toolward/testdata/synth-judges.json:
// synth-judge, whose reply to a request without tools is a pass verdict,
// judges the 3 judged answers live (its tokens counted), the recording
// replays offline to the same verdicts on the same inputs, and
// judge-check finds a judge that passes everything agrees at the base
// rate (kappa 0); synth-judge-prose, which answers in prose, gives
// errors of kind judge, not verdicts.
func TestRealOllamaJudge(t *testing.T) {
	url := os.Getenv("OLLAMA_URL")
	if url == "" {
		t.Skip("OLLAMA_URL is not set")
	}
	page := doc(t, "docs/judge.md")
	repo, _ := filepath.Abs("../..")
	t.Chdir(repo)
	tmp := t.TempDir()
	main := mainExits(t)
	cfg := liveJudgeConfig(t, page, tmp, url+"/v1", "synth-judge")
	main(0, "run", cfg, "--out", filepath.Join(tmp, "live"), "--record", filepath.Join(tmp, "tapes"))
	live := judgements(t, filepath.Join(tmp, "live"))
	if len(live) != 3 {
		t.Fatalf("%d judged runs live, want 3: %v", len(live), live)
	}
	for id, j := range live {
		if !strings.HasSuffix(j, " true the answer meets the rubric\n") {
			t.Errorf("run %s judged %q", id, j)
		}
	}
	_, err := results.RunsLines(func(rec *record.Record, _ []byte) error {
		for _, j := range rec.Judged {
			if v := j.Votes[0]; v.Tokens.In == 0 || v.Tokens.Out == 0 || v.Latency <= 0 {
				t.Errorf("run %s: vote %+v lacks the judge's tokens or latency", rec.ID, v)
			}
		}
		return nil
	}, filepath.Join(tmp, "live"))
	if err != nil {
		t.Fatal(err)
	}
	replay := filepath.Join(tmp, "replay.cue")
	os.WriteFile(replay, []byte(fmt.Sprintf("name: \"conversations\"\ncases: [\"cases/conversations/*.yaml\"]\nserver: builtin: {}\nbackend: replay: %q\n"+
		"simulator: model: \"scripted-user\"\njudge: model: \"synth-judge\"\nmatrix: models: [\"scripted-model\"]\nlimits: {max_iterations: 8, run_timeout: \"30s\", concurrency: 2, retries: 1}\n", filepath.Join(tmp, "tapes"))), 0o644)
	main(0, "run", replay, "--out", filepath.Join(tmp, "replayed"))
	if rep := judgements(t, filepath.Join(tmp, "replayed")); !maps.Equal(rep, live) {
		t.Errorf("replayed offline\n%v\nlive\n%v", rep, live)
	}
	out := main(0, "judge-check", cfg)
	if !strings.Contains(out, "conv-ticket-priority-corrected expect.turns[1].answer  24       50%    0.00   50% pass  100%        pass") {
		t.Errorf("judge-check of a judge that passes everything:\n%s", out)
	}
	t.Logf("judge-check against synth-judge on a real Ollama:\n%s", out)

	prose := liveJudgeConfig(t, page, t.TempDir(), url+"/v1", "synth-judge-prose")
	main(1, "run", prose, "--out", filepath.Join(tmp, "prose"))
	errs := 0
	_, err = results.RunsLines(func(rec *record.Record, _ []byte) error {
		if rec.Error != nil {
			errs++
			if rec.Error.Kind != "judge" || !strings.Contains(rec.Error.Message, "want one JSON object") || len(rec.Judged) != 0 {
				t.Errorf("run %s: error %+v judged %+v", rec.ID, rec.Error, rec.Judged)
			}
		}
		return nil
	}, filepath.Join(tmp, "prose"))
	if err != nil || errs != 3 {
		t.Errorf("%d error records for 3 judged answers (%v)", errs, err)
	}
}
