package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

func init() {
	register(&command{name: "merge", summary: "join the result directories of shards into one, with reports", run: runMerge})
}

const mergeUsage = `usage: toolward merge OUT DIR...

Joins result directories written by 'toolward run --shard i/n' of one
config into the new directory OUT: it checks they ran the same config,
cases, scoring rules, filters and tool list (the MCP server's tools, as
config.json records them), keeps one record per run id (a pass or fail over an
error), and builds the reports. Records that are not runs of the shards'
plan (config.json's matrix and case digests: case, cell and run id must
match) are left out with a warning. Exits 1 when a shard is missing (OUT is
still written).
`

func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("merge", mergeUsage, false, stderr)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) < 2 {
		fmt.Fprintln(stderr, "toolward merge: want OUT and at least one DIR")
		fs.Usage()
		return 2
	}
	out, dirs := pos[0], pos[1:]
	// The reports are built from the records as merge writes them,
	// rather than from reading runs.jsonl back.
	rep := report.NewStream(dirs[0])
	res, err := results.MergeEach(out, dirs, rep.Add)
	if err != nil {
		fmt.Fprintln(stderr, "toolward", err)
		return 1
	}
	fmt.Fprintf(stdout, "merged %d directories: %d runs (%d error), %d duplicates dropped\n", len(dirs), res.Runs, res.Errors, res.Duplicates)
	code = 0
	if res.Bad > 0 {
		fmt.Fprintf(stderr, "toolward merge: skipped %d unreadable lines (a crash mid-write, or a line over %d bytes)\n", res.Bad, record.MaxLineBytes)
	}
	if w := res.Foreign.String(); w != "" {
		fmt.Fprintf(stderr, "toolward merge: %s\n", w)
	}
	if res.Unknown > 0 {
		fmt.Fprintf(stderr, "toolward merge: skipped %d records with an outcome other than pass, fail or error\n", res.Unknown)
	}
	if len(res.MissingShards) > 0 {
		fmt.Fprintf(stderr, "toolward merge: missing shards %s; the merged result is incomplete\n", strings.Join(res.MissingShards, ", "))
		code = 1
	}
	sum, err := rep.Build(out)
	if err != nil {
		fmt.Fprintln(stderr, "toolward merge: building the reports:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\nresults: %s\n", sum.PassRateLine(), out)
	return code
}
