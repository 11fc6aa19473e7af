package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/toolward/toolward/internal/userfile"
)

// MaxMetaBytes bounds config.json: a real one is a few KiB (a config and
// one digest per case), so anything near the limit is not one.
const MaxMetaBytes = 64 << 20

// ReadMetaBytes reads dir/config.json through userfile.Read: a regular
// file of at most MaxMetaBytes, so a config.json that is a device, a named
// pipe or a huge file is an error rather than a hang or an exhausted
// memory. A missing file is an error wrapping fs.ErrNotExist.
func ReadMetaBytes(dir string) ([]byte, error) {
	return userfile.Read(filepath.Join(dir, ConfigFile), "toolward "+ConfigFile, MaxMetaBytes)
}

// openRuns opens path (a runs.jsonl) for reading, refusing anything but
// a regular file before opening it (opening a named pipe blocks until a
// writer appears, and a device such as /dev/zero never ends) and again
// after (the path may have been replaced in between). Records bound each
// line, not the file, so a regular file of any size streams.
func openRuns(path string) (*os.File, error) {
	if err := checkRegular(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(path, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkRegular returns the error of stat'ing path (symbolic links
// followed), or a *userfile.NotRegularError when it is not a regular file.
func checkRegular(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "open" // what the caller was about to do: "open x: no such file or directory"
		}
		return err
	}
	if !fi.Mode().IsRegular() {
		return notRegular(path, fi.Mode())
	}
	return nil
}

func notRegular(path string, mode fs.FileMode) error {
	return &fs.PathError{Op: "read", Path: path, Err: &userfile.NotRegularError{What: "toolward " + RunsFile, Mode: mode}}
}

// errNoMeta says dir has no config.json.
func errNoMeta(dir string) error {
	return fmt.Errorf("%s is not a result directory (no %s)", dir, ConfigFile)
}
