package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolward/toolward/schema/results"
)

// TestCappedLogCutsAndDrains: writes past the cap (from several server
// processes at once) are reported done, so no server blocks on its
// stderr pipe, but only the first limit bytes and one line saying so
// reach the log; a log that a resumed job finds full gets only the line.
func TestCappedLogCutsAndDrains(t *testing.T) {
	var buf bytes.Buffer
	log := &cappedLog{w: &buf, limit: 1000}
	chunk := []byte(strings.Repeat("x", 99) + "\n")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if n, err := log.Write(chunk); n != len(chunk) || err != nil {
					t.Errorf("write past the cap: %d, %v", n, err)
				}
			}
		}()
	}
	wg.Wait()
	got := buf.String()
	line := "\n… server stderr cut at 1000 bytes; later output dropped\n"
	if !strings.HasSuffix(got, line) || len(got) != 1000+len(line) || strings.Count(got, "cut at") != 1 {
		t.Fatalf("log of %d bytes, ends %q", len(got), got[max(len(got)-80, 0):])
	}

	buf.Reset()
	full := &cappedLog{w: &buf, limit: 1000, written: 1000}
	full.Write(chunk)
	full.Write(chunk)
	if buf.String() != line {
		t.Fatalf("full log got %q", buf.String())
	}
}

// floodEnv, with serverEnv, makes the test server write more than
// MaxStderrBytes to its stderr before it serves.
const floodEnv = "TOOLWARD_ENGINE_TEST_FLOOD_STDERR"

func floodStderr() {
	line := []byte(strings.Repeat("E", 1023) + "\n")
	for range MaxStderrBytes/len(line) + 1024 {
		os.Stderr.Write(line)
	}
}

// TestServerStderrLogIsCapped: command servers that flood stderr (each
// run's process past MaxStderrBytes alone) leave a server-stderr.log of
// MaxStderrBytes and one line saying it was cut, and their runs still
// pass: the engine keeps draining the pipe, so no server blocks on it.
func TestServerStderrLogIsCapped(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/c.yaml", []byte("id: add\nprompt: What is 2 + 3?\nneeds: [add]\nexpect:\n  calls: [{tool: add, args: {a: 2, b: 3}}]\n  answer: {$contains: \"5\"}\n"), 0o644)
	os.WriteFile("flood.cue", []byte(fmt.Sprintf(`
name: "flood"
cases: ["cases/*.yaml"]
server: {command: [%q], env: {%s: "1", %s: "1"}}
backend: replay: "unused"
matrix: {models: ["m"], seeds: [1, 2]}
limits: {concurrency: 2}
`, exe, serverEnv, floodEnv)), 0o644)
	res, err := Run(context.Background(), Options{ConfigPath: "flood.cue", Backend: callNeed{}, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pass != 2 {
		t.Fatalf("result %+v", res)
	}
	log, err := os.ReadFile(filepath.Join(res.Dir, results.StderrFile))
	if err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("\n… server stderr cut at %d bytes; later output dropped\n", MaxStderrBytes)
	if len(log) != MaxStderrBytes+len(line) || !bytes.HasSuffix(log, []byte(line)) {
		t.Fatalf("%s: %d bytes, ends %q", results.StderrFile, len(log), log[max(len(log)-100, 0):])
	}
}
