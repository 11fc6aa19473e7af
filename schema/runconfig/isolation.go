package runconfig

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/toolward/toolward/schema"
)

// checkIsolation checks the server's isolation fields against its kind.
func checkIsolation(srv schema.Server, add func(elems []any, format string, args ...any)) {
	at := func(k string) []any { return []any{"server", k} }
	switch srv.Isolation {
	case schema.IsolationRun:
		if srv.Command == nil {
			add(at("isolation"), "isolation \"run\" applies to command servers only (a url server can use \"session\" or a reset; the builtin server is always isolated)")
		}
	case schema.IsolationSession:
		if srv.URL == "" {
			add(at("isolation"), "isolation \"session\" applies to url servers only (a command server can use \"run\"; the builtin server is always isolated)")
		}
	}
	if srv.Isolation != schema.IsolationRun {
		// Without a run's directory to put there, {run_dir} would reach
		// the server as literal text: a path every run shares.
		for i, a := range srv.Command {
			if strings.Contains(a, schema.RunDirVar) {
				add([]any{"server", "command", i}, "%s names each run's fresh directory, which only isolation \"run\" gives; set server.isolation: \"run\"", schema.RunDirVar)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(srv.Env)) {
			if strings.Contains(srv.Env[k], schema.RunDirVar) {
				add([]any{"server", "env", k}, "%s names each run's fresh directory, which only isolation \"run\" gives; set server.isolation: \"run\"", schema.RunDirVar)
			}
		}
		if srv.Seed != "" {
			add(at("seed"), "seed applies with isolation \"run\" only: it fills each run's fresh directory")
		}
		if srv.Warm != 0 {
			add(at("warm"), "warm applies with isolation \"run\" only")
		}
	}
	if srv.Seed != "" {
		if fi, err := os.Stat(srv.Seed); err != nil {
			add(at("seed"), "seed %s: %s", srv.Seed, schema.ErrMsg(err))
		} else if !fi.IsDir() {
			add(at("seed"), "seed %s: want a directory, whose contents are copied into each run's directory", srv.Seed)
		}
	}
	if srv.Reset != nil {
		switch {
		case srv.Builtin != nil:
			add(at("reset"), "reset applies to command and url servers; the builtin server gives each run a fresh sandbox")
		case srv.Isolation == schema.IsolationRun:
			add(at("reset"), "reset is not needed with isolation \"run\": each run starts a fresh process")
		}
	}
}

// StateIsolation refuses state checks (expect.state) that the runs of cfg
// cannot give: against a server whose runs share state (a command or url
// server with neither isolation nor a reset), or with a reset while more
// than one run is in flight (workers; 0 means limits.concurrency). The
// error names the first such case and says how to isolate the runs; nil
// when the cases check no state or the runs are isolated.
func StateIsolation(cfg *schema.Config, cases []*schema.Case, workers int) *schema.Error {
	var probing *schema.Case
	for _, c := range cases {
		if c.Expectation != nil && c.Expectation.HasProbes() {
			probing = c
			break
		}
	}
	if probing == nil {
		return nil
	}
	srv := cfg.Server
	if workers <= 0 {
		workers = cfg.Limits.Concurrency
	}
	how := "set server.isolation: \"run\" (a fresh process per run, in a fresh directory named by {run_dir} in command and env), or a server.reset with limits.concurrency: 1"
	if srv.URL != "" {
		how = "set server.isolation: \"session\" if the server keeps its state per MCP session, or a server.reset with limits.concurrency: 1"
	}
	switch {
	case srv.SharesState():
		return &schema.Error{File: cfg.File, Path: "server", Msg: fmt.Sprintf(
			"case %s checks the end state (expect.state), but the runs against this server share its state, so a run would see what others wrote: %s", probing.ID, how)}
	case srv.Reset != nil && srv.Isolation != schema.IsolationRun && srv.Isolation != schema.IsolationSession && workers > 1:
		return &schema.Error{File: cfg.File, Path: "server.reset", Msg: fmt.Sprintf(
			"case %s checks the end state (expect.state), but server.reset isolates runs only one at a time and %d runs would be in flight: set limits.concurrency: 1 (and no -j), or isolate the runs with server.isolation", probing.ID, workers)}
	}
	return nil
}
