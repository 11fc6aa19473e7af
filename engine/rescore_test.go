package engine

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// counting forwards to a backend and counts its chat requests.
type counting struct {
	backend.Backend
	n atomic.Int64
}

func (c *counting) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	c.n.Add(1)
	return c.Backend.Chat(ctx, req)
}

// editCases rewrites the suite with each old string replaced by its new.
func editCases(t *testing.T, pairs ...string) {
	t.Helper()
	src := testCases
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(src, pairs[i]) {
			t.Fatalf("edit: %q not in the suite", pairs[i])
		}
		src = strings.Replace(src, pairs[i], pairs[i+1], 1)
	}
	if err := os.WriteFile("cases/suite.yaml", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runScored runs the suite's cases that never error (48 runs, 16 per
// case) and returns the result directory.
func runScored(t *testing.T) string {
	t.Helper()
	res, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff,
		Filters: []string{"case=add", "case=wrong", "case=wipe"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 48 || res.Errors != 0 || res.Fail != 16 {
		t.Fatalf("first run: %+v", res)
	}
	return res.Dir
}

func byCase(recs []record.Record) map[string][]record.Record {
	m := map[string][]record.Record{}
	for _, r := range recs {
		m[r.Case] = append(m[r.Case], r)
	}
	return m
}

// TestResumeRescoresScoringEdits is issue 9's: after an edit that changes
// only how runs are judged (a matcher, a description, tags), --resume
// re-scores the finished runs from their records and sends no model
// request; the records carry the new rules digest, and config.json too.
func TestResumeRescoresScoringEdits(t *testing.T) {
	setup(t)
	dir := runScored(t)
	before := byCase(readRuns(t, dir))
	editCases(t, "id: wrong\nprompt: What is 2 + 3?\nneeds: [add]\nexpect:\n  calls: [{tool: add, args: {a: 2, b: 3}}]\n  answer: {$contains: \"5\"}",
		"id: wrong\ndescription: now accepts 6\ntags: [x]\nprompt: What is 2 + 3?\nneeds: [add]\nexpect:\n  answer: {$contains: \"6\"}")
	be := &counting{Backend: &scripted{}}
	var prog bytes.Buffer
	res, err := Run(context.Background(), Options{ResumeDir: dir, Backend: be, Builtin: testServer, Backoff: noBackoff, Progress: &prog})
	if err != nil {
		t.Fatal(err)
	}
	if n := be.n.Load(); n != 0 || res.Ran != 0 || res.Skipped != 48 {
		t.Fatalf("resume after a scoring edit: %d model requests, %+v; want none, all 48 done", n, res)
	}
	if want := "resume: case wrong changed how runs are judged: 16 finished runs re-scored, no model request\n"; !strings.Contains(prog.String(), want) {
		t.Errorf("progress:\n%s\nwant a line %q", prog.String(), want)
	}
	after := byCase(readRuns(t, dir))
	for i, r := range after["wrong"] {
		b := before["wrong"][i]
		if r.ID != b.ID || r.Outcome != record.Pass || b.Outcome != record.Fail || r.Rules == b.Rules || r.Rules == "" {
			t.Fatalf("wrong run %d: %s %s rules %s, was %s %s rules %s", i, r.ID, r.Outcome, r.Rules, b.ID, b.Outcome, b.Rules)
		}
	}
	for _, c := range []string{"add", "wipe"} {
		for i, r := range after[c] {
			if b := before[c][i]; r.ID != b.ID || r.Outcome != b.Outcome || r.Rules != b.Rules {
				t.Fatalf("%s run %d changed by an edit of another case", c, i)
			}
		}
	}
	meta, err := results.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Rules["wrong"] != after["wrong"][0].Rules {
		t.Errorf("config.json rules of wrong = %s, records %s", meta.Rules["wrong"], after["wrong"][0].Rules)
	}
}

// TestResumeRerunsChangedPrompt: after an edit of what the model sees,
// --resume runs exactly the runs of that case again (their ids changed),
// says so, and keeps every other record.
func TestResumeRerunsChangedPrompt(t *testing.T) {
	setup(t)
	dir := runScored(t)
	before := byCase(readRuns(t, dir))
	editCases(t, "id: add\nprompt: What is 2 + 3?", "id: add\nprompt: What is 2 plus 3?")
	be := &counting{Backend: &scripted{}}
	var prog bytes.Buffer
	res, err := Run(context.Background(), Options{ResumeDir: dir, Backend: be, Builtin: testServer, Backoff: noBackoff, Progress: &prog})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 16 || res.Skipped != 32 || be.n.Load() != 32 { // add: a call turn and an answer turn per run
		t.Fatalf("resume after a prompt edit: %+v, %d requests; want 16 runs (32 requests)", res, be.n.Load())
	}
	if want := "resume: case add changed what the model sees: its 16 finished runs run again\n"; !strings.Contains(prog.String(), want) {
		t.Errorf("progress:\n%s\nwant a line %q", prog.String(), want)
	}
	if strings.Contains(prog.String(), "dropped") {
		t.Errorf("progress reports the rerun records as foreign too:\n%s", prog.String())
	}
	after := byCase(readRuns(t, dir))
	old := map[string]bool{}
	for _, r := range before["add"] {
		old[r.ID] = true
	}
	if len(after["add"]) != 16 {
		t.Fatalf("%d add records after the resume", len(after["add"]))
	}
	for _, r := range after["add"] {
		if old[r.ID] {
			t.Fatalf("add run %s kept its id after a prompt edit", r.ID)
		}
	}
	for _, c := range []string{"wrong", "wipe"} {
		for i, r := range after[c] {
			if r.ID != before[c][i].ID {
				t.Fatalf("%s run %d changed", c, i)
			}
		}
	}
}

// TestResumeLegacyDirectory: a result directory of config.json format 1
// (ids over whole case contents) cannot be resumed; the error says why.
func TestResumeLegacyDirectory(t *testing.T) {
	setup(t)
	dir := runScored(t)
	meta, err := results.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	meta.Version = 0
	if err := results.WriteMeta(dir, meta); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{ResumeDir: dir, Backend: &scripted{}, Builtin: testServer})
	if err == nil || !strings.Contains(err.Error(), "config.json format 1") {
		t.Fatalf("err = %v", err)
	}
}

// looping calls add forever.
type looping struct{}

func (looping) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	return &backend.Response{Message: backend.Message{ToolCalls: []backend.ToolCall{{Name: "add", Arguments: []byte(`{"a":2,"b":3}`)}}}}, nil
}

