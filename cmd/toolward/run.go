package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/toolward/toolward/engine"
	"github.com/toolward/toolward/internal/analysis/diff"
	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/schema/plan"
)

func init() {
	register(&command{name: "run", summary: "execute a run config; results in results/<name>/<stamp>/", run: runRun})
}

const runUsage = `usage: toolward run [flags] CONFIG
       toolward run --resume DIR

Runs every run of CONFIG's plan (models x cases x seeds x temperatures x
tool subsets x confirm modes x description sets x options sets), scores
each, and writes results/<name>/<UTC stamp>/ with config.json, runs.jsonl
and the reports.

The backend (and a simulated user's) is preflighted first: if Ollama is
down or a model is not pulled, nothing runs. Then the longest first prompt of each model and
tool subset is measured with a one-token request: a prompt that does not
fit the context (Ollama would cut it silently) stops the job, saying
which num_ctx would fit. Infrastructure errors are retried (limits.retries)
and then recorded as outcome error, apart from model failures.

Ctrl-C once: runs in flight finish, then toolward exits 1 and prints how to
resume; before the first run (during the preflight, say) it stops at once.
Ctrl-C twice: abort at once (runs in flight are lost and rerun on resume);
toolward exits within %s whatever it was doing, and a third Ctrl-C kills
it. SIGTERM (docker stop, Kubernetes) and SIGHUP (a closed terminal) count
as Ctrl-C: the first finishes the runs in flight, a second of any of the
three aborts.

A plan of more than %d runs gets a warning with its size before anything
runs.

Exit status: 0 when every planned run finished with pass or fail and the
gates given hold (--max-fail, --min-pass-rate, --baseline with
--fail-on-regression): without a gate, failing runs still exit 0; 1 when
runs are missing or ended in infrastructure errors, or a gate failed; 2
on a usage error.

Flags:
`

func runRun(args []string, stdout, stderr io.Writer) int {
	fl, code, ok := parseRunFlags(args, stderr)
	if !ok {
		return code
	}
	// The signal handler, the engine's progress and this function all
	// write to stderr.
	f, isFile := stderr.(*os.File)
	tty := isFile && term.IsTerminal(int(f.Fd()))
	stderr = &lockedWriter{w: stderr}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, disarm, release := onStopSignals(cancel, stderr)
	defer release()

	opts := engine.Options{
		ConfigPath: fl.config, ResumeDir: *fl.resume, Filters: fl.filters, Shard: *fl.shard,
		OutDir: *fl.outDir, Workers: *fl.workers, RecordDir: *fl.recordDir,
		Progress: stderr, ProgressTTY: tty, Stop: stop, Builtin: bundledServer,
		SkipContextCheck: *fl.noContextCheck,
	}
	res, err := engine.Run(ctx, opts)
	disarm()
	if err != nil {
		fmt.Fprintln(stderr, "toolward run:", err)
		if res != nil && res.Dir != "" {
			fmt.Fprintln(stderr, "results so far:", res.Dir)
		}
		return 1
	}
	if res.Dir == "" {
		fmt.Fprintln(stderr, "toolward run: interrupted before the first run; nothing ran")
		return 1
	}
	return finishRun(res, fl, stdout, stderr)
}

// runFlags are run's command line, parsed.
type runFlags struct {
	config                         string // the CONFIG argument; "" with --resume
	workers                        *int
	outDir, resume, shard          *string
	recordDir, baseline            *string
	filters                        multiFlag
	failOnRegression, allowMissing *bool
	failOnBroken                   *bool
	noContextCheck                 *bool
	minPass                        *float64
	minPassSet                     bool
	maxFail                        *int
}

