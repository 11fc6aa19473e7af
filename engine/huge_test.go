package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// hugeConfig has 1000 models x 1000 seeds x 1000 temperatures x 3 confirm
// modes over one case: 3x10^9 runs, built with comprehensions.
const hugeConfig = `
import "list"

name:  "huge"
cases: ["cases/*.yaml"]
filter: ["case=add"]
server: builtin: {}
backend: replay: "cassettes"
matrix: {
	models: [for i in list.Range(0, 1000, 1) {"m\(i)"}]
	seeds: list.Range(0, 1000, 1)
	temperatures: [for i in list.Range(0, 1000, 1) {i / 1000}]
	confirm: ["auto", "approve", "deny"]
}
limits: {max_iterations: 4, concurrency: 2}
`

const hugeRuns = 3_000_000_000

func writeHuge(t *testing.T) {
	t.Helper()
	setup(t)
	if err := os.WriteFile("huge.cue", []byte(hugeConfig), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHugePlanStartsAtOnce: a 3x10^9-run plan warns with its size before
// anything runs, and its first runs start without the plan being walked
// first (the old code hashed every id before the first run: this test
// would not end). Stop after the first answer ends it.
func TestHugePlanStartsAtOnce(t *testing.T) {
	writeHuge(t)
	stop := make(chan struct{})
	var once sync.Once
	be := &scripted{onAnswer: func(int64) { once.Do(func() { close(stop) }) }}
	var prog strings.Builder
	res, err := Run(context.Background(), Options{ConfigPath: "huge.cue", Backend: be, Builtin: testServer, Stop: stop, Progress: &prog})
	if err != nil {
		t.Fatal(err)
	}
	if res.Planned != hugeRuns || res.Ran == 0 || res.Ran > 4 || !res.Interrupted {
		t.Fatalf("result %+v", res)
	}
	out := prog.String()
	warn := "warning: huge: the plan has 3000000000 runs, more than 10000000; even at 100 runs/s it would take 347 days"
	if i, j := strings.Index(out, warn), strings.Index(out, "runs to do"); i < 0 || j < i {
		t.Fatalf("no size warning before the work starts:\n%s", out)
	}
}

// TestScheduleHonoursCancelWhileSkipping: the scheduler checks ctx and
// stop at every plan index, also over a stretch of done runs: a stretch
// of 3x10^9 done runs stops at the index where ctx is cancelled (or stop
// closed), without running anything.
func TestScheduleHonoursCancelWhileSkipping(t *testing.T) {
	writeHuge(t)
	l, err := Load("huge.cue", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	const at = 100_000
	for _, how := range []string{"ctx", "stop"} {
		ctx, cancel := context.WithCancel(context.Background())
		stop := make(chan struct{})
		var asked int64
		done := func(i int64) bool {
			asked++
			if i == at {
				if how == "ctx" {
					cancel()
				} else {
					close(stop)
				}
			}
			return true
		}
		j := &job{l: l, res: &Result{}}
		j.schedule(ctx, stop, 2, done)
		cancel()
		if asked != at+1 || j.res.Ran != 0 {
			t.Errorf("%s: the scheduler asked about %d indices after the %s ended at index %d; ran %d", how, asked, how, at, j.res.Ran)
		}
	}
}

// blockingPreflight blocks in Preflight until its context ends, telling
// entered when it starts.
type blockingPreflight struct {
	scripted
	entered chan struct{}
}

func (b *blockingPreflight) Preflight(ctx context.Context, models []string) (*backend.Info, error) {
	close(b.entered)
	<-ctx.Done()
	return nil, &backend.Error{Kind: backend.KindUnavailable, Msg: "preflight cut short", Err: ctx.Err()}
}

// TestInterruptBeforeFirstRun: Ctrl-C once (Stop) or twice (ctx) while the
// backend's preflight hangs ends Run at once: interrupted, nothing ran, no
// result directory left, and no error blaming the backend.
func TestInterruptBeforeFirstRun(t *testing.T) {
	for _, how := range []string{"stop", "ctx"} {
		t.Run(how, func(t *testing.T) {
			writeHuge(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stop := make(chan struct{})
			be := &blockingPreflight{entered: make(chan struct{})}
			go func() {
				<-be.entered
				if how == "stop" {
					close(stop)
				} else {
					cancel()
				}
			}()
			res, err := Run(ctx, Options{ConfigPath: "huge.cue", Backend: be, Builtin: testServer, Stop: stop})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Interrupted || res.Ran != 0 || res.Dir != "" || res.Remaining() != hugeRuns {
				t.Fatalf("result %+v", res)
			}
			if ents, _ := os.ReadDir("results/huge"); len(ents) != 0 {
				t.Fatalf("result directory left behind: %v", ents)
			}
		})
	}
}

// TestLocatorFindsEveryRun: every run of a filtered, sharded plan locates
// to its own index; a record whose id or cell does not match the plan, or
// from another shard, does not.
func TestLocatorFindsEveryRun(t *testing.T) {
	setup(t)
	for _, shard := range []string{"", "1/3"} {
		l, err := Load("e2e.cue", []string{"case=add", "case=wipe", "case=down"}, shard)
		if err != nil {
			t.Fatal(err)
		}
		loc := plan.NewLocator(l.Plan)
		for i := range l.Plan.Len() {
			r := l.Plan.Run(i)
			rec := &record.Record{ID: r.ID, Case: r.Case.ID, Cell: r.Cell}
			if got, ok := loc.Index(rec); !ok || got != i {
				t.Fatalf("shard %q: run %d located at %d, %v", shard, i, got, ok)
			}
			bad := *rec
			bad.ID = "0000000000000000"
			if _, ok := loc.Index(&bad); ok {
				t.Fatalf("a wrong id located")
			}
			bad = *rec
			bad.Cell.Seed = 99
			if _, ok := loc.Index(&bad); ok {
				t.Fatalf("a seed outside the plan located")
			}
		}
	}
	whole, _ := Load("e2e.cue", nil, "")
	first, _ := Load("e2e.cue", nil, "0/2")
	loc := plan.NewLocator(first.Plan)
	r := whole.Plan.Run(whole.Plan.Len() - 1) // in shard 1/2
	if _, ok := loc.Index(&record.Record{ID: r.ID, Case: r.Case.ID, Cell: r.Cell}); ok {
		t.Fatal("a run of shard 1/2 located in shard 0/2")
	}
}

// TestResumeDropsForeignAndUnknown: on resume, a record of a run outside
// the job's plan (here: of the other shard) and a record with an unknown
// outcome are dropped and said so; neither counts as done nor as an
// error, and the job ends with exactly its plan's runs (the issue's
// 300-run plan reported 301).
func TestResumeDropsForeignAndUnknown(t *testing.T) {
	setup(t)
	res, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff, Shard: "1/2"})
	if err != nil {
		t.Fatal(err)
	}
	recs := readRuns(t, res.Dir)
	whole, _ := Load("e2e.cue", nil, "")
	foreign := whole.Plan.Run(0) // shard 0/2
	var victim record.Record     // a passed run, rewritten with an odd outcome
	for _, r := range recs {
		if r.Outcome == record.Pass {
			victim = r
			break
		}
	}
	victim.Outcome = "timeout"
	lines := []any{
		&record.Record{Version: 1, ID: foreign.ID, Case: foreign.Case.ID, Cell: foreign.Cell, Outcome: record.Pass},
		&victim,
	}
	f, _ := os.OpenFile(filepath.Join(res.Dir, results.RunsFile), os.O_APPEND|os.O_WRONLY, 0)
	for _, v := range lines {
		b, _ := json.Marshal(v)
		f.Write(append(b, '\n'))
	}
	f.Close()
	// The valid record of the victim is dropped too, so that the run
	// reruns: find it by id and drop it from the file.
	data, _ := os.ReadFile(filepath.Join(res.Dir, results.RunsFile))
	var kept [][]byte
	for _, ln := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if bytes.Contains(ln, []byte(`"id":"`+victim.ID+`"`)) && !bytes.Contains(ln, []byte(`"timeout"`)) {
			continue
		}
		kept = append(kept, ln)
	}
	os.WriteFile(filepath.Join(res.Dir, results.RunsFile), append(bytes.Join(kept, []byte("\n")), '\n'), 0o644)

	var prog strings.Builder
	res2, err := Run(context.Background(), Options{ResumeDir: res.Dir, Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff, Progress: &prog})
	if err != nil {
		t.Fatal(err)
	}
	errs := int64(0)
	for _, r := range recs {
		if r.Outcome == record.Error {
			errs++
		}
	}
	if res2.Planned != 40 || res2.Skipped != 40-errs-1 || res2.Ran != errs+1 {
		t.Fatalf("resume result %+v (%d errors before)", res2, errs)
	}
	for _, want := range []string{
		"resume: dropped 1 records of runs this job's plan does not hold from runs.jsonl\n",
		"resume: dropped 1 records with an outcome other than pass, fail or error from runs.jsonl; those runs run again\n",
	} {
		if !strings.Contains(prog.String(), want) {
			t.Errorf("progress does not say %q:\n%s", want, prog.String())
		}
	}
	after := readRuns(t, res.Dir)
	ids := map[string]bool{}
	for _, r := range after {
		ids[r.ID] = true
	}
	if len(after) != 40 || len(ids) != 40 || ids[foreign.ID] || !ids[victim.ID] {
		t.Fatalf("after resume: %d records, %d ids, foreign kept %v, victim rerun %v", len(after), len(ids), ids[foreign.ID], ids[victim.ID])
	}
}

// longAnswer answers every case with a 3 MiB text whose only "5" is at
// its very end.
type longAnswer struct{}

var longText = strings.Repeat("x", 3<<20) + " It is 5."

func (longAnswer) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	return &backend.Response{Message: backend.Message{Content: longText}}, nil
}

