package session

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolward/toolward/schema"
)

// TestKilledJobsRunDirsRemoved: a job killed with SIGKILL leaves its
// runs' directories (each with its seed copy) in TMPDIR; the next
// Source with isolation "run" removes them, and leaves a live job's
// alone. Before, nothing ever removed them.
func TestKilledJobsRunDirsRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	seed := t.TempDir()
	os.WriteFile(filepath.Join(seed, "notes.json"), []byte(`["seeded"]`), 0o644)
	srv := selfCommand(t, "notes")
	srv.Env["NOTES_FILE"] = schema.RunDirVar + "/notes.json"
	srv.Isolation, srv.Seed = schema.IsolationRun, seed
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	killed := exec.Command(exe)
	killed.Env = append(os.Environ(), roleEnv+"="+roleRunParent, seedEnv+"="+seed)
	out, err := killed.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	guard := time.AfterFunc(time.Minute, func() { killed.Process.Kill() }) // hang guard
	line, err := bufio.NewReader(out).ReadString('\n')
	guard.Stop()
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	if err != nil || line != "ready\n" {
		t.Fatalf("the job to kill said %q (%v)", line, err)
	}
	waitDirs(t, tmp, 2) // the killed job's two are left

	ctx := context.Background()
	live, err := Open(ctx, Options{Server: srv, Warm: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	waitDirs(t, tmp, 1) // the killed job's removed, the live one's made
	liveDirs := listRunDirs(t, tmp)
	again, err := Open(ctx, Options{Server: srv, Warm: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	waitDirs(t, tmp, 2) // the live job's and the new one's
	for _, d := range liveDirs {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("the live job's run directory %s was removed: %v", d, err)
		}
	}
}

// TestSeedSparseAndBounded: a seed's sparse file is copied with its
// holes (a 1 GiB file holding 4 KiB of data takes about that in each
// run's directory, and reads the same), and a seed of more data than
// the limit is refused when the source opens, before any run. Before,
// each run's copy filled the holes (953 MiB per run directory) and no
// seed was too large.
func TestSeedSparseAndBounded(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	seed := t.TempDir()
	os.WriteFile(filepath.Join(seed, "notes.json"), []byte(`["seeded"]`), 0o644)
	f, err := os.Create(filepath.Join(seed, "big.db"))
	if err != nil {
		t.Fatal(err)
	}
	mark := []byte("data in the middle")
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(mark, 512<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	srv := selfCommand(t, "notes")
	srv.Env["NOTES_FILE"] = schema.RunDirVar + "/notes.json"
	srv.Isolation, srv.Seed = schema.IsolationRun, seed
	src, err := Open(context.Background(), Options{Server: srv, Warm: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	waitDirs(t, tmp, 1)
	copied := filepath.Join(listRunDirs(t, tmp)[0], "big.db")
	fi, err := os.Stat(copied)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 1<<30 {
		t.Errorf("copy is %d bytes, want 1 GiB", fi.Size())
	}
	if used := dataSize(fi); used > 1<<20 {
		t.Errorf("the copy of a sparse 1 GiB file takes %d bytes on disk; want its holes kept", used)
	}
	cf, err := os.Open(copied)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(mark))
	cf.ReadAt(got, 512<<20)
	cf.Close()
	if string(got) != string(mark) {
		t.Errorf("the copy holds %q at 512 MiB, want %q", got, mark)
	}

	// Over a limit of 1 KiB (the real one is MaxSeedBytes).
	os.WriteFile(filepath.Join(seed, "more.json"), make([]byte, 2048), 0o644)
	_, err = Open(context.Background(), Options{Server: srv, Limits: Limits{SeedBytes: 1024}})
	var se *Error
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "more than 1 KiB of data, toolward's limit for a seed") {
		t.Fatalf("a seed over the limit: %v; want it refused, naming the limit", err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, runDirsPrefix+"*", "run-*")); len(left) != 1 {
		t.Errorf("run directories %v: the refused source made some", left)
	}
}
