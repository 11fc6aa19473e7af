package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
)

// TestRunTimeoutBoundsRetries: run_timeout bounds the whole run, the
// retries and the waits between them included. A server answering 429
// with a long Retry-After is not waited out past it: the run ends as an
// error after its first attempt, saying why it was not retried. Before,
// run_timeout applied to each attempt and the waits came on top (a 20 s
// run_timeout made a 120 s run).
func TestRunTimeoutBoundsRetries(t *testing.T) {
	fake := fakeopenai.Start(t, fakeopenai.Options{Script: openaiScript(false), FailFirst: 100, FailStatus: 429, FailRetryAfter: "999999"})
	writeSuite(t, fmt.Sprintf("backend: openai: base_url: %q\nlimits: run_timeout: \"1s\"", fake.BaseURL))
	res, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff, Filters: []string{"case=sum", "seed=1"}})
	if err != nil {
		t.Fatal(err)
	}
	recs := readRuns(t, res.Dir)
	if len(recs) != 1 || recs[0].Outcome != "error" || recs[0].Attempts != 1 || !strings.Contains(recs[0].Error.Message, "limits.run_timeout") {
		t.Fatalf("records %+v", recs)
	}
}