// TestHugeAnswerScoredWholeStoredClipped: an answer over MaxFieldBytes is
// scored whole (the case wants the "5" at its end, beyond what the record
// keeps), stored once and clipped in runs.jsonl, and noted with its
// length.
func TestHugeAnswerScoredWholeStoredClipped(t *testing.T) {
	setup(t)
	res, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: longAnswer{}, Builtin: testServer, Filters: []string{"case=flaky", "model=m1", "seed=1", "confirm=deny", "tools=needed"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 1 || res.Pass != 1 {
		t.Fatalf("result %+v: the answer was not scored whole", res)
	}
	data, err := os.ReadFile(filepath.Join(res.Dir, results.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > record.MaxFieldBytes+8<<10 {
		t.Errorf("runs.jsonl holds %d bytes for one run with a %d-byte answer", len(data), len(longText))
	}
	rec := readRuns(t, res.Dir)[0]
	if rec.Outcome != record.Pass || len(rec.Truncated) != 1 || rec.Truncated[0] != (record.Truncation{Path: "trace.answer", Bytes: len(longText)}) ||
		!strings.HasSuffix(rec.Trace.Answer, "bytes in all]") || rec.Trace.Turns[0].Content != rec.Trace.Answer {
		t.Fatalf("record: outcome %s, truncated %+v, answer ends %q", rec.Outcome, rec.Truncated, rec.Trace.Answer[len(rec.Trace.Answer)-40:])
	}
}
