//go:build !unix

package results

import (
	"errors"
	"io/fs"
	"os"
)

// lockFile creates path exclusively; ErrInUse when it exists and names a
// process that is alive. A lock file left by a dead process is taken
// over.
func lockFile(path string) (*os.File, error) {
	for range 2 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if pid, _ := readHolder(path); pid == 0 || alive(pid) {
			return nil, ErrInUse
		}
		os.Remove(path) // stale: its holder is gone
	}
	return nil, ErrInUse
}

// alive reports whether a process with this pid runs (on Windows,
// FindProcess opens the process and fails when there is none).
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// releaseFile closes the lock file and removes it (Windows removes no
// open file).
func releaseFile(f *os.File, path string) {
	f.Close()
	os.Remove(path)
}