// parseRunFlags parses and checks run's arguments; when ok is false the
// command ends with code (0 for -h, 2 for a usage error, said on stderr).
func parseRunFlags(args []string, stderr io.Writer) (fl *runFlags, code int, ok bool) {
	fl = &runFlags{}
	fs := newFlags("run", fmt.Sprintf(runUsage, abortGrace, engine.HugePlan), true, stderr)
	applyTags := tagFlag(fs, "run", stderr)
	fl.workers = fs.Int("j", 0, "runs in flight (default: the config's limits.concurrency)")
	fl.outDir = fs.String("out", "", "write the results into `DIR` (new or empty) instead of <output>/<name>/<UTC stamp>")
	fl.resume = fs.String("resume", "", "continue the job in result directory `DIR`: run exactly the runs it lacks (and those that ended in error, or whose case changed what the model sees); runs whose case changed only how they are judged are re-scored")
	fs.Var(&fl.filters, "filter", "keep runs whose `key=glob` matches (keys: tag, "+strings.Join(plan.AxisNames, ", ")+"); repeatable: AND across keys, OR within one")
	fl.shard = fs.String("shard", "", "run only shard `i/n` (0 <= i < n) of the plan; join shards with toolward merge")
	fl.recordDir = fs.String("record", "", "record the model's replies as replay cassettes into `DIR`")
	fl.baseline = fs.String("baseline", "", "compare with the result directory `DIR` at the end (paired per case)")
	fl.failOnRegression = fs.Bool("fail-on-regression", false, "with --baseline: exit 1 when the comparison finds a regression, or when this run lacks runs of the baseline")
	fl.failOnBroken = fs.Bool("fail-on-broken", false, "with --baseline: the strict gate: exit 1 when any case went from always passing to always failing (significant or not), besides --fail-on-regression's checks")
	fl.allowMissing = fs.Bool("allow-missing", false, "with --fail-on-regression or --fail-on-broken: accept a run that lacks cases or runs of the baseline (filtered or sharded on purpose)")
	fl.noContextCheck = fs.Bool("no-context-check", false, "skip measuring, before any run, whether each model's longest prompt per tool subset, and the simulated user's opening prompt, fit their context (runs whose prompt the server cuts are then recorded as context_truncated errors)")
	fl.minPass = fs.Float64("min-pass-rate", -1, "exit 1 when the pass rate over scored runs is below `F` (0..1)")
	fl.maxFail = fs.Int("max-fail", -1, "exit 1 when more than `N` runs of the result directory fail (0: any failing run fails the command; -1: no limit)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return nil, code, false
	}
	switch {
	case len(pos) == 1:
		fl.config = pos[0]
	case len(pos) == 0 && *fl.resume != "":
	default:
		fmt.Fprintln(stderr, "toolward run: want one CONFIG (or --resume DIR)")
		fs.Usage()
		return nil, 2, false
	}
	fs.Visit(func(f *flag.Flag) { fl.minPassSet = fl.minPassSet || f.Name == "min-pass-rate" })
	if fl.minPassSet && !(*fl.minPass >= 0 && *fl.minPass <= 1) {
		fmt.Fprintln(stderr, "toolward run: --min-pass-rate is a fraction between 0 and 1")
		return nil, 2, false
	}
	if *fl.maxFail < -1 {
		fmt.Fprintf(stderr, "toolward run: --max-fail wants a number of runs >= 0 (or -1 for no limit), got %d\n", *fl.maxFail)
		return nil, 2, false
	}
	if *fl.workers < 0 {
		fmt.Fprintf(stderr, "toolward run: -j must be a positive number of runs in flight (or 0 for the config's limits.concurrency), got %d\n", *fl.workers)
		return nil, 2, false
	}
	if !shardFlagOK("run", *fl.shard, stderr) || !filterFlagsOK("run", fl.filters, stderr) || !applyTags() {
		return nil, 2, false
	}
	if *fl.failOnBroken {
		*fl.failOnRegression = true // the strict gate keeps the other gate's checks
	}
	if *fl.failOnRegression && *fl.baseline == "" {
		fmt.Fprintln(stderr, "toolward run: --fail-on-regression (or --fail-on-broken) needs --baseline DIR")
		return nil, 2, false
	}
	if *fl.allowMissing && !*fl.failOnRegression {
		fmt.Fprintln(stderr, "toolward run: --allow-missing goes with --fail-on-regression")
		return nil, 2, false
	}
	return fl, 0, true
}

// onStopSignals handles the stop signals for the job: the first closes
// stop (the engine finishes the runs in flight), the second cancels the
// job and, should it still not return within abortGrace, exits. disarm,
// called once the engine has returned, turns that exit off (signals are
// still caught while the reports are written); release stops catching
// them.
func onStopSignals(cancel context.CancelFunc, stderr io.Writer) (stop chan struct{}, disarm, release func()) {
	stop = make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals...)
	var mu sync.Mutex
	var abort *time.Timer
	returned := false
	go func() {
		first := true
		for sig := range sigs {
			if first {
				first = false
				fmt.Fprintf(stderr, "\ntoolward: interrupted (%s); finishing the runs in flight (Ctrl-C again, or SIGTERM, to abort now)\n", signalName(sig))
				close(stop)
				continue
			}
			fmt.Fprintln(stderr, "\ntoolward: aborting")
			cancel()
			// Every loop of the engine honours ctx; should some step
			// still not return (a config that takes long to evaluate),
			// exit anyway, and let a third Ctrl-C kill at once.
			signal.Stop(sigs)
			mu.Lock()
			if !returned {
				abort = time.AfterFunc(abortGrace, func() {
					fmt.Fprintf(stderr, "toolward: still busy %s after the abort; exiting\n", abortGrace)
					os.Exit(1)
				})
			}
			mu.Unlock()
			return
		}
	}()
	disarm = func() {
		mu.Lock()
		returned = true
		if abort != nil {
			abort.Stop()
		}
		mu.Unlock()
	}
	release = func() {
		disarm()
		signal.Stop(sigs)
		close(sigs)
	}
	return stop, disarm, release
}

