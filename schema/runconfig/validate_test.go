package runconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckConfigBringsCasesAndCassettes: validating a config alone
// validates the cases and cassettes a run of it loads. Before, a config
// pointing at a broken case passed ("0 cases in 0 files").
func TestCheckConfigBringsCasesAndCassettes(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"suite/a.yaml":     "id: calc-compound-interest\nprompt: p\nexpect: {no_calls: true}\n",
		"suite/b.yaml":     "id: b\nprompt: p\nexpect: {answr: x}\n",
		"configs/c.cue":    "name: \"c\"\ncases: [\"suite/a.yaml\"]\nserver: builtin: {}\nbackend: replay: \"tapes\"\nmatrix: models: [\"m\"]\n",
		"configs/bad.cue":  "name: \"bad\"\ncases: [\"suite/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"none\"\nmatrix: models: [\"m\"]\n",
		"tapes/a.yaml":     "case: calc-compund-interest\nruns: [{turns: [{content: ok}]}]\n",
		"tapes/broken.yml": "case: x\nruns: [{turns: [{contnet: ok}]}]\n",
	})
	t.Chdir(dir)
	sum, errs := checkPaths([]string{"configs/c.cue"})
	want := []string{
		`tapes/a.yaml:1:7: case: no case "calc-compund-interest" among the config's cases (did you mean "calc-compound-interest"?)`,
		`tapes/broken.yml:2:18: runs[0].turns[0].contnet: unknown field "contnet" (did you mean "content"?)`,
	}
	if got := strings.Join(errs.Lines(), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if want := (Summary{CaseFiles: 1, Cases: 1, Configs: 1, Cassettes: 1}); sum != want {
		t.Errorf("summary %+v, want %+v", sum, want)
	}
	_, errs = checkPaths([]string{"configs/bad.cue"})
	want = []string{
		`configs/bad.cue: backend.replay: cassette directory none: no such file or directory`,
		`suite/b.yaml:3:10: expect.answr: unknown field "answr" (did you mean "answer"?)`,
	}
	if got := strings.Join(errs.Lines(), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

// TestCheckCassetteDirectory: a directory of cassettes validates as
// cassettes, not as cases with unknown fields.
func TestCheckCassetteDirectory(t *testing.T) {
	sum, errs := checkPaths([]string{"../../fixtures/cassettes/demo"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if sum.Cassettes < 5 || sum.Cases != 0 || sum.CaseFiles != 0 {
		t.Errorf("summary %+v", sum)
	}
}

// TestCheckCaseGlobMatchingCassettes: a config whose case pattern also
// matches a cassette file gets that file checked as cases, as a run
// would load it, even when a walked directory named it first.
func TestCheckCaseGlobMatchingCassettes(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"suite/a.yaml":       "id: a\nprompt: p\nexpect: {no_calls: true}\n",
		"suite/tapes/a.yaml": "case: a\nruns: [{turns: [{content: ok}]}]\n",
		"c.cue":              "name: \"c\"\ncases: [\"suite/**/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"suite/tapes\"\nmatrix: models: [\"m\"]\n",
	})
	t.Chdir(dir)
	_, errs := checkPaths([]string{"suite", "c.cue"})
	if len(errs) == 0 || !strings.Contains(errs.Error(), `suite/tapes/a.yaml:1:1: case: unknown field "case"`) {
		t.Errorf("got %v", errs)
	}
}

// TestCheckCatalogs: a tool catalog in a walked directory is recognised
// as one, not read as a case file ("want a case, got list"), and the
// catalogs a config's builtin server lists are checked too, each once,
// with the checker the caller hands in.
func TestCheckCatalogs(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"suite/cases/a.yaml":     "id: a\nprompt: p\nexpect: {no_calls: true}\n",
		"suite/catalog/t.yaml":   "- name: t\n  description: d\n",
		"suite/catalog/bad.yaml": "- name: u\n  bogus: 1\n",
		"suite/c.cue":            "name: \"c\"\ncases: [\"suite/cases/*.yaml\"]\nserver: builtin: {catalogs: [\"suite/catalog/t.yaml\", \"suite/catalog/bad.yaml\"]}\nbackend: replay: \"suite/tapes\"\nmatrix: models: [\"m\"]\n",
		"suite/tapes/a.yaml":     "case: a\nruns: [{turns: [{content: ok}]}]\n",
	})
	t.Chdir(dir)
	var checked []string
	check := func(p string) error {
		checked = append(checked, p)
		if strings.HasSuffix(p, "bad.yaml") {
			return fmt.Errorf("%s:2: tool u: unknown field bogus", p)
		}
		return nil
	}
	sum, errs := CheckWith([]string{"suite"}, Options{Catalog: check})
	want := `suite/catalog/bad.yaml:2:1: tool u: unknown field bogus`
	if got := strings.Join(errs.Lines(), "\n"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if sum.Catalogs != 2 || sum.Cases != 1 || len(checked) != 2 {
		t.Errorf("summary %+v, checked %v", sum, checked)
	}
	// Without a checker, catalogs are still not cases.
	if _, errs := checkPaths([]string{"suite"}); len(errs) > 0 {
		t.Errorf("Check without a catalog checker: %v", errs)
	}
}

// TestCheckOllamaGoldens: golden arguments keep their text, so a golden
// integer beyond 2^53 passes (as it does from OpenAI-compatible servers
// and cassettes, which keep the model's text); Ollama's native API
// rounds it through a float64, so a config on Ollama that runs the case
// is an error there, and only there.
func TestCheckOllamaGoldens(t *testing.T) {
	const big = "id: big\nprompt: p\nneeds: [f]\nexpect: {calls: [{tool: f, args: {n: 9007199254740993}}]}\ngolden: {answer: x, calls: [{tool: f, args: {n: 9007199254740993}}]}\n"
	const small = "id: small\nprompt: p\nneeds: [f]\nexpect: {calls: [{tool: f, args: {n: {$int: 10}}}]}\ngolden: {answer: x, calls: [{tool: f, args: {n: 10}}]}\n"
	dir := writeFiles(t, map[string]string{
		"suite/big.yaml":   big,
		"suite/small.yaml": small,
		"ollama.cue":       "name: \"o\"\ncases: [\"suite/*.yaml\"]\nserver: builtin: {}\nbackend: ollama: {}\nmatrix: models: [\"m\"]\n",
		"openai.cue":       "name: \"a\"\ncases: [\"suite/*.yaml\"]\nserver: builtin: {}\nbackend: openai: {base_url: \"http://127.0.0.1:1/v1\"}\nmatrix: models: [\"m\"]\n",
	})
	t.Chdir(dir)
	if _, errs := checkPaths([]string{"openai.cue"}); len(errs) > 0 {
		t.Errorf("openai: %v", errs)
	}
	_, errs := checkPaths([]string{"ollama.cue"})
	want := "ollama.cue: backend.ollama: case big (suite/big.yaml:1): its golden fails as Ollama's native API delivers arguments, " +
		"each number re-encoded through a float64, exact only up to 2^53 (golden: wrong_args: calls[0].args.n: want 9007199254740993, got 9007199254740992 (expect.calls[0])): " +
		"write such a value as a string or use $approx, or run the case on another backend"
	if got := strings.Join(errs.Lines(), "\n"); got != want {
		t.Errorf("ollama: got\n%s\nwant\n%s", got, want)
	}
}

// TestCheckReplayCaseWithoutCassette: a replay config with a case no
// cassette answers for is a validate error at the config (at run time
// every run of it would be a cassette_miss).
func TestCheckReplayCaseWithoutCassette(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"suite/a.yaml":  "id: a\nprompt: p\nexpect: {no_calls: true}\n---\nid: b\nprompt: p\nexpect: {no_calls: true}\n",
		"tapes/a.yaml":  "case: a\nruns: [{turns: [{content: ok}]}]\n",
		"configs/c.cue": "name: \"c\"\ncases: [\"suite/a.yaml\"]\nserver: builtin: {}\nbackend: replay: \"tapes\"\nmatrix: models: [\"m\"]\n",
	})
	t.Chdir(dir)
	_, errs := checkPaths([]string{"configs/c.cue"})
	want := "configs/c.cue: backend.replay: case b (suite/a.yaml:5) has no cassette in tapes: every run of it would fail as cassette_miss"
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), want) {
		t.Errorf("got %q\nwant one error starting %q", errs.Lines(), want)
	}
}

