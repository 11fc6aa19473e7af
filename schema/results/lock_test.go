package results

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestLockRefusesSecondHolder: a second Lock of a held directory fails
// at once with ErrInUse, naming the holder's pid; after unlock the
// directory can be locked again, and no lock file is left.
func TestLockRefusesSecondHolder(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "in use by toolward pid "+strconv.Itoa(os.Getpid())+" (started ") {
		t.Fatalf("second lock: %v", err)
	}
	unlock()
	if _, err := os.Stat(filepath.Join(dir, LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file after unlock: %v", err)
	}
	unlock, err = Lock(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock()
}

// TestStaleLockFileDoesNotBlock: the lock file a job killed with SIGKILL
// leaves behind (it names a pid, but nobody holds it) does not block the
// next job.
func TestStaleLockFileDoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	// On unix only the flock counts; elsewhere the pid, no running
	// process here, marks the file stale.
	os.WriteFile(filepath.Join(dir, LockFile), []byte("2147483646 2026-01-01T00:00:00Z\n"), 0o644)
	unlock, err := Lock(dir)
	if err != nil {
		t.Fatalf("stale lock file blocked: %v", err)
	}
	unlock()
}

// TestMergeReleasesItsLock: merge holds its output directory while it
// writes, and leaves no lock file in the merged result.
func TestMergeReleasesItsLock(t *testing.T) {
	root := t.TempDir()
	s0 := shardDir(t, root, "", "cfg", nil)
	out := filepath.Join(root, "merged")
	if _, err := Merge(out, []string{s0}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file left in the merged directory: %v", err)
	}
}

// TestLockFileSymlinkNotFollowed: a lock file that is a symbolic link is
// refused, and the file it points to is not truncated.
func TestLockFileSymlinkNotFollowed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on windows")
	}
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "precious")
	os.WriteFile(victim, []byte("keep me"), 0o644)
	os.Symlink(victim, filepath.Join(dir, LockFile))
	if unlock, err := Lock(dir); err == nil {
		unlock()
		t.Fatal("locked through a symbolic link")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Fatalf("the link's target now holds %q", b)
	}
}
