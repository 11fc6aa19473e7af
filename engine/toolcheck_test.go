package engine

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/toolward/toolward/engine/results"
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
