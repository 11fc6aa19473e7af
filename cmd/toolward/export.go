package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

func init() {
	register(&command{name: "export", summary: "write a result directory's runs as CSV, one row per run", run: runExport})
}

const exportUsage = `usage: toolward export [--format csv] DIR

Export writes the runs of DIR/runs.jsonl to stdout as CSV, one row per
run (as report and diff read them: one record per run id): id, case,
tags, one column per matrix axis, tool_count, outcome, reasons (codes
joined with ;), error_kind, attempts, turns, calls, user_turns (the
user messages sent), probes (the state probes made), tokens_in,
tokens_out, model_latency_ms, tool_latency_ms, duration_ms (to the
nanosecond, no float noise), then the judge's columns. For spreadsheets
and pandas
(pandas.read_csv("runs.csv")); the full traces stay in runs.jsonl
(toolward show prints them).

Flags:
`

func runExport(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("export", exportUsage, true, stderr)
	format := fs.String("format", "csv", "output format: csv")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "toolward export: want one result directory DIR")
		return 2
	}
	if *format != "csv" {
		fmt.Fprintf(stderr, "toolward export: --format must be csv, got %q\n", *format)
		return 2
	}
	bw := bufio.NewWriterSize(stdout, 64<<10)
	out, err := report.NewRunCSV(bw)
	if err == nil {
		var st *results.ReadStats
		st, err = results.Runs(func(rec *record.Record) error { return out.Write(rec) }, pos[0])
		if err == nil && st.Records == 0 {
			err = fmt.Errorf("%s has no runs", pos[0])
		}
		if err == nil && st.BadLines > 0 {
			fmt.Fprintf(stderr, "toolward export: warning: %d lines of runs.jsonl are not records and were skipped\n", st.BadLines)
		}
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintln(stderr, "toolward export:", err)
		return 1
	}
	return 0
}
