//go:build unix

package schema

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadFileRefusesNonRegular: a device, a directory or a named pipe
// given as a case file or config is refused by name, without reading it
// (/dev/zero used to be read until memory ran out; a named pipe blocked
// forever).
func TestReadFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	paths := map[string]string{"a directory": dir}
	if _, err := os.Stat("/dev/zero"); err == nil {
		paths["a character device"] = "/dev/zero"
	}
	fifo := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil {
		paths["a named pipe"] = fifo
	}
	for kind, p := range paths {
		_, err := ReadFile(p, "case file", MaxCaseFileSize)
		var nr *NotRegularError
		if !errors.As(err, &nr) {
			t.Errorf("ReadFile(%s): got %v, want a NotRegularError", p, err)
			continue
		}
		want := fmt.Sprintf("read %s: not a regular file (%s); want a case file", p, kind)
		if err.Error() != want {
			t.Errorf("ReadFile(%s):\n got  %s\n want %s", p, err, want)
		}
	}
}
