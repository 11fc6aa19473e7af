package main

import (
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
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
