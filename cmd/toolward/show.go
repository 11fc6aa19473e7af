package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"slices"
	"strings"

	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

func init() {
	register(&command{name: "show", summary: "print the whole trace of runs of a result directory: turns, calls, answer, verdict", run: runShow})
}

const showUsage = `usage: toolward show [--format text|json] [--limit N] DIR RUN_ID
       toolward show [--format text|json] [--limit N] DIR --case ID [--filter key=glob]...

Show prints runs of DIR/runs.jsonl in full: the cell, every user message
of a conversation with who wrote it, every model turn (thinking and
text), each tool call with its arguments, confirm decision and result,
the final answer, each state probe's call, result and verdict, and the
verdict with every reason (or the infrastructure error). Nothing is
clipped but probe results (as in report.html); control characters a
model or a server wrote are shown as escapes, as in the reports.

RUN_ID is a run id as report.html, plan --list and runs.jsonl print it (a
unique prefix is enough). --case ID (a glob) with --filter key=glob
(keys as for run: the axis names and tag; and outcome=pass|fail|error)
shows every run they select, in file order, at most --limit of them.

--format json prints the selected records as they are stored, one JSON
object per line.

Exit status: 0 when some run was shown; 1 when none matched or DIR cannot
be read; 2 on a usage error.

Flags:
`

func runShow(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("show", showUsage, true, stderr)
	format := fs.String("format", "text", "output format: text or json")
	caseID := fs.String("case", "", "show the runs of the cases matching `ID` (a glob)")
	limit := fs.Int("limit", 20, "show at most `N` runs (0: all)")
	var filters multiFlag
	fs.Var(&filters, "filter", "with --case: keep runs whose `key=glob` matches (repeatable; outcome=fail too)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	usageErr := func(msg string) int {
		fmt.Fprintln(stderr, "toolward show:", msg)
		return 2
	}
	switch {
	case *format != "text" && *format != "json":
		return usageErr(fmt.Sprintf("--format must be text or json, got %q", *format))
	case *limit < 0:
		return usageErr(fmt.Sprintf("--limit must be >= 0, got %d", *limit))
	case len(pos) == 2 && (*caseID != "" || len(filters) > 0):
		return usageErr("give a RUN_ID or --case ID [--filter …], not both")
	case len(pos) == 1 && *caseID == "":
		return usageErr("want a RUN_ID after DIR, or --case ID (see -h)")
	case len(pos) != 1 && len(pos) != 2:
		return usageErr("want DIR and a RUN_ID, or DIR --case ID (see -h)")
	}
	keep, err := showSelector(pos, *caseID, filters)
	if err != nil {
		return usageErr(err.Error())
	}
	dir := pos[0]
	if err := results.CheckRuns(dir); err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			err = fmt.Errorf("%s has no %s: give a result directory (the config's output; run prints it on its report: line)", dir, results.RunsFile)
		}
		fmt.Fprintln(stderr, "toolward show:", err)
		return 1
	}
	picked, matched, ids, err := pickRuns(dir, keep, *limit, len(pos) == 2)
	if err != nil {
		fmt.Fprintln(stderr, "toolward show:", err)
		return 1
	}
	if len(pos) == 2 && len(ids) > 1 && !slices.Contains(ids, pos[1]) {
		fmt.Fprintf(stderr, "toolward show: run id prefix %q matches %d runs (%s…): give more of it\n", pos[1], len(ids), strings.Join(ids[:min(len(ids), 3)], ", "))
		return 1
	}
	if len(pos) == 2 && len(ids) > 1 {
		// An exact id among longer ones with the same prefix.
		picked = slices.DeleteFunc(picked, func(r *record.Record) bool { return r.ID != pos[1] })
	}
	if len(picked) == 0 {
		what := "no run id " + pos[len(pos)-1]
		if len(pos) == 1 {
			what = "no run of case " + *caseID
			if len(filters) > 0 {
				what += " with " + strings.Join(filters, " ")
			}
		}
		fmt.Fprintf(stderr, "toolward show: %s in %s\n", what, dir)
		return 1
	}
	if err := writeShown(stdout, picked, *format); err != nil {
		fmt.Fprintln(stderr, "toolward show:", err)
		return 1
	}
	if matched > len(picked) && len(pos) == 1 {
		fmt.Fprintf(stderr, "toolward show: %d of %d matching runs shown (--limit 0 for all, or narrow with --filter)\n", len(picked), matched)
	}
	return 0
}

// pickRuns reads the runs of dir that keep accepts: the first limit of
// them (0: all), how many matched, and with byID (a run id prefix
// selects) the ids of all that matched.
func pickRuns(dir string, keep func(*record.Record) bool, limit int, byID bool) (picked []*record.Record, matched int, ids []string, err error) {
	_, err = results.Runs(func(rec *record.Record) error {
		if !keep(rec) {
			return nil
		}
		matched++
		if byID {
			ids = append(ids, rec.ID)
		}
		if limit == 0 || len(picked) < limit {
			cp := *rec // the reader reuses rec; each line decodes into fresh slices
			picked = append(picked, &cp)
		}
		return nil
	}, dir)
	return picked, matched, ids, err
}

// writeShown writes the picked runs: as JSON lines, or as traces
// (report.WriteTrace) with a rule between them.
func writeShown(w io.Writer, picked []*record.Record, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, rec := range picked {
			if err := enc.Encode(rec); err != nil {
				return err
			}
		}
		return nil
	}
	for i, rec := range picked {
		if i > 0 {
			fmt.Fprintln(w, "\n"+strings.Repeat("─", 72)+"\n")
		}
		if err := report.WriteTrace(w, rec); err != nil {
			return err
		}
	}
	return nil
}

// showSelector returns the test a record must pass: a run id prefix
// (pos[1]), or the case glob and filters.
func showSelector(pos []string, caseID string, filters []string) (func(*record.Record) bool, error) {
	if len(pos) == 2 {
		id := pos[1]
		return func(r *record.Record) bool { return strings.HasPrefix(r.ID, id) }, nil
	}
	var fs []plan.Filter
	var outcomes []string
	for _, f := range filters {
		if v, ok := strings.CutPrefix(f, "outcome="); ok {
			if !record.KnownOutcome(v) {
				return nil, fmt.Errorf("--filter %q: outcome is pass, fail or error", f)
			}
			outcomes = append(outcomes, v)
			continue
		}
		pf, err := plan.ParseFilter(f)
		if err != nil {
			return nil, fmt.Errorf("--filter: %v", err)
		}
		fs = append(fs, pf)
	}
	fs = append(fs, plan.Filter{Key: plan.AxisCase, Globs: []string{caseID}})
	var sels []cell.Selector
	for _, f := range plan.Merge(fs) {
		s, err := cell.NewSelector(f.Key, f.Globs...)
		if err != nil {
			return nil, fmt.Errorf("--filter %s: %v", f, err)
		}
		sels = append(sels, s)
	}
	return func(r *record.Record) bool {
		if len(outcomes) > 0 && !slices.Contains(outcomes, string(r.Outcome)) {
			return false
		}
		for i := range sels {
			s := &sels[i]
			switch s.Axis {
			case "tag":
				if !slices.ContainsFunc(r.Tags, s.Match) {
					return false
				}
			case plan.AxisCase:
				if !s.Match(r.Case) {
					return false
				}
			default:
				if !s.MatchCell(r.Cell) {
					return false
				}
			}
		}
		return true
	}, nil
}
