package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolward/toolward/engine"
	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/internal/analysis/rescore"
	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

func init() {
	register(&command{name: "score", summary: "re-judge a result directory's runs with the cases as they are now, into a new directory", run: runScore})
}

const scoreUsage = `usage: toolward score [--cases PATTERN]... [--out NEWDIR] DIR

Score judges every run recorded in DIR/runs.jsonl again with the cases as
they are now, contacting no model and no MCP server, and writes a new
result directory with config.json, runs.jsonl and all the reports. DIR is
never modified. It prints how many verdicts changed, case by case; compare
the two with 'toolward diff DIR NEWDIR'.

Cases come from DIR's config (its case patterns) unless --cases gives
others. A record is judged again only when the case still shows the model
what the run was shown: a case whose prompt, system, messages, needs,
avoid or user block changed has its runs kept out (run them with 'toolward run --resume
NEWDIR'), and records of cases no longer in the case files are dropped.
Error records are copied as they were, but for those of kind judge.

A judged answer ({$judge: RUBRIC}) keeps its stored verdict while the
judge's input is unchanged; one whose input changed (an edited rubric)
is put to the config's judge again, and only then is the judge's server
needed. Score says how many it asked and how many it reused; run ids do
not change with a rubric. A run whose judge still fails after retries is
an error record of kind judge.

Exit status: 0 when every run of DIR was judged again or copied; 1 when
runs were kept out, the judge failed on some, or on an error; 2 on a
usage error.

Flags:
`

func runScore(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("score", scoreUsage, true, stderr)
	var cases multiFlag
	fs.Var(&cases, "cases", "judge with the case files matching `PATTERN` (** allowed) instead of DIR's config's; repeatable")
	out := fs.String("out", "", "write the new result directory to `NEWDIR` (new or empty); default: a new UTC-stamped directory beside DIR")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "toolward score: want one result directory DIR")
		fs.Usage()
		return 2
	}
	dir := pos[0]
	// The reports are built from the records as score writes them,
	// rather than from reading runs.jsonl back.
	rep := report.NewStream(dir)
	opts := rescore.DirOptions{Out: *out, Each: rep.Add, Judge: openJudge}
	if len(cases) > 0 {
		opts.Cases = cases
	}
	res, err := rescore.Dir(dir, opts)
	if err != nil {
		fmt.Fprintln(stderr, "toolward score:", err)
		return 1
	}
	printScored(stdout, dir, res)
	code = warnScored(stderr, res)
	sum, err := rep.Build(res.Out)
	if err != nil {
		fmt.Fprintln(stderr, "toolward score: building the reports:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\nresults: %s\nreport:  %s\n", sum.PassRateLine(), res.Out, filepath.Join(res.Out, report.HTMLFile))
	return code
}

// openJudge opens the judge of a re-scored directory's config, when a
// judged answer needs it.
func openJudge(cfg *schema.Config) (score.Asker, error) {
	return engine.OpenJudge(context.Background(), cfg, nil)
}

// printScored says what was judged again and which verdicts changed.
func printScored(w io.Writer, dir string, res *rescore.DirResult) {
	fmt.Fprintf(w, "re-scored %s of %s", plural(res.Rescored, "run"), dir)
	if res.Errors > 0 {
		fmt.Fprintf(w, " (and copied %s as they were)", plural(res.Errors, "error record"))
	}
	fmt.Fprintln(w)
	if res.JudgeAsked+res.JudgeReused > 0 {
		fmt.Fprintf(w, "  judged answers: asked the judge about %d whose input changed, reused %s\n", res.JudgeAsked, plural(res.JudgeReused, "stored verdict"))
	}
	same := 0
	for _, c := range res.Cases {
		if c.Changed() == 0 {
			same++
			continue
		}
		// A run that still fails, for other reasons, kept its verdict:
		// it is counted apart from the flips.
		line := "  " + c.Case + ": "
		if flips := c.PassToFail + c.FailToPass; flips > 0 {
			var how []string
			for _, p := range []struct {
				n    int
				what string
			}{{c.PassToFail, "pass → fail"}, {c.FailToPass, "fail → pass"}} {
				if p.n > 0 {
					how = append(how, fmt.Sprintf("%d %s", p.n, p.what))
				}
			}
			line += fmt.Sprintf("%d of %d verdicts changed (%s)", flips, c.Runs, strings.Join(how, ", "))
		} else {
			line += fmt.Sprintf("no verdict of %d changed", c.Runs)
		}
		if c.Reasons > 0 {
			line += fmt.Sprintf("; reasons changed only: %d still failing", c.Reasons)
		}
		fmt.Fprintln(w, line)
	}
	switch {
	case same == len(res.Cases):
		fmt.Fprintln(w, "  no verdict changed")
	case same > 0:
		fmt.Fprintf(w, "  no verdict changed in the other %s\n", plural(same, "case"))
	}
}

// warnScored says what was kept out or dropped, and returns the exit
// code: 1 when runs were kept out.
func warnScored(w io.Writer, res *rescore.DirResult) int {
	for _, id := range slices.Sorted(maps.Keys(res.Changed)) {
		fmt.Fprintf(w, "toolward score: case %s changed what the model sees (prompt, system, messages, needs, avoid or user): its %s cannot be re-scored and %s kept out\n",
			id, plural(res.Changed[id], "run"), isAre(res.Changed[id]))
	}
	for _, id := range slices.Sorted(maps.Keys(res.Partial)) {
		fmt.Fprintf(w, "toolward score: case %s: %s stored in part (record size limits) cannot be judged by the new rules and %s kept out\n",
			id, plural(res.Partial[id], "run"), isAre(res.Partial[id]))
	}
	for _, id := range slices.Sorted(maps.Keys(res.Reprobe)) {
		fmt.Fprintf(w, "toolward score: case %s changed what its state probes call (expect.state tool or args, or the golden an equals probe replays): the stored results of its %s measured something else, so %s kept out and must run again\n",
			id, plural(res.Reprobe[id], "run"), isAre(res.Reprobe[id]))
	}
	if n := res.KeptOut(); n > 0 {
		fmt.Fprintf(w, "toolward score: %s kept out; run them with:\n  toolward run --resume %s\n", plural(n, "run"), res.Out)
	}
	if len(res.Gone) > 0 {
		var gone []string
		n := 0
		for _, id := range slices.Sorted(maps.Keys(res.Gone)) {
			gone = append(gone, fmt.Sprintf("%s (%d)", id, res.Gone[id]))
			n += res.Gone[id]
		}
		fmt.Fprintf(w, "toolward score: dropped %s of cases no longer in the case files: %s\n", plural(n, "record"), strings.Join(gone, ", "))
	}
	for _, d := range []struct {
		n    int
		what string
	}{
		{res.NotPlanned, "records of cells the config's matrix does not hold"},
		{res.Duplicates, "duplicate records of a run"},
		{res.Bad, fmt.Sprintf("unreadable lines (a crash mid-write, or a line over %d bytes)", record.MaxLineBytes)},
		{res.Unknown, "records with an outcome other than pass, fail or error"},
	} {
		if d.n > 0 {
			fmt.Fprintf(w, "toolward score: dropped %d %s\n", d.n, d.what)
		}
	}
	if res.JudgeFailed > 0 {
		fmt.Fprintf(w, "toolward score: the judge failed on %s (error records of kind judge, not model failures); score again to ask it again\n", plural(res.JudgeFailed, "run"))
	}
	if res.KeptOut() > 0 || res.JudgeFailed > 0 {
		return 1
	}
	return 0
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