// TestCheckSimulatorCassettes: a simulator replaying from a directory of
// its own needs a cassette there for each simulated case, and each of
// its runs at least one turn with role: user; a simulator on a live
// backend needs none.
func TestCheckSimulatorCassettes(t *testing.T) {
	sim := "id: %s\nprompt: p\nuser: {instructions: be brief}\nexpect: {}\n"
	dir := writeFiles(t, map[string]string{
		"suite/a.yaml":    fmt.Sprintf(sim, "a"),
		"suite/b.yaml":    fmt.Sprintf(sim, "b"),
		"model/ab.yaml":   "case: a\nruns: [{turns: [{content: hi}]}]\n---\ncase: b\nruns: [{turns: [{content: hi}]}]\n",
		"user/b.yaml":     "case: b\nruns:\n  - when: {seed: 9}\n    turns: [{content: unused}]\n  - turns: [{content: no user turn}]\n",
		"configs/own.cue": "name: \"own\"\ncases: [\"suite/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"model\"\nsimulator: {model: \"u\", backend: replay: \"user\"}\nmatrix: models: [\"m\"]\n",
		"configs/live.cue": "name: \"live\"\ncases: [\"suite/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"model\"\n" +
			"simulator: {model: \"u\", backend: ollama: {host: \"http://127.0.0.1:1\"}}\nmatrix: models: [\"m\"]\n",
	})
	t.Chdir(dir)
	_, errs := checkPaths([]string{"configs/own.cue"})
	got := strings.Join(errs.Lines(), "\n")
	for _, want := range []string{
		"configs/own.cue: simulator.backend.replay: case a (suite/a.yaml:1) has a simulated user and no cassette in user",
		"user/b.yaml:5:5: runs[1]: case b has a simulated user, and this run of the simulator's cassettes has no turn with role: user",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if len(errs) != 2 {
		t.Errorf("%d mistakes, want 2 (the run for seed 9 no cell selects is not checked):\n%s", len(errs), got)
	}
	if _, errs := checkPaths([]string{"configs/live.cue"}); len(errs) != 0 {
		t.Errorf("a live simulator: %v", errs)
	}
}

// TestCheckJudgeCassettes: a judge replaying from the config's cassettes
// needs judged answers × judge.samples turns with role: judge in each
// run of a judged case; a judge on a live backend needs none.
func TestCheckJudgeCassettes(t *testing.T) {
	judged := "id: a\nprompt: p\nexpect: {answer: {$judge: 'says \"hi\"'}}\n---\nid: b\nprompt: p\nexpect: {no_calls: true}\n"
	verdict := `{role: judge, content: '{"verdict": "pass", "reason": "ok"}'}`
	dir := writeFiles(t, map[string]string{
		"suite/a.yaml":      judged,
		"tapes/a.yaml":      "case: a\nruns:\n  - when: {seed: 9}\n    turns: [{content: unused}]\n  - turns: [{content: hi}, " + verdict + "]\n---\ncase: b\nruns: [{turns: [{content: hi}]}]\n",
		"configs/one.cue":   "name: \"one\"\ncases: [\"suite/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"tapes\"\njudge: model: \"j\"\nmatrix: models: [\"m\"]\n",
		"configs/three.cue": "name: \"three\"\ncases: [\"suite/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"tapes\"\njudge: {model: \"j\", samples: 3}\nmatrix: models: [\"m\"]\n",
		"configs/live.cue":  "name: \"live\"\ncases: [\"suite/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"tapes\"\njudge: {model: \"j\", samples: 3, backend: ollama: {host: \"http://127.0.0.1:1\"}}\nmatrix: models: [\"m\"]\n",
	})
	t.Chdir(dir)
	for _, cfg := range []string{"configs/one.cue", "configs/live.cue"} {
		if _, errs := checkPaths([]string{cfg}); len(errs) != 0 {
			t.Errorf("%s: %v", cfg, errs.Lines())
		}
	}
	_, errs := checkPaths([]string{"configs/three.cue"})
	want := "tapes/a.yaml:5:5: runs[1]: case a has 1 judged answer and judge.samples 3, so a replay of configs/three.cue asks the judge for 3 verdicts, and this run has 1 turn with role: judge: verdict 2 would fail"
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), want) {
		t.Errorf("got %q\nwant one error starting %q", errs.Lines(), want)
	}
}

