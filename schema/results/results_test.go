package results

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
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
			id := r.ID
			if l, ok := letterIDs[id]; ok && len(id) > 1 {
				id = l
			}
			out = append(out, id+":"+string(r.Outcome))
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

// byID locates records by the position of their id in ids; nil ids
// locate every record (by the first letter of its id).
func byID(ids ...string) func(*record.Record) (int64, bool) {
	return func(r *record.Record) (int64, bool) {
		if ids == nil {
			return int64(r.ID[0]), true
		}
		i := slices.Index(ids, r.ID)
		return int64(i), i >= 0
	}
}

var all = byID()

func TestCompact(t *testing.T) {
	dir := t.TempDir()
	writeRuns(t, dir, []record.Record{
		{ID: "a", Outcome: record.Pass},
		{ID: "b", Outcome: record.Error},
		{ID: "c", Outcome: record.Fail},
		{ID: "a", Outcome: record.Fail}, // duplicate: first wins
	}, `{"version":1,"id":"d","outc`) // a crash mid-line
	res, err := Compact(context.Background(), dir, all)
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 1 || res.Duplicates != 1 || res.Bad != 1 || res.Foreign+res.Unknown != 0 || len(res.Done) != 2 {
		t.Fatalf("compacted %+v", res)
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
	if res, err := Compact(context.Background(), empty, all); err != nil || len(res.Done) != 0 || res.Done == nil {
		t.Fatalf("no runs file: %v %v", res, err)
	}
}

// TestCompactKeepsOnlyThePlan: a record of a run the plan does not hold,
// a record with an unknown outcome and an over-long line are dropped and
// counted, not kept (the 300-run plan that reported 301 runs) nor counted
// as errors; the lines after them survive.
func TestCompactKeepsOnlyThePlan(t *testing.T) {
	dir := t.TempDir()
	long := `{"version":1,"id":"huge","outcome":"pass","trace":{"answer":"` + strings.Repeat("a", record.MaxLineBytes) + `"}}` + "\n"
	writeRuns(t, dir, []record.Record{
		{ID: "a", Outcome: record.Pass},
		{ID: "foreign", Outcome: record.Pass},
		{ID: "b", Outcome: "timeout"},
	}, long)
	writeRuns(t, dir, []record.Record{{ID: "c", Outcome: record.Fail}}, "")
	var asked []string
	locate := byID("a", "b", "c")
	res, err := Compact(context.Background(), dir, func(r *record.Record) (int64, bool) {
		asked = append(asked, r.ID)
		return locate(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Foreign != 1 || res.Unknown != 1 || res.Bad != 1 || res.Errors+res.Duplicates != 0 || len(res.Done) != 2 {
		t.Fatalf("compacted %+v", res)
	}
	if _, ok := res.Done[0]; !ok {
		t.Errorf("done positions %v, want 0 and 2", res.Done)
	}
	if _, ok := res.Done[2]; !ok {
		t.Errorf("done positions %v, want 0 and 2", res.Done)
	}
	if !slices.Equal(asked, []string{"a", "foreign", "c"}) {
		t.Errorf("inPlan asked about %v", asked)
	}
	if got := ids(t, dir); !slices.Equal(got, []string{"a:pass", "c:fail"}) {
		t.Fatalf("after compact: %v", got)
	}
}

// TestCompactCancelled: a cancelled context stops Compact and leaves the
// file as it was.
func TestCompactCancelled(t *testing.T) {
	dir := t.TempDir()
	writeRuns(t, dir, []record.Record{{ID: "a", Outcome: record.Pass}, {ID: "b", Outcome: record.Error}}, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Compact(ctx, dir, all); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if got := ids(t, dir); !slices.Equal(got, []string{"a:pass", "b:error"}) {
		t.Fatalf("after a cancelled compact: %v", got)
	}
}

// TestMergeSkipsUnknownAndLongLines: merge counts a record with an
// unknown outcome and an over-long line apart, keeps neither, and merges
// the rest.
func TestMergeSkipsUnknownAndLongLines(t *testing.T) {
	root := t.TempDir()
	s0 := shardDir(t, root, "0/1", "cfg", []record.Record{{ID: "a", Outcome: record.Pass}, {ID: "b", Outcome: "weird"}})
	writeRuns(t, s0, nil, `{"version":1,"id":"huge","outcome":"pass","trace":{"answer":"`+strings.Repeat("a", record.MaxLineBytes)+`"}}`+"\n")
	writeRuns(t, s0, []record.Record{asRun(record.Record{ID: "c", Outcome: record.Fail})}, "")
	out := filepath.Join(root, "merged")
	res, err := Merge(out, []string{s0})
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs != 2 || res.Unknown != 1 || res.Bad != 1 || res.Errors != 0 {
		t.Fatalf("merge result %+v", res)
	}
	if got := ids(t, out); !slices.Equal(got, []string{"a:pass", "c:fail"}) {
		t.Fatalf("merged runs %v", got)
	}
}

// letterConfig and letterCases are the plan of the shard directories
// tests write: one case, 26 seeds, the run of seed i named by the i'th
// letter (see asRun).
func letterConfig() *schema.Config {
	seeds := make([]string, 26)
	for i := range seeds {
		seeds[i] = strconv.Itoa(i + 1)
	}
	return &schema.Config{Name: "x", Matrix: schema.Matrix{}.With(cell.Model, "m").With(cell.Seed, seeds...)}
}

var letterCases = map[string]string{"c": "d"}

// letterIDs maps each letter to the run id of its seed, and back.
var letterIDs = func() map[string]string {
	p, err := plan.New(letterConfig(), []*schema.Case{{ID: "c", RunDigest: "d"}})
	if err != nil {
		panic(err)
	}
	m := map[string]string{}
	for i := range p.Len() {
		l := string(rune('a' + i))
		m[l] = p.ID(i)
		m[p.ID(i)] = l
	}
	return m
}()

// asRun turns a record named by a single letter into the letter's run of
// the letter plan (case, cell and id), so that merge takes it for one of
// the plan's; other records are left as they are.
func asRun(rec record.Record) record.Record {
	if len(rec.ID) != 1 || rec.Case != "" {
		return rec
	}
	rec.Case = "c"
	rec.Cell = record.Cell{Model: "m", Seed: int(rec.ID[0]-'a') + 1, Temperature: 0, Tools: "needed", Confirm: "auto", Descriptions: "default"}
	rec.ID = letterIDs[rec.ID]
	return rec
}

func shardDir(t *testing.T, root, shard string, digest string, recs []record.Record) string {
	dir := filepath.Join(root, strings.ReplaceAll(shard, "/", "of"))
	os.MkdirAll(dir, 0o755)
	m := &Meta{Version: MetaVersion, Config: letterConfig(), ConfigDigest: digest, Shard: shard, Planned: int64(len(recs)), Total: 4, Cases: letterCases}
	if err := WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	runs := make([]record.Record, len(recs))
	for i, r := range recs {
		runs[i] = asRun(r)
	}
	writeRuns(t, dir, runs, "")
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

// TestMergeRefusesDifferentToolLists: shards whose config.json records
// MCP servers that listed different tools are not one job's runs, and
// merge refuses them, naming both; shards that agree keep the server in
// the merged config.json, and one shard without a record leaves none.
// Before, the first shard's server was copied whatever the others ran.
func TestMergeRefusesDifferentToolLists(t *testing.T) {
	root := t.TempDir()
	withServer := func(dir string, s *Server) string {
		t.Helper()
		m, err := ReadMeta(dir)
		if err != nil {
			t.Fatal(err)
		}
		m.Server = s
		if err := WriteMeta(dir, m); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	same := &Server{Name: "srv", Version: "1", ToolsDigest: "aaaaaaaaaaaaaaaa", Tools: 3}
	s0 := withServer(shardDir(t, root, "0/2", "cfg", []record.Record{{ID: "a", Outcome: record.Pass}}), same)
	s1 := withServer(shardDir(t, root, "1/2", "cfg", []record.Record{{ID: "b", Outcome: record.Pass}}), same)
	other := withServer(shardDir(t, filepath.Join(root, "other"), "1/2", "cfg", nil), &Server{Name: "srv", Version: "1", ToolsDigest: "bbbbbbbbbbbbbbbb", Tools: 4})
	unknown := shardDir(t, filepath.Join(root, "unknown"), "1/2", "cfg", nil)

	_, err := Merge(filepath.Join(root, "m1"), []string{s0, other})
	want := "merge: " + s0 + " and " + other + " ran different tool lists (srv 1 (3 tools, digest aaaaaaaaaaaa), srv 1 (4 tools, digest bbbbbbbbbbbb))"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("different tool lists: %v\nwant %s…", err, want)
	}
	if _, serr := os.Stat(filepath.Join(root, "m1")); serr == nil {
		t.Error("a refused merge created its output directory")
	}
	if _, err := Merge(filepath.Join(root, "m2"), []string{s0, s1}); err != nil {
		t.Fatal(err)
	}
	if m, err := ReadMeta(filepath.Join(root, "m2")); err != nil || m.Server == nil || *m.Server != *same {
		t.Errorf("merged server %+v, %v", m.Server, err)
	}
	if _, err := Merge(filepath.Join(root, "m3"), []string{s0, unknown}); err != nil {
		t.Fatal(err)
	}
	if m, err := ReadMeta(filepath.Join(root, "m3")); err != nil || m.Server != nil {
		t.Errorf("merged with an unrecorded server: %+v, %v", m.Server, err)
	}
}

// TestMergeDropsForeign: records that are not runs of the shards' plan
// (an id-only line appended by hand, a copied record whose case was
// edited, one whose cell was edited, one whose id was) are dropped and
// counted, not carried into the merged directory; before the fix merge
// copied all four.
func TestMergeDropsForeign(t *testing.T) {
	root := t.TempDir()
	s0 := shardDir(t, root, "0/1", "cfg", []record.Record{{ID: "a", Outcome: record.Pass}, {ID: "b", Outcome: record.Fail}})
	evil := asRun(record.Record{ID: "e", Outcome: record.Pass})
	evil.Case = "<b>evil</b>"
	cell := asRun(record.Record{ID: "c", Outcome: record.Pass})
	cell.Cell.Model = "other"
	id := asRun(record.Record{ID: "d", Outcome: record.Pass})
	id.ID = "0123456789abcdef"
	writeRuns(t, s0, []record.Record{evil, cell, id}, `{"version":2,"id":"zzz","outcome":"pass"}`+"\n")
	out := filepath.Join(root, "merged")
	res, err := Merge(out, []string{s0})
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs != 2 || res.Foreign.N != 4 || len(res.Foreign.Examples) != 4 {
		t.Fatalf("merge result %+v", res)
	}
	if got := ids(t, out); !slices.Equal(got, []string{"a:pass", "b:fail"}) {
		t.Fatalf("merged runs %v", got)
	}
	if msg := res.Foreign.String(); !strings.Contains(msg, "ignored 4 record(s)") || !strings.Contains(msg, `"zzz"`) || !strings.Contains(msg, `<b>evil</b>`) {
		t.Errorf("warning %q", msg)
	}
}

// TestMembersLegacy: a format 1 directory, whose ids cannot be rebuilt,
// holds the records of its cases and no others.
func TestMembersLegacy(t *testing.T) {
	m := &Meta{Config: letterConfig(), Cases: map[string]string{"c": "whole"}}
	ms, err := m.Members()
	if err != nil {
		t.Fatal(err)
	}
	if !ms.Holds(&record.Record{ID: "x", Case: "c"}) || ms.Holds(&record.Record{ID: "x", Case: "zzz"}) {
		t.Error("legacy membership is by case")
	}
}
