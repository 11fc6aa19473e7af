package runconfig

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

// TestConfigAndCaseSizeLimits: a case file and a config over their
// limits are refused with the limit and the size.
func TestConfigAndCaseSizeLimits(t *testing.T) {
	pad := func(n int) string { return "#" + strings.Repeat("x", n) + "\n" }
	config := "cases: [\"cases/*.yaml\"]\n" + minimalConfig + "//" + pad(schema.MaxConfigFileSize)
	caseFile := "id: a\nprompt: p\nexpect: {}\n" + pad(schema.MaxCaseFileSize)
	dir := writeFiles(t, map[string]string{"big.cue": config, "cases/a.yaml": caseFile})
	t.Chdir(dir)
	_, err := Load("big.cue")
	want := fmt.Sprintf("big.cue: config is 1.0 MiB (%d bytes), over the 1 MiB limit", len(config))
	if err == nil || err.Error() != want {
		t.Errorf("config over the limit:\n got  %v\n want %s", err, want)
	}
	_, err = schema.LoadCases([]string{"cases/*.yaml"})
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
	if cfg, err := Load("at.cue"); err != nil || len(cfg.Matrix.Values(cell.Seed)) != MaxCUEElements {
		t.Fatalf("list at the limit: %v", err)
	}
	_, err := Load("over.cue")
	want := "over.cue:7:9: matrix.seeds: 10001 values in one list, over the limit of 10000 (write fewer, or split the experiment into several configs)"
	if err == nil || err.Error() != want {
		t.Errorf("list over the limit:\n got  %v\n want %s", err, want)
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
	errs := validate([]string{"c.cue"})
	if len(errs) != MaxCUEElements-546 {
		t.Fatalf("%d errors, want %d", len(errs), MaxCUEElements-546)
	}
	lines := errs.Lines()
	if len(lines) != schema.MaxSameKind+1 || lines[0] != "c.cue:5:2107: matrix.seeds[546]: duplicate value 0" ||
		lines[schema.MaxSameKind] != "c.cue: matrix.seeds[…]: … and 9444 more like this (duplicate value …)" {
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
	errs := validate([]string{"a.yaml", "b.yaml"})
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
		if _, err := Load(f); err == nil || err.Error() != want {
			t.Errorf("%s:\n got  %v\n want %s", f, err, want)
		}
	}
	for _, f := range []string{"at.cue", "interp.cue"} {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
