package schema

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const minimalConfig = "name: \"c\"\nserver: builtin: {}\nbackend: replay: \"cassettes\"\nmatrix: models: [\"m\"]\n"

// TestReadFileSizeLimit: a file over the limit is refused with its size
// and the limit; one at the limit is read.
func TestReadFileSizeLimit(t *testing.T) {
	dir := t.TempDir()
	at, over := filepath.Join(dir, "at.yaml"), filepath.Join(dir, "over.yaml")
	os.WriteFile(at, make([]byte, 1<<20), 0o644)
	os.WriteFile(over, make([]byte, 3<<19+1), 0o644)
	if b, err := ReadFile(at, "case file", 1<<20); err != nil || len(b) != 1<<20 {
		t.Errorf("file at the limit: %d bytes, %v", len(b), err)
	}
	_, err := ReadFile(over, "case file", 1<<20)
	want := "read " + over + ": case file is 1.5 MiB (1572865 bytes), over the 1 MiB limit"
	if err == nil || err.Error() != want {
		t.Errorf("file over the limit:\n got  %v\n want %s", err, want)
	}
}

// TestReadFileBoundsWhatItReads: a regular file whose size says it fits
// but whose content does not (as for a file that grows while being
// read) is cut at the limit, not read to its end. /proc files report
// size 0 whatever they hold.
func TestReadFileBoundsWhatItReads(t *testing.T) {
	const p = "/proc/self/maps"
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		t.Skip("no /proc/self/maps reporting size 0")
	}
	_, err = ReadFile(p, "case file", 16)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != -1 {
		t.Fatalf("got %v, want a TooLargeError of unknown size", err)
	}
	if want := "read " + p + ": case file grew past the 16 bytes limit while being read"; err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
}

// TestConfigAndCaseSizeLimits: a case file and a config over their
// limits are refused with the limit and the size.
func TestConfigAndCaseSizeLimits(t *testing.T) {
	pad := func(n int) string { return "#" + strings.Repeat("x", n) + "\n" }
	config := "cases: [\"cases/*.yaml\"]\n" + minimalConfig + "//" + pad(MaxConfigFileSize)
	caseFile := "id: a\nprompt: p\nexpect: {}\n" + pad(MaxCaseFileSize)
	dir := writeFiles(t, map[string]string{"big.cue": config, "cases/a.yaml": caseFile})
	t.Chdir(dir)
	_, err := LoadConfig("big.cue")
	want := fmt.Sprintf("big.cue: config is 1.0 MiB (%d bytes), over the 1 MiB limit", len(config))
	if err == nil || err.Error() != want {
		t.Errorf("config over the limit:\n got  %v\n want %s", err, want)
	}
	_, err = LoadCases([]string{"cases/*.yaml"})
	want = fmt.Sprintf("cases/a.yaml: case file is 4.0 MiB (%d bytes), over the 4 MiB limit", len(caseFile))
	if err == nil || err.Error() != want {
		t.Errorf("case file over the limit:\n got  %v\n want %s", err, want)
	}
}

// TestConfigListLimit: a literal list longer than MaxCUEElements is
// refused before CUE evaluates it (100,000 seeds used to take 20 s),
// at the list, naming the count and the limit; a list at the limit loads.
func TestConfigListLimit(t *testing.T) {
	seeds := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprint(&b, i)
		}
		return b.String()
	}
	dir := writeFiles(t, map[string]string{
		"cases/a.yaml": "id: a\nprompt: p\nexpect: {}\n",
		"at.cue":       "name: \"c\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"x\"\nmatrix: {\n\tmodels: [\"m\"]\n\tseeds: [" + seeds(MaxCUEElements) + "]\n}\n",
		"over.cue":     "name: \"c\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"x\"\nmatrix: {\n\tmodels: [\"m\"]\n\tseeds: [" + seeds(MaxCUEElements+1) + "]\n}\n",
	})
	t.Chdir(dir)
	if cfg, err := LoadConfig("at.cue"); err != nil || len(cfg.Matrix.Seeds) != MaxCUEElements {
		t.Fatalf("list at the limit: %v", err)
	}
	_, err := LoadConfig("over.cue")
	want := "over.cue:7:9: matrix.seeds: 10001 values in one list, over the limit of 10000 (write fewer, or split the experiment into several configs)"
	if err == nil || err.Error() != want {
		t.Errorf("list over the limit:\n got  %v\n want %s", err, want)
	}
}

