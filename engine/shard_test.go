package engine

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/toolward/toolward/schema/results"
)

// TestShardsMergeToTheWholeJob runs a job whole and as three shards, and
// merges the shards: the merged runs.jsonl has exactly the whole job's run
// ids, each with the same outcome.
func TestShardsMergeToTheWholeJob(t *testing.T) {
	setup(t)
	outcomes := func(dir string) map[string]string {
		m := map[string]string{}
		for _, r := range readRuns(t, dir) {
			if _, dup := m[r.ID]; dup {
				t.Fatalf("%s: run %s recorded twice", dir, r.ID)
			}
			m[r.ID] = string(r.Outcome)
		}
		return m
	}
	run := func(shard, out string) {
		t.Helper()
		if _, err := Run(context.Background(), Options{
			ConfigPath: "e2e.cue", Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff, Shard: shard, OutDir: out,
		}); err != nil {
			t.Fatal(err)
		}
	}
	run("", "whole")
	var dirs []string
	for i := range 3 {
		d := fmt.Sprintf("shard-%d", i)
		run(fmt.Sprintf("%d/3", i), d)
		dirs = append(dirs, d)
	}
	res, err := results.MergeEach("merged", dirs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.MissingShards) > 0 || res.Duplicates > 0 {
		t.Fatalf("merge %+v", res)
	}
	whole, merged := outcomes("whole"), outcomes("merged")
	if len(whole) != len(planIDs(t, "e2e.cue")) || !maps.Equal(whole, merged) {
		t.Fatalf("whole job: %d runs; merged shards: %d runs, outcomes equal: %v", len(whole), len(merged), maps.Equal(whole, merged))
	}
	if meta, err := results.ReadMeta("merged"); err != nil || meta.Shard != "" || meta.Planned != int64(len(whole)) {
		t.Fatalf("merged meta %+v, %v", meta, err)
	}
}
