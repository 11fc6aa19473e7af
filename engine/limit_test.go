package engine

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
)

// TestHostConcurrency: with ollama.host_concurrency below the number of
// workers, no more than that many chat requests reach the server at once.
func TestHostConcurrency(t *testing.T) {
	var inFlight, most atomic.Int64
	fake := fakeollama.Start(t, fakeollama.Options{Script: func(*api.ChatRequest) fakeollama.Reply {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(5 * time.Millisecond) // give other workers the chance to overlap
		return fakeollama.Reply{Content: "Hello!"}
	}})
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/hi.yaml", []byte("id: hi\nprompt: Say hi.\nexpect:\n  no_calls: true\n  answer: {$contains: Hello}\n"), 0o644)
	os.WriteFile("limit.cue", []byte(fmt.Sprintf(`
name: "limit"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: ollama: {host: %q, host_concurrency: 2}
matrix: {models: [%q], seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}
limits: concurrency: 6
`, fake.URL, fakeollama.DefaultModel)), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "limit.cue", Builtin: Bundled})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pass != 12 {
		t.Fatalf("result %+v", res)
	}
	if m := most.Load(); m > 2 {
		t.Fatalf("%d chat requests at once, want at most 2", m)
	}
}