// TestOutOfTurnsPersisted: a run stopped by limits.max_iterations says so
// on its record, so that judging the record alone gives the engine's
// verdict (max_iterations, though the calls were right).
func TestOutOfTurnsPersisted(t *testing.T) {
	setup(t)
	res, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: looping{}, Builtin: testServer, Backoff: noBackoff,
		Filters: []string{"case=add", "model=m1", "seed=1", "confirm=approve", "tools=needed"}})
	if err != nil {
		t.Fatal(err)
	}
	recs := readRuns(t, res.Dir)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if !r.Trace.OutOfTurns || r.Outcome != record.Fail || r.Reasons[0].Code != "max_iterations" {
		t.Fatalf("record: out_of_turns %v, %s %v", r.Trace.OutOfTurns, r.Outcome, r.Reasons)
	}
	l, err := Load("e2e.cue", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	again := r
	again.Outcome, again.Reasons = "", nil
	l.Rules["add"].Score(&again)
	if again.Outcome != r.Outcome || !reflect.DeepEqual(again.Reasons, r.Reasons) {
		t.Errorf("re-scored %s %v, engine said %s %v", again.Outcome, again.Reasons, r.Outcome, r.Reasons)
	}
}

// TestResumeChangedErrorsNotForeign: error records of a case whose prompt
// changed run again like any error record; they are not reported as
// records of runs the plan does not hold.
func TestResumeChangedErrorsNotForeign(t *testing.T) {
	setup(t)
	res, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff,
		Filters: []string{"case=down", "model=m1", "seed=1"}})
	if err != nil || res.Errors != 4 {
		t.Fatalf("%+v, %v", res, err)
	}
	editCases(t, "id: down\nprompt: What is 2 + 3?", "id: down\nprompt: What is 3 + 2?")
	var prog bytes.Buffer
	res2, err := Run(context.Background(), Options{ResumeDir: res.Dir, Backend: &scripted{}, Builtin: testServer, Backoff: noBackoff, Progress: &prog})
	if err != nil || res2.Ran != 4 {
		t.Fatalf("%+v, %v", res2, err)
	}
	if strings.Contains(prog.String(), "dropped") {
		t.Errorf("progress:\n%s", prog.String())
	}
}
