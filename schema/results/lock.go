package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LockFile is the file in a result directory that a job holds locked
// while it writes there (Lock). It holds the holder's pid and start
// time; it is removed when the job ends.
const LockFile = ".toolward.lock"

// ErrInUse is wrapped by the error Lock returns when another process
// holds the directory.
var ErrInUse = errors.New("result directory in use")

// Lock takes the result directory dir for the calling job, so that two
// jobs (two `toolward run --resume DIR` at once, say) never write into
// the same directory. It fails at once, without waiting, when another
// process holds dir, with an error naming that process's pid. The lock
// goes with the process: one killed with SIGKILL leaves no stale lock
// behind (on unix the kernel drops the flock; elsewhere a lock file whose
// pid is dead is taken over). The returned function releases the lock
// and removes the lock file.
func Lock(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, LockFile)
	f, err := lockFile(path)
	if err != nil {
		if errors.Is(err, ErrInUse) {
			return nil, inUse(dir, path)
		}
		return nil, fmt.Errorf("results: locking %s: %w", dir, err)
	}
	f.Truncate(0)
	fmt.Fprintf(f, "%d %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	f.Sync()
	return func() { releaseFile(f, path) }, nil
}

// inUse is the error for a directory another process holds, naming the
// holder as its lock file says.
func inUse(dir, path string) error {
	pid, started := readHolder(path)
	who := "another toolward process"
	if pid > 0 {
		who = "toolward pid " + strconv.Itoa(pid)
		if started != "" {
			who += " (started " + started + ")"
		}
	}
	return &inUseError{fmt.Sprintf("%s is in use by %s; wait for it or stop it", dir, who)}
}

// inUseError is Lock's error for a held directory; it is ErrInUse.
type inUseError struct{ msg string }

func (e *inUseError) Error() string        { return e.msg }
func (e *inUseError) Is(target error) bool { return target == ErrInUse }

// readHolder reads the pid and start time a lock file holds; 0 when it
// holds none (the holder has not written it yet).
func readHolder(path string) (pid int, started string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, ""
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 0, ""
	}
	pid, _ = strconv.Atoi(fields[0])
	if len(fields) > 1 {
		started = fields[1]
	}
	return pid, started
}
