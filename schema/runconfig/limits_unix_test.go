//go:build unix

package runconfig

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/toolward/toolward/schema"
)

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
		if got := validate([]string{cfg}).Error(); got != want {
			t.Errorf("validate(%s):\n got  %s\n want %s", cfg, got, want)
		}
	}
	for pat, want := range map[string]string{
		"/dev/zero":    "/dev/zero: not a regular file (a character device); want a case file",
		"pipes/*.yaml": "pipes/p.yaml: not a regular file (a named pipe); want a case file",
	} {
		_, err := schema.LoadCases([]string{pat})
		if err == nil || err.Error() != want {
			t.Errorf("LoadCases(%s):\n got  %v\n want %s", pat, err, want)
		}
	}
	// Validate walks a directory holding the pipe without blocking on it.
	if got, want := validate([]string{"pipes"}).Error(), "pipes/p.yaml: not a regular file (a named pipe); want a case file"; got != want {
		t.Errorf("validate(pipes):\n got  %s\n want %s", got, want)
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
	if got := validate([]string{"c.cue"}).Error(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
