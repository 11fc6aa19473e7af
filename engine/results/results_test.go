package results

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/engine/record"
	"github.com/toolward/toolward/schema"
)

func writeRuns(t *testing.T, dir string, recs []record.Record, tail string) {
	t.Helper()
	f, err := OpenRuns(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := record.NewWriter(f)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	f.WriteString(tail)
	f.Close()
}

func ids(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	if err := eachRecord(dir, func(r *record.Record, err error) error {
		if err == nil {
			out = append(out, r.ID+":"+r.Outcome)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCreateUnique(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 11, 30, 8, 25, 1, 0, time.UTC)
	a, err := Create(root, "demo", now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Create(root, "demo", now)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(a) != "20261130T082501Z" || filepath.Base(b) != "20261130T082501Z-2" {
		t.Fatalf("dirs %s, %s", a, b)
	}
	if _, err := Create(root, "../x", now); err == nil {
		t.Fatal("bad name: want error")
	}
}

func TestCompact(t *testing.T) {
	dir := t.TempDir()
	writeRuns(t, dir, []record.Record{
		{ID: "a", Outcome: record.Pass},
		{ID: "b", Outcome: record.Error},
		{ID: "c", Outcome: record.Fail},
		{ID: "a", Outcome: record.Fail}, // duplicate: first wins
	}, `{"version":1,"id":"d","outc`) // a crash mid-line
	done, bad, err := Compact(dir)
	if err != nil {
		t.Fatal(err)
	}
	if bad != 1 || len(done) != 2 || !done["a"] || !done["c"] {
		t.Fatalf("done = %v, bad = %d", done, bad)
	}
	if got := ids(t, dir); !slices.Equal(got, []string{"a:pass", "c:fail"}) {
		t.Fatalf("after compact: %v", got)
	}
	// Appending after a compaction starts on a fresh line.
	writeRuns(t, dir, []record.Record{{ID: "b", Outcome: record.Pass}}, "")
	if got := ids(t, dir); !slices.Equal(got, []string{"a:pass", "c:fail", "b:pass"}) {
		t.Fatalf("after append: %v", got)
	}
	empty := t.TempDir()
	if done, _, err := Compact(empty); err != nil || len(done) != 0 {
		t.Fatalf("no runs file: %v %v", done, err)
	}
}

func shardDir(t *testing.T, root, shard string, digest string, recs []record.Record) string {
	dir := filepath.Join(root, strings.ReplaceAll(shard, "/", "of"))
	os.MkdirAll(dir, 0o755)
	m := &Meta{Config: &schema.Config{Name: "x"}, ConfigDigest: digest, Shard: shard, Planned: int64(len(recs)), Total: 4, Cases: map[string]string{"c": "d"}}
	if err := WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	writeRuns(t, dir, recs, "")
	return dir
}

func TestMerge(t *testing.T) {
	root := t.TempDir()
	s0 := shardDir(t, root, "0/2", "cfg", []record.Record{{ID: "a", Outcome: record.Pass}, {ID: "b", Outcome: record.Error}})
	s1 := shardDir(t, root, "1/2", "cfg", []record.Record{{ID: "c", Outcome: record.Fail}, {ID: "d", Outcome: record.Error}})
	retry := shardDir(t, filepath.Join(root, "retry"), "0/2", "cfg", []record.Record{{ID: "a", Outcome: record.Pass}, {ID: "b", Outcome: record.Pass}})
	out := filepath.Join(root, "merged")
	res, err := Merge(out, []string{s0, s1, retry})
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs != 4 || res.Errors != 1 || len(res.MissingShards) != 0 {
		t.Fatalf("merge result %+v", res)
	}
	got := ids(t, out)
	slices.Sort(got)
	if !slices.Equal(got, []string{"a:pass", "b:pass", "c:fail", "d:error"}) {
		t.Fatalf("merged runs %v", got)
	}
	m, err := ReadMeta(out)
	if err != nil || m.Shard != "" || m.Planned != 4 || len(m.MergedFrom) != 3 {
		t.Fatalf("merged meta %+v, %v", m, err)
	}
	if _, err := Merge(out, []string{s0}); err == nil {
		t.Fatal("non-empty out: want error")
	}
	other := shardDir(t, filepath.Join(root, "other"), "1/2", "different", nil)
	if _, err := Merge(filepath.Join(root, "m2"), []string{s0, other}); err == nil || !strings.Contains(err.Error(), "different configs") {
		t.Fatalf("different configs: %v", err)
	}
	res, err = Merge(filepath.Join(root, "m3"), []string{s0})
	if err != nil || !slices.Equal(res.MissingShards, []string{"1/2"}) {
		t.Fatalf("missing shard: %+v %v", res, err)
	}
	if _, err := Merge(filepath.Join(root, "m4"), []string{root}); err == nil {
		t.Fatal("not a result dir: want error")
	}
	thirds := shardDir(t, filepath.Join(root, "thirds"), "1/3", "cfg", nil)
	if _, err := Merge(filepath.Join(root, "m5"), []string{s0, thirds}); err == nil || !strings.Contains(err.Error(), "different splits") {
		t.Fatalf("0/2 with 1/3: %v", err)
	}
	garbled := shardDir(t, filepath.Join(root, "garbled"), "one of two", "cfg", nil)
	if _, err := Merge(filepath.Join(root, "m6"), []string{s0, garbled}); err == nil || !strings.Contains(err.Error(), "want i/n") {
		t.Fatalf("garbled shard: %v", err)
	}
}
