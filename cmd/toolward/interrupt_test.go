package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
)

// TestInterruptDuringPreflight: Ctrl-C once while the backend's preflight
// hangs (an Ollama that accepts and never answers) ends the job at once,
// before the preflight's own two-minute timeout: exit 1, saying nothing
// ran, and no result directory left behind.
func TestInterruptDuringPreflight(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { close(release); srv.Close() })

	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/hi.yaml", []byte("id: hi\nprompt: Say hi.\nexpect:\n  no_calls: true\n  answer: {$contains: Hello}\n"), 0o644)
	os.WriteFile("hang.cue", []byte(`
name: "hang"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: ollama: host: "http://`+ln.Addr().String()+`"
matrix: models: ["m"]
`), 0o644)
	var stdout, stderr strings.Builder
	done := make(chan int)
	go func() { done <- Main([]string{"run", "hang.cue"}, &stdout, &stderr) }()
	<-asked
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	if code := <-done; code != 1 || !strings.Contains(stderr.String(), "interrupted before the first run; nothing ran") {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr.String())
	}
	if ents, _ := os.ReadDir("results/hang"); len(ents) != 0 {
		t.Fatalf("result directory left behind: %v", ents)
	}
}

// TestSecondStopSignalAborts: SIGTERM asks the job to finish its runs in
// flight; when they cannot finish (a model that never answers), a second
// stop signal of another kind, SIGHUP, aborts as a second Ctrl-C does:
// the runs in flight are dropped, the reports written, and the resume
// command printed.
func TestSecondStopSignalAborts(t *testing.T) {
	inFlight := make(chan struct{}, 1)
	fake := fakeollama.Start(t, fakeollama.Options{Script: func(req *api.ChatRequest) fakeollama.Reply {
		if n := len(req.Messages); n == 0 || req.Messages[n-1].Content != "Say hi." {
			return fakeollama.Reply{Content: "Hello!"} // the preflight
		}
		select {
		case inFlight <- struct{}{}:
		default:
		}
		return fakeollama.Reply{Content: "Hello!", Delay: time.Hour} // ends with the request
	}})
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/hi.yaml", []byte("id: hi\nprompt: Say hi.\nexpect:\n  no_calls: true\n  answer: {$contains: Hello}\n"), 0o644)
	os.WriteFile("stuck.cue", []byte(fmt.Sprintf(`
name: "stuck"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: ollama: host: %q
matrix: {models: [%q], seeds: [1, 2, 3]}
`, fake.URL, fakeollama.DefaultModel)), 0o644)
	var stdout, stderr strings.Builder
	done := make(chan int)
	go func() { done <- Main([]string{"run", "stuck.cue", "--out", "out"}, &stdout, &stderr) }()
	<-inFlight
	// Main cannot return before both are handled: its runs never end
	// on their own.
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	code := <-done
	for _, want := range []string{"finishing the runs in flight", "toolward: aborting", "toolward run --resume out"} {
		if !strings.Contains(stderr.String(), want) {
			t.Fatalf("exit %d; stderr lacks %q:\n%s", code, want, stderr.String())
		}
	}
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr.String())
	}
}
