package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema/record"
)

// TestValidateUserTurnsAgreeWithReplay runs the config of
// fixtures/invalid/cassette-simulated-user, whose validation flags the
// cassette runs of seeds 1 and 2 for a simulated user who runs out of
// turns: replayed, exactly those seeds end in cassette_miss, and the
// run validation accepts (seed 3) does not.
func TestValidateUserTurnsAgreeWithReplay(t *testing.T) {
	dir, err := filepath.Abs("../../fixtures/invalid/cassette-simulated-user")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	out := t.TempDir()
	var stdout, stderr strings.Builder
	if code := Main([]string{"validate", "."}, &stdout, &stderr); code != 1 || strings.Count(stdout.String(), "cassette_miss") != 2 {
		t.Fatalf("validate: exit %d, want 1 and two cassette_miss mistakes\n%s%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"run", "run.cue", "--out", out}, &stdout, &stderr); code != 0 && code != 1 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	f, err := os.Open(filepath.Join(out, "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := record.NewReader(f, "runs.jsonl")
	seen := 0
	for r.Scan() {
		rec, err := r.Record()
		if err != nil {
			t.Fatal(err)
		}
		seen++
		miss := rec.Error != nil && rec.Error.Kind == "cassette_miss"
		if want := rec.Cell.Seed != 3; miss != want {
			t.Errorf("seed %d: cassette_miss %v, want %v (outcome %s, error %+v)", rec.Cell.Seed, miss, want, rec.Outcome, rec.Error)
		}
	}
	if err := r.Err(); err != nil || seen != 3 {
		t.Fatalf("%d runs, %v", seen, err)
	}
}
