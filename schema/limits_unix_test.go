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

// TestLoadRefusesDevZero: a config naming /dev/zero as a case file
// fails validation (it used to pass) and loading (it used to grow
// without bound), with the file named; so does a named pipe matched by a
// pattern, and a directory named as a case file.
func TestLoadRefusesDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := writeFiles(t, map[string]string{
		"zero.cue":     "cases: [\"/dev/zero\"]\n" + minimalConfig,
		"dir.cue":      "cases: [\"cases\"]\n" + minimalConfig,
		"pipe.cue":     "cases: [\"pipes/*.yaml\"]\n" + minimalConfig,
		"cases/a.yaml": "id: a\nprompt: p\nexpect: {}\n",
	})
	t.Chdir(dir)
	os.Mkdir("pipes", 0o755)
	if err := syscall.Mkfifo(filepath.Join("pipes", "p.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	for cfg, want := range map[string]string{
		"zero.cue": `zero.cue:1:9: cases[0]: /dev/zero: not a regular file (a character device); want a case file`,
		"dir.cue":  `dir.cue:1:9: cases[0]: cases: not a regular file (a directory); want a case file`,
		"pipe.cue": `pipe.cue:1:9: cases[0]: pipes/p.yaml: not a regular file (a named pipe); want a case file`,
	} {
		if got := Validate([]string{cfg}).Error(); got != want {
			t.Errorf("Validate(%s):\n got  %s\n want %s", cfg, got, want)
		}
	}
	for pat, want := range map[string]string{
		"/dev/zero":    "/dev/zero: not a regular file (a character device); want a case file",
		"pipes/*.yaml": "pipes/p.yaml: not a regular file (a named pipe); want a case file",
	} {
		_, err := LoadCases([]string{pat})
		if err == nil || err.Error() != want {
			t.Errorf("LoadCases(%s):\n got  %v\n want %s", pat, err, want)
		}
	}
	// Validate walks a directory holding the pipe without blocking on it.
	if got, want := Validate([]string{"pipes"}).Error(), "pipes/p.yaml: not a regular file (a named pipe); want a case file"; got != want {
		t.Errorf("Validate(pipes):\n got  %s\n want %s", got, want)
	}
}

// TestConfigRefusesIrregularServerFiles: a catalog or corpus naming a
// device or a pipe is refused by validate, before the server reads it.
func TestConfigRefusesIrregularServerFiles(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := writeFiles(t, map[string]string{
		"cases/a.yaml": "id: a\nprompt: p\nexpect: {}\n",
		"c.cue": "name: \"c\"\ncases: [\"cases/*.yaml\"]\nbackend: replay: \"x\"\nmatrix: models: [\"m\"]\n" +
			"server: builtin: {\n\tcatalogs: [\"/dev/zero\"]\n\tcorpus: \"/dev/zero\"\n}\n",
	})
	t.Chdir(dir)
	want := "c.cue:6:13: server.builtin.catalogs[0]: catalog /dev/zero: not a regular file (a character device); want a catalog file\n" +
		"c.cue:7:2: server.builtin.corpus: corpus /dev/zero: not a regular file (a character device); want a JSON file or a directory"
	if got := Validate([]string{"c.cue"}).Error(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
