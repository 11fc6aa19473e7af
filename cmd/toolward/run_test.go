package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/internal/analysis/report"
)

func countLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
	}
	return n
}

// TestInterruptAndResume sends SIGINT, SIGTERM (docker stop, Kubernetes)
// or SIGHUP to a job against a model that holds its answers: the runs in
// flight finish and are recorded, the reports are written, toolward exits
// 1 saying how to resume, and the resume runs exactly the rest. The model
// answers the first four runs at once and holds every later request until
// toolward has said it is finishing the runs in flight, so the signal
// lands mid-job however fast or loaded the machine is.
func TestInterruptAndResume(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) { interruptAndResume(t, sig) })
	}
}

// watchedWriter is a strings.Builder safe for a concurrent reader that
// closes seen once what was written contains want.
type watchedWriter struct {
	mu   sync.Mutex
	b    strings.Builder
	want string
	seen chan struct{}
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.b.Write(p)
	if w.seen != nil && strings.Contains(w.b.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return n, err
}

func (w *watchedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func interruptAndResume(t *testing.T, sig syscall.Signal) {
	release := make(chan struct{})
	var asked atomic.Int64
	fake := fakeollama.Start(t, fakeollama.Options{Script: func(req *api.ChatRequest) fakeollama.Reply {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Content == "Say hi." && asked.Add(1) > 4 {
			<-release // a run's request, after the first four
		}
		return fakeollama.Reply{Content: "Hello!"}
	}})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/hi.yaml", []byte("id: hi\nprompt: Say hi.\nexpect:\n  no_calls: true\n  answer: {$contains: Hello}\n"), 0o644)
	seeds := make([]string, 60)
	for i := range seeds {
		seeds[i] = fmt.Sprint(i)
	}
	os.WriteFile("slow.cue", []byte(fmt.Sprintf(`
name: "slow"
cases: ["cases/*.yaml"]
server: builtin: {}
backend: ollama: host: %q
matrix: {models: [%q], seeds: [%s]}
`, fake.URL, fakeollama.DefaultModel, strings.Join(seeds, ", "))), 0o644)

	out := filepath.Join(dir, "out")
	runs := filepath.Join(out, "runs.jsonl")
	var stdout strings.Builder
	stderr := &watchedWriter{want: "finishing the runs in flight", seen: make(chan struct{})}
	seen := stderr.seen
	done := make(chan int)
	go func() { done <- Main([]string{"run", "slow.cue", "--out", out}, &stdout, stderr) }()
	hang := time.After(time.Minute) // a hang guard, not a speed check
	for countLines(runs) < 4 {
		select {
		case code := <-done:
			t.Fatalf("exit %d before four runs were recorded\nstderr:\n%s", code, stderr.String())
		case <-hang:
			t.Fatalf("%d runs recorded a minute after the start, want 4 before the signal\nstderr:\n%s", countLines(runs), stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	syscall.Kill(os.Getpid(), sig)
	select {
	case <-seen:
	case code := <-done:
		t.Fatalf("exit %d without saying it finishes the runs in flight\nstderr:\n%s", code, stderr.String())
	case <-time.After(time.Minute): // a hang guard, not a speed check
		t.Fatalf("no word of finishing the runs in flight a minute after %s\nstderr:\n%s", sig, stderr.String())
	}
	unblock()
	code := <-done
	first := countLines(runs)
	if _, err := os.Stat(filepath.Join(out, report.HTMLFile)); err != nil {
		t.Fatalf("no report after %s: %v\nstderr:\n%s", sig, err, stderr.String())
	}
	if code != 1 || first >= 60 || first < 4 {
		t.Fatalf("exit %d with %d runs recorded\nstderr:\n%s", code, first, stderr.String())
	}
	if want := "toolward run --resume " + out; !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr lacks the resume hint:\n%s", stderr.String())
	}

	stdout.Reset()
	var errs strings.Builder
	if code := Main([]string{"run", "--resume", out}, &stdout, &errs); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, errs.String())
	}
	if n := countLines(runs); n != 60 {
		t.Fatalf("after resume: %d records, want 60", n)
	}
	if !strings.Contains(stdout.String(), "60 runs: 60 pass") || !strings.Contains(errs.String(), fmt.Sprintf("(%d of 60 already done)", first)) {
		t.Fatalf("resume output:\n%s\n%s", stdout.String(), errs.String())
	}
}

// TestRunAgainstServeHTTP runs the demo's side-effect case against
// `toolward serve --http` in another process, through `server: url:`:
// tools, the confirm gate and the server's elicitation work over
// streamable HTTP as they do in-process.
func TestRunAgainstServeHTTP(t *testing.T) {
	// testscript.Main put a `toolward` built from this test binary in $PATH.
	srv := exec.Command("toolward", "serve", "--http", "127.0.0.1:0")
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	// The server says where it listens once it does.
	sc := bufio.NewScanner(stderr)
	var url string
	for url == "" && sc.Scan() {
		url = regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`).FindString(sc.Text())
	}
	if url == "" {
		t.Fatalf("toolward serve --http did not say where it listens: %v", sc.Err())
	}
	go func() {
		for sc.Scan() {
		}
	}()

	work := t.TempDir()
	cfg := filepath.Join(work, "http.cue")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`
name: "http"
cases: ["cases/**/*.yaml"]
filter: ["case=fx-delete-approved-test-record", "case=sql-engineering-raise"]
server: url: %q
backend: replay: "fixtures/cassettes/demo"
matrix: {models: ["m"], confirm: ["approve", "deny"]}
`, url)), 0o644)
	t.Chdir("../..") // the repository: cases and cassettes
	out := filepath.Join(work, "out")
	var stdout, errs strings.Builder
	if code := Main([]string{"run", cfg, "--out", out}, &stdout, &errs); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), errs.String())
	}
	if !strings.Contains(stdout.String(), "4 runs: 4 pass, 0 fail, 0 error") {
		t.Fatalf("stdout:\n%s", stdout.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"confirm":"approved","elicitations":["accept"]`, `"confirm":"denied"`, `"tool":"query_database"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("runs.jsonl lacks %s", want)
		}
	}
}
