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
	stdout := validateFixture(t, "cassette-model-turns")
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
	for _, m := range line.FindAllStringSubmatch(stdout, -1) {
		i, _ := strconv.Atoi(m[1])
		run := byCase[m[2]].Runs[i]
		if len(run.When) != 1 || run.When[0].Axis != "seed" {
			t.Fatalf("flagged run %s runs[%d] is not selected by a seed: %+v", m[2], i, run.When)
		}
		flagged[m[2]+"/"+run.When[0].Patterns[0]] = true
	}
	if len(flagged) != 3 {
		t.Fatalf("validate flagged %v, want 3 runs\n%s", flagged, stdout)
	}

	recs := replayRecords(t)
	for _, rec := range recs {
		key := fmt.Sprintf("%s/%d", rec.Case, rec.Cell.Seed)
		miss := rec.Error != nil && rec.Error.Kind == "cassette_miss"
		if miss != flagged[key] {
			t.Errorf("%s: cassette_miss %v, flagged %v (outcome %s, error %+v)", key, miss, flagged[key], rec.Outcome, rec.Error)
		}
		if !miss && rec.Outcome != "pass" {
			t.Errorf("%s: outcome %s, want pass", key, rec.Outcome)
		}
	}
	if len(recs) != 6 {
		t.Fatalf("%d runs, want 6", len(recs))
	}
}

// validateFixture changes into fixtures/invalid/name and validates it,
// which must exit 1; it returns validate's stdout.
func validateFixture(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("../../fixtures/invalid", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	var stdout, stderr strings.Builder
	if code := Main([]string{"validate", "."}, &stdout, &stderr); code != 1 {
		t.Fatalf("validate: exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// replayRecords runs the current directory's run.cue into a temporary
// directory and returns the records of its runs.jsonl.
func replayRecords(t *testing.T) []*record.Record {
	t.Helper()
	out := t.TempDir()
	var stdout, stderr strings.Builder
	if code := Main([]string{"run", "run.cue", "--out", out}, &stdout, &stderr); code != 0 && code != 1 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	f, err := os.Open(filepath.Join(out, "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []*record.Record
	r := record.NewReader(f, "runs.jsonl")
	for r.Scan() {
		rec, err := r.Record()
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}
