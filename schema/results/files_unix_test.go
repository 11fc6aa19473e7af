//go:build unix

package results

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolward/toolward/internal/userfile"
	"github.com/toolward/toolward/schema/record"
)

// TestSpecialRunsFile: a runs.jsonl that is a named pipe or a link to
// /dev/zero is refused with an error saying what it is, before it is
// opened; before the fix, opening the pipe blocked for ever and /dev/zero
// streamed for ever (report, score and resume hung).
func TestSpecialRunsFile(t *testing.T) {
	fifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, RunsFile), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	zero := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(zero, RunsFile)); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{fifo: "a named pipe", zero: "a character device"} {
		for name, err := range map[string]error{
			"CheckRuns": CheckRuns(dir),
			"Runs":      runsErr(dir),
			"Compact":   compactErr(dir),
		} {
			var nr *userfile.NotRegularError
			if !errors.As(err, &nr) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), RunsFile) {
				t.Errorf("%s of %s: %v, want a not-a-regular-file error naming %s", name, want, err, RunsFile)
			}
		}
	}
}

func runsErr(dir string) error {
	_, err := Runs(func(*record.Record) error { return nil }, dir)
	return err
}

func compactErr(dir string) error {
	_, err := Compact(context.Background(), dir, all)
	return err
}

// TestSpecialConfigFile: a config.json linked to /dev/zero, a named pipe
// or a file over MaxMetaBytes is refused with a clear error; before the
// fix, ReadMeta read /dev/zero until the process ran out of memory.
func TestSpecialConfigFile(t *testing.T) {
	zero := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(zero, ConfigFile)); err != nil {
		t.Fatal(err)
	}
	fifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, ConfigFile), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	huge := t.TempDir()
	f, err := os.Create(filepath.Join(huge, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxMetaBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	for dir, want := range map[string]string{zero: "a character device", fifo: "a named pipe", huge: "over the 64 MiB limit"} {
		if _, err := ReadMeta(dir); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ConfigFile) {
			t.Errorf("ReadMeta: %v, want an error saying %q", err, want)
		}
	}
}
