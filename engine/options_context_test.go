package engine

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/toolward/toolward/engine/backend"
)

// optionsSuite is truncationSuite with the backend's num_ctx backend and
// the options axis matrix: a 15,591-token prompt for subset n30 and the
// options sets big (num_ctx 16384) and small (num_ctx 4096).
func optionsSuite(t *testing.T, backendCtx, options string) {
	truncationSuite(t)
	b, _ := os.ReadFile("run.cue")
	cfg := strings.Replace(string(b), "num_ctx: 4096}", "num_ctx: "+backendCtx+"}", 1)
	cfg = strings.Replace(cfg, `tools: [{name: "needed"}, {name: "n30", count: 30}]`, `tools: [{name: "n30", count: 30}], options: `+options, 1)
	cfg += "options_sets: {big: ollama: num_ctx: 16384, small: ollama: num_ctx: 4096}\n"
	os.WriteFile("run.cue", []byte(cfg), 0o644)
}

// TestContextCheckPerOptionsSet: the context check measures each options
// set's prompt with the set's num_ctx, which every run of its cells
// sends: a set that gives the context the prompt needs runs though the
// backend's num_ctx is smaller, and a set whose num_ctx is too small
// stops the job, naming the set and its setting, though the backend's
// would fit.
func TestContextCheckPerOptionsSet(t *testing.T) {
	t.Run("set fits", func(t *testing.T) {
		optionsSuite(t, "4096", `["big"]`)
		res, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff})
		if err != nil {
			t.Fatal(err)
		}
		if res.Pass != 1 || res.Errors != 0 {
			t.Errorf("result %+v; want the run to pass", res)
		}
	})
	t.Run("set too small", func(t *testing.T) {
		optionsSuite(t, "16384", `["default", "small"]`)
		_, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff})
		want := "subset n30 needs 15,591 prompt tokens; num_ctx is 4096: set options_sets.small.ollama.num_ctx to at least 16384 (model qwen3:0.6b, options small, longest prompt: case sum)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Run error = %v; want it to say %q", err, want)
		}
		if strings.Contains(err.Error(), "options default") {
			t.Errorf("the set that fits is named: %v", err)
		}
		if _, err := os.Stat("results"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a result directory was made: %v", err)
		}
	})
	t.Run("check skipped", func(t *testing.T) {
		// The run of the small set is cut, and its error names the set's
		// setting; the default set's run fits.
		optionsSuite(t, "16384", `["default", "small"]`)
		res, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff, SkipContextCheck: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range readRuns(t, res.Dir) {
			switch r.Cell.Options {
			case "":
				if r.Outcome != "pass" {
					t.Errorf("default: %s %+v", r.Outcome, r.Error)
				}
			default:
				if r.Outcome != "error" || r.Error == nil || r.Error.Kind != backend.KindContextTruncated ||
					!strings.Contains(r.Error.Message, "set options_sets.small.ollama.num_ctx to at least 16384") {
					t.Errorf("small: %s %+v", r.Outcome, r.Error)
				}
			}
		}
	})
}
