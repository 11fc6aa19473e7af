package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolward/toolward/fixtures/fakes/fakejudge"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
)

// TestJudgeDocs: docs/judge.md's worked example is a real run. Its
// config (the conversation suite, its judge on an OpenAI-compatible
// server) runs with fakejudge serving the judge over loopback, giving
// the verdicts the committed judge turns give offline; judge-check with
// it prints what the page shows, figures of time aside; and judge-check
// refuses the offline config, whose judge replays from cassettes.
func TestJudgeDocs(t *testing.T) {
	page := doc(t, "docs/judge.md")
	var liveCfg string
	for _, b := range fences(page, "cue") {
		if strings.HasPrefix(b, "name:") && strings.Contains(b, `base_url: "http://127.0.0.1:8080/v1"`) {
			liveCfg = b
		}
	}
	if liveCfg == "" {
		t.Fatal("docs/judge.md has no config whose judge's base_url is http://127.0.0.1:8080/v1")
	}
	fake := fakeopenai.Start(t, fakeopenai.Options{
		Models: []fakeopenai.Model{{ID: "fakejudge"}},
		Script: fakejudge.OpenAI,
	})
	repo, _ := filepath.Abs("../..")
	t.Chdir(repo)
	tmp := t.TempDir()
	cfg := filepath.Join(tmp, "judge-live.cue")
	os.WriteFile(cfg, []byte(strings.Replace(liveCfg, "http://127.0.0.1:8080/v1", fake.BaseURL, 1)), 0o644)
	main := func(want int, args ...string) string {
		t.Helper()
		var stdout, stderr strings.Builder
		if code := Main(args, &stdout, &stderr); code != want {
			t.Fatalf("toolward %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, stdout.String(), stderr.String())
		}
		return stdout.String() + stderr.String()
	}

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
