package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

func init() {
	register(&command{name: "report", summary: "rebuild summary.json, report.md, report.html and junit.xml from runs.jsonl", run: runReport})
}

const reportUsage = `usage: toolward report DIR

Report reads DIR/runs.jsonl (and DIR/config.json when present) and writes
DIR/summary.json, DIR/report.md, DIR/report.html and DIR/junit.xml. Lines of
runs.jsonl that are not records, including lines over %d MiB, are reported
as warnings and skipped, and so are records that are not runs of the plan
DIR/config.json records (case, cell and run id must match). config.json must
be a regular file of at most %d MiB, runs.jsonl a regular file.
`

func runReport(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("report", fmt.Sprintf(reportUsage, record.MaxLineBytes>>20, results.MaxMetaBytes>>20), false, stderr)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fs.Usage()
		return 2
	}
	dir := pos[0]
	s, err := report.Build(dir)
	if err != nil {
		fmt.Fprintf(stderr, "toolward report: %v\n", err)
		return 1
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	t := s.Totals
	fmt.Fprintf(stdout, "%s: %d runs, %d pass, %d fail, %d error; %s\n", s.Title, t.Runs, t.Pass, t.Fail, t.Error, s.PassRateLine())
	for _, f := range []string{report.SummaryFile, report.MarkdownFile, report.HTMLFile, report.JUnitFile} {
		fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(dir, f))
	}
	return 0
}
