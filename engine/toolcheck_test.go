package engine

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema/results"
)

// TestMissingToolStopsTheJob: a case needing a tool the server does not
// offer stops the job before any run, with a did-you-mean at the case's
// needs, and leaves no result directory. Before, every run of the case
// became an error record and the summary advised a --resume that could
// never succeed.
func TestMissingToolStopsTheJob(t *testing.T) {
	setup(t)
	os.WriteFile("cases/suite.yaml", []byte(testCases+"---\nid: typo\nprompt: x\nneeds: [ad]\nexpect: {calls: [{tool: ad}], forbid: [wip]}\n"), 0o644)
	be := &scripted{}
	_, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: be, Builtin: testServer})
	if err == nil {
		t.Fatal("the job ran")
	}
	for _, want := range []string{
		"the MCP server (test 1) lacks tools the cases need, nothing ran",
		`cases/suite.yaml:40:9: needs[0]: the server offers no tool "ad" (did you mean "add"?)`,
		`cases/suite.yaml:41:19: expect.calls[0].tool: the server offers no tool "ad" (did you mean "add"?)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "wip") {
		t.Errorf("a forbid typo stopped the job:\n%v", err)
	}
	if be.answers.Load() != 0 {
		t.Errorf("%d runs answered", be.answers.Load())
	}
	if ents, _ := os.ReadDir("results/e2e"); len(ents) != 0 {
		t.Fatalf("result directory left behind: %v", ents)
	}
}

// TestRunRecordsServer: config.json records the server's name, version
// and a digest of its tool list; names that cannot stop a run are
// warnings on progress.
func TestRunRecordsServer(t *testing.T) {
	setup(t)
	os.WriteFile("cases/suite.yaml", []byte("id: add\nprompt: p\nneeds: [add]\nexpect: {calls: [{tool: add}], forbid: [wip]}\n"), 0o644)
	var progress strings.Builder
	res, err := Run(context.Background(), Options{ConfigPath: "e2e.cue", Backend: &scripted{}, Builtin: testServer, Progress: &progress, Filters: []string{"model=m1"}})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := results.ReadMeta(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := meta.Server; s == nil || s.Name != "test" || s.Version != "1" || s.Tools != 2 || len(s.ToolsDigest) != 64 {
		t.Fatalf("server %+v", meta.Server)
	}
	if want := `warning: cases/suite.yaml:4:41: expect.forbid[0]: the server offers no tool "wip" (did you mean "wipe"?)`; !strings.Contains(progress.String(), want) {
		t.Errorf("progress lacks %q:\n%s", want, progress.String())
	}
}

// TestStoppedJobRemovesTheParentsItMade: a job that stops before its
// first run removes its stamped result directory and the parents it
// created for it (results/<name>/, results/), when empty, but never a
// directory that was there before, nor the parents of an --out
// directory; an --out directory that existed is left, emptied. Before,
// results/e2e/ (and results/) stayed behind, empty.
func TestStoppedJobRemovesTheParentsItMade(t *testing.T) {
	setup(t)
	os.WriteFile("cases/suite.yaml", []byte("id: typo\nprompt: x\nneeds: [ad]\nexpect: {calls: [{tool: ad}]}\n"), 0o644)
	stop := func(opts Options) {
		t.Helper()
		opts.ConfigPath, opts.Backend, opts.Builtin = "e2e.cue", &scripted{}, testServer
		if _, err := Run(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "nothing ran") {
			t.Fatalf("the job did not stop before its first run: %v", err)
		}
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	stop(Options{})
	if exists("results") {
		t.Errorf("results/ left behind")
	}

	os.MkdirAll("results/other", 0o755)
	stop(Options{})
	if exists("results/e2e") || !exists("results/other") {
		t.Errorf("with results/ there before: results/e2e kept %v, results/other kept %v", exists("results/e2e"), exists("results/other"))
	}

	os.MkdirAll("results/e2e", 0o755)
	stop(Options{})
	if ents, err := os.ReadDir("results/e2e"); err != nil || len(ents) != 0 {
		t.Errorf("results/e2e, there before: %v, %v", ents, err)
	}

	stop(Options{OutDir: "out/a/b"})
	if exists("out/a/b") || !exists("out/a") {
		t.Errorf("--out out/a/b: b kept %v, its parent kept %v", exists("out/a/b"), exists("out/a"))
	}
	os.MkdirAll("empty", 0o755)
	stop(Options{OutDir: "empty"})
	if ents, err := os.ReadDir("empty"); err != nil || len(ents) != 0 {
		t.Errorf("--out empty, there before: %v, %v", ents, err)
	}
}
