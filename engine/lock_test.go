package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema/results"
)

// TestResumeOfBusyDirectoryRefuses: a second job on a result directory a
// job is still writing (two `run --resume DIR` at once) refuses before
// touching it, naming the holder's pid, instead of compacting runs.jsonl
// under the first job's feet; once the first job ends the directory can
// be resumed again. Both jobs run in this process: flock conflicts
// between two opens of the file all the same.
func TestResumeOfBusyDirectoryRefuses(t *testing.T) {
	setup(t)
	inFlight := make(chan struct{})
	release := make(chan struct{})
	be := &scripted{onAnswer: func(n int64) {
		if n == 5 {
			close(inFlight)
			<-release
		}
	}}
	type ran struct {
		res *Result
		err error
	}
	first := make(chan ran, 1)
	go func() {
		res, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: be, Builtin: testServer, Backoff: noBackoff, Workers: 1})
		first <- ran{res, err}
	}()
	<-inFlight
	ents, err := os.ReadDir(filepath.Join("results", "e2e"))
	if err != nil || len(ents) != 1 {
		t.Fatalf("result directories: %v, %v", ents, err)
	}
	dir := filepath.Join("results", "e2e", ents[0].Name())
	before, err := os.Stat(filepath.Join(dir, results.RunsFile))
	if err != nil {
		t.Fatal(err)
	}

	_, err = Run(context.Background(), Options{ResumeDir: dir, Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff})
	close(release)
	want := dir + " is in use by toolward pid " + strconv.Itoa(os.Getpid())
	if err == nil || !errors.Is(err, results.ErrInUse) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "wait for it or stop it") {
		t.Fatalf("second job on a busy directory: %v; want an error containing %q", err, want)
	}
	if after, err := os.Stat(filepath.Join(dir, results.RunsFile)); err != nil || !os.SameFile(before, after) {
		t.Fatalf("the refused job replaced %s (%v)", results.RunsFile, err)
	}
	r := <-first
	if r.err != nil || r.res.Ran != 80 {
		t.Fatalf("first job: %+v, %v", r.res, r.err)
	}
	if got := len(readRuns(t, dir)); got != 80 {
		t.Fatalf("%d records after the first job, want 80", got)
	}
	if _, err := os.Stat(filepath.Join(dir, results.LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file left after the job: %v", err)
	}
	res, err := Run(context.Background(), Options{ResumeDir: dir, Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff})
	if err != nil || res.Skipped == 0 {
		t.Fatalf("resume after the first job ended: %+v, %v", res, err)
	}
}

// TestLockOnlyDirectory: a result directory holding only the lock file
// (its job was killed with -9 before it wrote config.json) is taken by
// --out, and --resume says to do that; before, neither accepted it.
func TestLockOnlyDirectory(t *testing.T) {
	setup(t)
	dir := filepath.Join(t.TempDir(), "out")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, results.LockFile), []byte("12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Options{ResumeDir: dir, Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff})
	if err == nil || !strings.Contains(err.Error(), "--out "+dir) {
		t.Fatalf("resume of a lock-only directory: %v", err)
	}
	res, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", OutDir: dir, Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff})
	if err != nil {
		t.Fatal(err)
	}
	if res.Dir != dir || res.Ran == 0 {
		t.Fatalf("result %+v", res)
	}
}
