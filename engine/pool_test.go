package engine

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/schema/record"
)

// TestPoolSurvivesKilledHost: backend.ollama.hosts with three hosts, one
// killed while it serves a turn. Every run passes on the first attempt
// (the turn goes to another host), and every turn names the host that
// served it. Host a takes one turn at a time, so the turn it answers is
// delivered whole before the turn that kills it arrives (two at once
// raced: closing a cut the answer still on its way too).
func TestPoolSurvivesKilledHost(t *testing.T) {
	hit := make(chan struct{})
	script := func(kill bool) fakeollama.Script {
		var n atomic.Int64
		return func(req *api.ChatRequest) fakeollama.Reply {
			if kill && n.Add(1) == 2 {
				close(hit)
				return fakeollama.Reply{Delay: time.Hour} // until the host dies
			}
			return fakeollama.Reply{Content: "Hello!"}
		}
	}
	a := fakeollama.New(fakeollama.Options{Script: script(true)})
	var once sync.Once
	kill := func() { once.Do(a.Close) }
	t.Cleanup(kill)
	b := fakeollama.Start(t, fakeollama.Options{Script: script(false)})
	c := fakeollama.Start(t, fakeollama.Options{Script: script(false)})
	go func() {
		<-hit
		kill()
	}()

	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/hi.yaml", []byte("id: hi\nprompt: Say hi.\nexpect:\n  no_calls: true\n  answer: {$contains: Hello}\n"), 0o644)
	os.WriteFile("pool.cue", []byte(fmt.Sprintf(`
import "list"

name: "pool"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: ollama: {hosts: [{url: %q, concurrency: 1}, %q, {url: %q, concurrency: 1}], host_concurrency: 2}
matrix: {models: [%q], seeds: [for s in list.Range(1, 61, 1) {s}]}
limits: {concurrency: 4, retries: 0}
`, a.URL, b.URL, c.URL, fakeollama.DefaultModel)), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "pool.cue", Builtin: Bundled, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pass != 60 || res.Fail != 0 || res.Errors != 0 {
		t.Fatalf("result %+v, want 60 passes", res)
	}
	select {
	case <-hit:
	default:
		t.Fatal("host a was never killed")
	}
	hosts := map[string]int{}
	for _, r := range readRuns(t, res.Dir) {
		if r.Outcome != record.Pass || r.Attempts != 1 {
			t.Errorf("%s: outcome %s after %d attempts", r.ID, r.Outcome, r.Attempts)
		}
		for _, turn := range r.Trace.Turns {
			hosts[turn.Host]++
		}
	}
	if hosts[a.URL] < 1 || hosts[b.URL] == 0 || hosts[c.URL] == 0 || len(hosts) != 3 {
		t.Errorf("turns by host: %v", hosts)
	}
}

// TestPoolAllHostsFailing: when every host fails, runs end as
// infrastructure errors after the engine's retries, never as failures,
// and a later --resume would run them again.
func TestPoolAllHostsFailing(t *testing.T) {
	down := func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Status: 503, Error: "overloaded"} }
	a := fakeollama.Start(t, fakeollama.Options{Script: down})
	b := fakeollama.Start(t, fakeollama.Options{Script: down})
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/hi.yaml", []byte("id: hi\nprompt: Say hi.\nexpect:\n  no_calls: true\n  answer: {$contains: Hello}\n"), 0o644)
	os.WriteFile("pool.cue", []byte(fmt.Sprintf(`
name: "pool"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: ollama: hosts: [%q, %q]
matrix: {models: [%q], seeds: [1, 2, 3]}
limits: {concurrency: 2, retries: 1}
`, a.URL, b.URL, fakeollama.DefaultModel)), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "pool.cue", Builtin: Bundled, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 3 || res.Fail != 0 || res.Pass != 0 {
		t.Fatalf("result %+v, want 3 errors", res)
	}
	for _, r := range readRuns(t, res.Dir) {
		if r.Error == nil || r.Error.Kind != "backend" || r.Attempts != 2 {
			t.Errorf("%s: error %+v after %d attempts", r.ID, r.Error, r.Attempts)
		}
	}
}
