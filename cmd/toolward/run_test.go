package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakeollama"
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

// TestInterruptAndResume sends SIGINT to a job against a slow model: the
// runs in flight finish and are recorded, toolward exits 1 saying how to
// resume, and the resume runs exactly the rest.
func TestInterruptAndResume(t *testing.T) {
	fake := fakeollama.Start(t, fakeollama.Options{Script: func(req *api.ChatRequest) fakeollama.Reply {
		return fakeollama.Reply{Content: "Hello!", Delay: 50 * time.Millisecond}
	}})
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
	var stdout, stderr strings.Builder
	done := make(chan int)
	go func() { done <- Main([]string{"run", "slow.cue", "--out", out}, &stdout, &stderr) }()
	for countLines(runs) < 4 {
		time.Sleep(5 * time.Millisecond)
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	code := <-done
	first := countLines(runs)
	if code != 1 || first >= 60 || first < 4 {
		t.Fatalf("exit %d with %d runs recorded\nstderr:\n%s", code, first, stderr.String())
	}
	if want := "toolward run --resume " + out; !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "finishing the runs in flight") {
		t.Fatalf("stderr lacks the resume hint:\n%s", stderr.String())
	}

	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"run", "--resume", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr.String())
	}
	if n := countLines(runs); n != 60 {
		t.Fatalf("after resume: %d records, want 60", n)
	}
	if !strings.Contains(stdout.String(), "60 runs: 60 pass") || !strings.Contains(stderr.String(), fmt.Sprintf("(%d of 60 already done)", first)) {
		t.Fatalf("resume output:\n%s\n%s", stdout.String(), stderr.String())
	}
}