// TestValidateSameFilesOtherPath: validate cases DIR/bfcl.cue, where the
// config names the same case files by another path (absolute, or through
// a symbolic link), loads each file once: before, every case was reported
// as a duplicate of itself at its own position.
func TestValidateSameFilesOtherPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	abs, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"suite/cases/a.yaml": "id: a\nprompt: p\nexpect: {}\n",
		"suite/abs.cue":      "name: \"abs\"\ncases: [\"" + filepath.ToSlash(abs) + "/suite/cases/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"suite/tapes\"\nmatrix: models: [\"m\"]\n",
		"suite/link.cue":     "name: \"link\"\ncases: [\"link/cases/*.yaml\"]\nserver: builtin: {}\nbackend: replay: \"suite/tapes\"\nmatrix: models: [\"m\"]\n",
		"suite/tapes/a.yaml": "case: a\nruns: [{turns: [{content: ok}]}]\n",
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(name), 0o755)
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("suite", "link"); err != nil {
		t.Skip("no symbolic links:", err)
	}
	for _, cfg := range []string{abs + "/suite/abs.cue", "suite/link.cue"} {
		sum, errs := CheckWith([]string{"suite/cases", cfg}, Options{})
		if len(errs) != 0 || sum.Cases != 1 || sum.CaseFiles != 1 {
			t.Errorf("%s: summary %+v, errors:\n%s", cfg, sum, strings.Join(errs.Lines(), "\n"))
		}
	}
}