// finishRun writes the reports of a finished job, prints its line and
// the gates' verdicts, and returns the exit code.
func finishRun(res *engine.Result, fl *runFlags, stdout, stderr io.Writer) int {
	code := 0
	sum, err := report.Build(res.Dir)
	if err != nil {
		fmt.Fprintln(stderr, "toolward run: building the reports:", err)
		code = 1
	}
	if sum != nil {
		t := sum.Totals
		rate, _ := sum.OverallPassRate()
		fmt.Fprintf(stdout, "%d runs: %d pass, %d fail, %d error; %s\n", t.Runs, t.Pass, t.Fail, t.Error, sum.PassRateLine())
		if fl.minPassSet && rate < *fl.minPass {
			fmt.Fprintf(stderr, "toolward run: pass rate %.1f%% is below --min-pass-rate %s\n", 100*rate, strconv.FormatFloat(*fl.minPass, 'g', -1, 64))
			code = 1
		}
		if *fl.maxFail >= 0 && t.Fail > *fl.maxFail {
			fmt.Fprintf(stderr, "toolward run: %d runs failed, more than --max-fail %d\n", t.Fail, *fl.maxFail)
			code = 1
		}
	}
	fmt.Fprintln(stdout, "results:", res.Dir)
	if sum != nil {
		fmt.Fprintln(stdout, "report: ", filepath.Join(res.Dir, report.HTMLFile))
	}
	if *fl.baseline != "" {
		if c := compareBaseline(*fl.baseline, res.Dir, *fl.failOnRegression, diff.GateOptions{AllowMissing: *fl.allowMissing, FailOnBroken: *fl.failOnBroken}, stdout, stderr); c != 0 {
			code = c
		}
	}
	resumeHint := "toolward run --resume " + res.Dir
	switch {
	case res.Interrupted:
		fmt.Fprintf(stderr, "toolward run: stopped with %d of %d runs not done; continue with:\n  %s\n", res.Remaining(), res.Planned, resumeHint)
		return 1
	case res.Errors > 0 && res.Unretryable == res.Errors:
		// Resuming would send the same requests and fail the same way.
		fmt.Fprintf(stderr, "toolward run: %d runs ended in infrastructure errors that a retry cannot fix (see the errors in the report)\n", res.Errors)
		return 1
	case res.Errors > 0:
		also := ""
		if res.Unretryable > 0 {
			also = fmt.Sprintf(" (%d of them a retry cannot fix: see the report)", res.Unretryable)
		}
		fmt.Fprintf(stderr, "toolward run: %d runs ended in infrastructure errors%s; retry them with:\n  %s\n", res.Errors, also, resumeHint)
		return 1
	}
	return code
}

// compareBaseline prints the paired comparison of dir against base and
// returns 1 when it cannot compare, or when failOnRegression is set and
// the comparison finds a regression.
func compareBaseline(base, dir string, failOnRegression bool, gate diff.GateOptions, stdout, stderr io.Writer) int {
	r, err := diff.Compare(base, dir, 0.05)
	if err != nil {
		fmt.Fprintln(stderr, "toolward run: --baseline:", err)
		return 1
	}
	fmt.Fprintf(stdout, "\ncompared with %s:\n", base)
	if err := r.WriteText(stdout); err != nil {
		fmt.Fprintln(stderr, "toolward run:", err)
		return 1
	}
	if failOnRegression {
		if err := r.GateWith(gate); err != nil {
			fmt.Fprintln(stderr, "toolward run: --baseline:", err)
			return 1
		}
		writeUnderpowered(stderr, "toolward run", r)
	}
	return 0
}

// stopSignals end a run as Ctrl-C does: SIGTERM is what docker stop and
// Kubernetes send, SIGHUP what a closed terminal sends. The first of any
// finishes the runs in flight and writes the reports; a second aborts.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// signalName names a stop signal as a user sends it.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// abortGrace is how long a second Ctrl-C waits for the job to return
// before toolward exits regardless.
const abortGrace = 5 * time.Second

// lockedWriter serialises writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
