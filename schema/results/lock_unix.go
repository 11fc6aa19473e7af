//go:build unix

package results

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile opens path and takes an exclusive flock on it without
// waiting; ErrInUse when another open file holds it. The kernel releases
// the lock when the process ends, however it ends.
func lockFile(path string) (*os.File, error) {
	for range 100 {
		// Neither a symbolic link (the truncation that follows would hit
		// its target) nor a named pipe (opening it could block).
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
		if err != nil {
			return nil, err
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			return nil, fmt.Errorf("%s is not a regular file; remove it", path)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, ErrInUse
			}
			if noLocks(err) {
				// A file system without flock (some FUSE and old NFS
				// mounts): the job runs unguarded rather than not at all.
				return os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
			}
			return nil, err
		}
		if sameFile(f, path) {
			return f, nil
		}
		// The holder removed the file between our open and our lock:
		// the lock is on a file no longer in the directory.
		f.Close()
	}
	return nil, ErrInUse
}

// noLocks reports whether err says the file system does not do flock.
func noLocks(err error) bool {
	return errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EINVAL)
}

// sameFile reports whether f is still the file at path.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// releaseFile removes the lock file while still holding it, then drops
// the lock: a process that opened the old file meanwhile gets a lock on a
// file no longer in the directory, sees it (sameFile) and tries again.
func releaseFile(f *os.File, path string) {
	os.Remove(path)
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}
