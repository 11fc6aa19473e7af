package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBFCLMultiTurnReplay imports six real multi-turn entries
// (internal/generate/bfcl/testdata/multiturn, beside BFCL's code in
// ../shared/bfcl-v4), validates them and replays their goldens offline
// against the real Python server: all pass; a cassette that makes a
// different directory fails that entry on the state BFCL compares.
// Skips without ../shared/bfcl-v4 or python3 with mpmath.
func TestBFCLMultiTurnReplay(t *testing.T) {
	shared := ""
	for dir, _ := filepath.Abs("."); ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "shared", "bfcl-v4")
		if _, err := os.Stat(filepath.Join(p, "bfcl_eval", "eval_checker", "multi_turn_eval")); err == nil {
			shared = p
			break
		}
		if dir == filepath.Dir(dir) {
			t.Skip("no shared/bfcl-v4 above the working directory")
		}
	}
	if err := exec.Command("python3", "-c", "import mpmath").Run(); err != nil {
		t.Skipf("python3 with mpmath is needed: %v", err)
	}
	root := t.TempDir()
	data := filepath.Join(root, "bfcl_eval", "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"eval_checker", "constants", "__init__.py", "data/multi_turn_func_doc"} {
		if err := os.Symlink(filepath.Join(shared, "bfcl_eval", sub), filepath.Join(root, "bfcl_eval", sub)); err != nil {
			t.Fatal(err)
		}
	}
	if err := exec.Command("cp", "-r", "../../internal/generate/bfcl/testdata/multiturn/.", data).Run(); err != nil {
		t.Fatal(err)
	}
	out, res := filepath.Join(root, "suite"), filepath.Join(root, "res")
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := Main(args, &stdout, &stderr); code != 0 {
			t.Fatalf("toolward %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
		return stdout.String() + stderr.String()
	}
	if got := run("import", "bfcl", data, "--out", out); !strings.Contains(got, "wrote 6 multi-turn conversations and 128 tools") {
		t.Fatalf("import: %s", got)
	}
	cfg := filepath.Join(out, "bfcl_multi_turn.cue")
	if got := run("validate", filepath.Join(out, "cases"), cfg); !strings.Contains(got, "ok: 6 cases") {
		t.Fatalf("validate: %s", got)
	}
	if got := run("run", "--out", res, cfg); !strings.Contains(got, "6 runs: 6 pass, 0 fail, 0 error") {
		t.Fatalf("replay: %s", got)
	}

	tape := filepath.Join(out, "multi_turn_cassettes", "multi_turn_miss_func.yaml")
	b, err := os.ReadFile(tape)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("{dir_name: temp}"), []byte("{dir_name: tmp}"), 1)
	if err := os.WriteFile(tape, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got := run("run", "--out", res+"2", cfg)
	if !strings.Contains(got, "6 runs: 5 pass, 1 fail, 0 error") {
		t.Fatalf("a wrong directory: %s", got)
	}
	rec, err := os.ReadFile(filepath.Join(res+"2", "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(rec), "\n") {
		if strings.Contains(line, `"multi_turn_miss_func_0"`) && !strings.Contains(line, "state_mismatch") {
			t.Errorf("miss_func_0 should fail on its state: %.600s", line)
		}
	}
}