// TestErrorsLinesCapsOneKind: 10,000 duplicate seeds print ten lines and
// one "… and N more" line, not 10,000 lines; errors of other kinds are
// all printed; the list itself keeps every error.
func TestErrorsLinesCapsOneKind(t *testing.T) {
	var es Errors
	for i := range 25 {
		es = append(es, &Error{File: "c.cue", Line: 3, Col: 10 + 2*i, Path: fmt.Sprintf("matrix.seeds[%d]", i+1), Msg: fmt.Sprintf("duplicate value %d", i)})
	}
	es = append(es,
		&Error{File: "c.cue", Line: 4, Col: 1, Path: "matrix.models[1]", Msg: `duplicate value "m"`},
		&Error{File: "c.cue", Line: 5, Col: 1, Path: "matrix.models[2]", Msg: `duplicate value "n"`},
		&Error{File: "d.cue", Line: 3, Col: 1, Path: "matrix.seeds[1]", Msg: "duplicate value 0"},
	)
	lines := es.Lines()
	want := []string{}
	for i := range MaxSameKind {
		want = append(want, fmt.Sprintf("c.cue:3:%d: matrix.seeds[%d]: duplicate value %d", 10+2*i, i+1, i))
	}
	want = append(want,
		"c.cue: matrix.seeds[…]: … and 15 more like this (duplicate value …)",
		`c.cue:4:1: matrix.models[1]: duplicate value "m"`,
		`c.cue:5:1: matrix.models[2]: duplicate value "n"`,
		"d.cue:3:1: matrix.seeds[1]: duplicate value 0",
	)
	if got := strings.Join(lines, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if es.Error() != strings.Join(want, "\n") {
		t.Error("Error() does not print Lines()")
	}
	if len(es) != 28 {
		t.Errorf("the list lost errors: %d", len(es))
	}
}

// TestValidateCapsDuplicateSeeds runs the whole path: a config with
// 10,000 seeds of which 9,454 repeat prints 11 lines.
func TestValidateCapsDuplicateSeeds(t *testing.T) {
	var b strings.Builder
	for i := range MaxCUEElements {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprint(&b, i%546)
	}
	dir := writeFiles(t, map[string]string{
		"cases/a.yaml": "id: a\nprompt: p\nexpect: {}\n",
		"c.cue":        "name: \"c\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"x\"\nmatrix: {models: [\"m\"], seeds: [" + b.String() + "]}\n",
	})
	t.Chdir(dir)
	errs := Validate([]string{"c.cue"})
	if len(errs) != MaxCUEElements-546 {
		t.Fatalf("%d errors, want %d", len(errs), MaxCUEElements-546)
	}
	lines := errs.Lines()
	if len(lines) != MaxSameKind+1 || lines[0] != "c.cue:5:2107: matrix.seeds[546]: duplicate value 0" ||
		lines[MaxSameKind] != "c.cue: matrix.seeds[…]: … and 9444 more like this (duplicate value …)" {
		t.Errorf("lines:\n%s", strings.Join(lines, "\n"))
	}
}

// TestDuplicateIDsBounded: each of n cases sharing an id names at most
// maxOtherPlaces of the others and counts the rest, so the errors grow
// linearly with n (2,000 duplicates used to take 10 s and 600 KB).
func TestDuplicateIDsBounded(t *testing.T) {
	src := strings.Repeat("id: same\nprompt: p\nexpect: {}\n---\n", 500)
	dir := writeFiles(t, map[string]string{"a.yaml": src, "b.yaml": "id: same\nprompt: p\nexpect: {}\n"})
	t.Chdir(dir)
	errs := Validate([]string{"a.yaml", "b.yaml"})
	if len(errs) != 501 {
		t.Fatalf("%d errors, want 501", len(errs))
	}
	want := `a.yaml:5:1: id: duplicate case id "same" (also at a.yaml:1:1, a.yaml:9:1, a.yaml:13:1 and 497 more)`
	if got := errs[1].Error(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	want = `b.yaml:1:1: id: duplicate case id "same" (also at a.yaml:1:1, a.yaml:5:1, a.yaml:9:1 and 497 more)`
	if got := errs[500].Error(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestConfigDepthLimit: a config nested deeper than MaxCUEDepth is
// refused before CUE parses it (300,000 levels of a: a: … used to
// overflow the stack, a fatal error); string interpolations, brackets
// in strings and ordinary configs are not miscounted.
func TestConfigDepthLimit(t *testing.T) {
	head := "name: \"c\"\ncases: [\"cases/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"x\"\nmatrix: models: [\"m\"]\n"
	dir := writeFiles(t, map[string]string{
		"cases/a.yaml": "id: a\nprompt: p\nexpect: {}\n",
		"labels.cue":   head + "_x: " + strings.Repeat("a: ", 300000) + "1\n",
		"lists.cue":    head + "_x: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n",
		"at.cue":       head + "_x: " + strings.Repeat("a: ", MaxCUEDepth-1) + "1\n",
		"interp.cue": head + "_n: 3\n_s: \"\\(_n): " + strings.Repeat("[", 2*MaxCUEDepth) + "{{\\(\"(\\(_n))\")}}\"\n" +
			"_m: \"\"\"\n\t\\(_n) ((( \\(_n + 1)\n\t\"\"\"\n" + "_t: " + strings.Repeat("b: ", MaxCUEDepth-2) + "\"\\(_n)\"\n",
	})
	t.Chdir(dir)
	for f, want := range map[string]string{
		"labels.cue": "labels.cue:6:303: nested more than 100 levels deep (labels and brackets)",
		"lists.cue":  "lists.cue:6:104: nested more than 100 levels deep (labels and brackets)",
	} {
		if _, err := LoadConfig(f); err == nil || err.Error() != want {
			t.Errorf("%s:\n got  %v\n want %s", f, err, want)
		}
	}
	for _, f := range []string{"at.cue", "interp.cue"} {
		if _, err := LoadConfig(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
