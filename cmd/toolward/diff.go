package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/toolward/toolward/internal/analysis/diff"
)

func init() {
	register(&command{name: "diff", summary: "compare two result directories run by run (McNemar test per model)", run: runDiff})
}

const diffUsage = `usage: toolward diff [--format text|md|json] [--alpha A] [--fail-on-regression [--allow-missing]] [--fail-on-broken] BASE NEW

Diff pairs the runs of BASE/runs.jsonl and NEW/runs.jsonl by (case id, cell
including the seed), so a case whose content changed still pairs (it is
listed as changed). It reports regressions (pass → fail), fixes, new and
dropped cases, and per model an exact McNemar test on the discordant pairs.
Runs that errored on either side are not compared.

A model regressed when it has more pass → fail than fail → pass pairs and
the McNemar p-value is below --alpha; beside it, the difference of pass rates
is given with its 95% interval and p-value clustered by case. The whole diff
regressed when any model did, or when a case's own McNemar test regressed
after Holm's correction for the number of cases tested (a case that went
from always passing to always failing is listed, not counted by itself).
With --fail-on-regression the exit status is then 1.

--fail-on-broken is the strict gate: exit 1 when any case went from always
passing to always failing for a model, significant or not (with one seed a
single pass -> fail case is never significant, so --fail-on-regression
alone lets it through).

--fail-on-regression also fails (exit 1) when nothing could be compared, and
when NEW lacks runs of BASE: cases BASE ran that NEW did not (dropped
cases), or runs of cases both ran (a crashed or partial run shows nothing
about the runs it did not do). The error names the cases and counts the
runs; --allow-missing accepts a NEW that left them out on purpose (--filter,
--shard, a smaller matrix). Records that are not runs of the plan a
directory's config.json records (lines appended by hand, edited ids, cases
or cells) are ignored with a warning, on both sides.

Flags:
`

func runDiff(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text, md or json")
	alpha := fs.Float64("alpha", 0.05, "significance level for a model regression")
	failOn := fs.Bool("fail-on-regression", false, "exit 1 when the new results regressed, or lack runs of the base")
	failOnBroken := fs.Bool("fail-on-broken", false, "exit 1 when any case went from always passing to always failing (significant or not)")
	allowMissing := fs.Bool("allow-missing", false, "with --fail-on-regression: do not fail when NEW lacks cases or runs of BASE")
	fs.Usage = func() {
		fmt.Fprint(stderr, diffUsage)
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 2 {
		fs.Usage()
		return 2
	}
	if *format != "text" && *format != "md" && *format != "json" {
		fmt.Fprintf(stderr, "toolward diff: --format must be text, md or json, got %q\n", *format)
		return 2
	}
	if !(*alpha > 0 && *alpha < 1) {
		fmt.Fprintf(stderr, "toolward diff: --alpha must be between 0 and 1, got %v\n", *alpha)
		return 2
	}
	// Diff's tables of runs hold no pointers, so the collector does not
	// scan them: collecting at 25% heap growth rather than 100% keeps
	// peak memory near 1.25× those tables (under 200 MiB for two sides
	// of 10^6 runs) for next to no CPU. GOGC, when set, decides instead.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(25))
	}
	r, err := diff.Compare(pos[0], pos[1], *alpha)
	if err != nil {
		fmt.Fprintf(stderr, "toolward diff: %v\n", err)
		return 1
	}
	switch *format {
	case "md":
		err = r.WriteMarkdown(stdout)
	case "json":
		err = r.WriteJSON(stdout)
	default:
		err = r.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "toolward diff: %v\n", err)
		return 1
	}
	if *failOnBroken && !*failOn {
		// The strict gate keeps the other gate's checks (nothing
		// compared, runs missing).
		*failOn = true
	}
	if *allowMissing && !*failOn {
		fmt.Fprintln(stderr, "toolward diff: --allow-missing needs --fail-on-regression or --fail-on-broken")
		return 2
	}
	if *failOn {
		if err := r.GateWith(diff.GateOptions{AllowMissing: *allowMissing, FailOnBroken: *failOnBroken}); err != nil {
			fmt.Fprintln(stderr, "toolward diff:", err)
			return 1
		}
		writeUnderpowered(stderr, "toolward diff", r)
	}
	return 0
}

// writeUnderpowered says, after a --fail-on-regression gate passed, which
// losses it could not count (diff.Result.Underpowered) and which gates
// count single runs.
func writeUnderpowered(w io.Writer, prog string, r *diff.Result) {
	for _, u := range r.Underpowered() {
		fmt.Fprintf(w, "%s: --fail-on-regression passed, but %s\n", prog, u)
	}
	if len(r.Underpowered()) > 0 {
		fmt.Fprintf(w, "%s: to gate on single runs: run --max-fail N (more than N failing runs fail), or --fail-on-broken (any case from always passing to always failing)\n", prog)
	}
}
