package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

// TestValidateModelTurnsAgreeWithReplay runs the config of
// fixtures/invalid/cassette-model-turns: the cassette runs validate
// flags for model turns that run out (each selected by a seed) are
// exactly the runs that end in cassette_miss when replayed, and the
// others pass.
func TestValidateModelTurnsAgreeWithReplay(t *testing.T) {
	dir, err := filepath.Abs("../../fixtures/invalid/cassette-model-turns")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	var stdout, stderr strings.Builder
	if code := Main([]string{"validate", "."}, &stdout, &stderr); code != 1 {
		t.Fatalf("validate: exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	cs, errs := schema.LoadCassettes("cassettes")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	byCase := map[string]*schema.Cassette{}
	for _, c := range cs {
		byCase[c.Case] = c
	}
	// case and seed of each flagged run, from its when.
	flagged := map[string]bool{}
	line := regexp.MustCompile(`(?m)^\S+: runs\[(\d+)\]: case (\S+): this run has .* asks the model for turn \d+ and fails as cassette_miss`)
	for _, m := range line.FindAllStringSubmatch(stdout.String(), -1) {
		i, _ := strconv.Atoi(m[1])
		run := byCase[m[2]].Runs[i]
		if len(run.When) != 1 || run.When[0].Axis != "seed" {
			t.Fatalf("flagged run %s runs[%d] is not selected by a seed: %+v", m[2], i, run.When)
		}
		flagged[m[2]+"/"+run.When[0].Patterns[0]] = true
	}
	if len(flagged) != 3 {
		t.Fatalf("validate flagged %v, want 3 runs\n%s", flagged, stdout.String())
	}

	out := t.TempDir()
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
		key := fmt.Sprintf("%s/%d", rec.Case, rec.Cell.Seed)
		miss := rec.Error != nil && rec.Error.Kind == "cassette_miss"
		if miss != flagged[key] {
			t.Errorf("%s: cassette_miss %v, flagged %v (outcome %s, error %+v)", key, miss, flagged[key], rec.Outcome, rec.Error)
		}
		if !miss && rec.Outcome != "pass" {
			t.Errorf("%s: outcome %s, want pass", key, rec.Outcome)
		}
	}
	if err := r.Err(); err != nil || seen != 6 {
		t.Fatalf("%d runs, %v", seen, err)
	}
}
