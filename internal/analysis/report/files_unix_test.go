//go:build unix

package report

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSpecialFiles: a config.json linked to /dev/zero becomes a warning
// (before the fix: out of memory), and a runs.jsonl that is a named pipe
// or a link to /dev/zero is an error naming it (before: a hang).
func TestSpecialFiles(t *testing.T) {
	dir := planDir(t)
	cfg := filepath.Join(dir, ConfigFile)
	os.Remove(cfg)
	if err := os.Symlink("/dev/zero", cfg); err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(dir)
	if err != nil || s.Totals.Runs != 6 || !strings.Contains(strings.Join(s.Warnings, "\n"), "not a regular file (a character device)") {
		t.Errorf("config.json -> /dev/zero: %v, warnings %q", err, s.Warnings)
	}

	fifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, RunsFile), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	zero := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(zero, RunsFile)); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{fifo: "a named pipe", zero: "a character device"} {
		if _, err := Summarize(dir); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), RunsFile) {
			t.Errorf("runs.jsonl is %s: %v", want, err)
		}
	}
}
