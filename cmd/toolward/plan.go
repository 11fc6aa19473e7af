package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/toolward/toolward/engine"
	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/plan"
)

func init() {
	register(&command{name: "plan", summary: "expand a run config's matrix: counts per axis, total runs", run: runPlan})
}

const planUsage = `usage: toolward plan [--filter key=glob]... [--shard i/n] [--list] [--estimate DIR] CONFIG

Expands CONFIG's matrix without running anything: the values and count of
each axis, outermost first, and the number of runs. The plan is never
materialised, so a matrix of millions of runs plans instantly. --list
prints one run per line instead: id, then the case and cell.

--estimate DIR adds what the job would cost at CONFIG's prices, giving
each planned run the mean token counts of DIR's runs of the same case and
model (else of the case, else of all of DIR's runs).

Flags:
`

func runPlan(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("plan", planUsage, true, stderr)
	var filters multiFlag
	fs.Var(&filters, "filter", "keep runs whose `key=glob` matches (repeatable)")
	shard := fs.String("shard", "", "only shard `i/n` of the plan")
	list := fs.Bool("list", false, "print the runs, one per line: id case "+strings.Join(axisNames(), " "))
	estimate := fs.String("estimate", "", "estimate the job's cost from the token counts of result directory `DIR`")
	applyTags := tagFlag(fs, "plan", stderr)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "toolward plan: want one CONFIG")
		fs.Usage()
		return 2
	}
	if !shardFlagOK("plan", *shard, stderr) || !filterFlagsOK("plan", filters, stderr) || !applyTags() {
		return 2
	}
	l, err := engine.Load(pos[0], filters, *shard)
	if err != nil {
		fmt.Fprintln(stderr, "toolward plan:", err)
		return 1
	}
	p := l.Plan
	w := bufio.NewWriterSize(stdout, 64<<10)
	defer w.Flush()
	if *list {
		for i := range p.Len() {
			r := p.Run(i)
			w.WriteString(r.ID + "\t" + r.Case.ID)
			for _, a := range cell.Axes {
				w.WriteString("\t" + a.Format(r.Cell))
			}
			w.WriteByte('\n')
		}
		return 0
	}
	fmt.Fprintf(w, "config %s (%s)\n", l.Config.Name, pos[0])
	if all := slices.Concat(l.Config.Filter, filters); len(all) > 0 {
		fmt.Fprintf(w, "  filters: %s\n", strings.Join(all, " "))
	}
	for _, a := range p.Axes() {
		fmt.Fprintf(w, "  %-13s %6d  %s\n", a.Name, len(a.Values), abbreviate(a.Values, 8))
	}
	if l.Shard.Count > 0 {
		fmt.Fprintf(w, "runs: %d (shard %s of %d)\n", p.Len(), l.Shard, p.Total())
	} else {
		fmt.Fprintf(w, "runs: %d\n", p.Len())
	}
	if *estimate != "" {
		if len(l.Config.Prices) == 0 && schema.LocalBackend(l.Config.Backend) == "" {
			w.Flush()
			fmt.Fprintf(stderr, "toolward plan: --estimate needs prices in %s (prices: {MODEL: {input: …, output: …}}, US dollars per million tokens)\n", pos[0])
			return 1
		}
		e, err := report.EstimateCost(*estimate, l.Config, func(yield func(string, string) bool) {
			for i := range p.Len() {
				r := p.Run(i)
				if !yield(r.Case.ID, r.Cell.Model) {
					return
				}
			}
		})
		if err != nil {
			w.Flush()
			fmt.Fprintln(stderr, "toolward plan:", err)
			return 1
		}
		fmt.Fprintln(w, e)
	}
	return 0
}

// abbreviate joins up to n values, then says how many more.
func abbreviate(vs []string, n int) string {
	if len(vs) <= n {
		return strings.Join(vs, ", ")
	}
	return strings.Join(vs[:n], ", ") + fmt.Sprintf(", … (%d more)", len(vs)-n)
}

// shardFlagOK reports whether the --shard value s is empty or a valid
// i/n, and otherwise explains the mistake on stderr as a usage error of
// command cmd.
func shardFlagOK(cmd, s string, stderr io.Writer) bool {
	if s == "" {
		return true
	}
	if _, err := plan.ParseShard(s); err != nil {
		fmt.Fprintf(stderr, "toolward %s: --shard: %v\n", cmd, err)
		return false
	}
	return true
}

// filterFlagsOK reports whether every --filter value parses, printing
// the first that does not (a usage error, exit 2, before any config is
// loaded).
func filterFlagsOK(cmd string, filters []string, stderr io.Writer) bool {
	for _, f := range filters {
		if _, err := plan.ParseFilter(f); err != nil {
			fmt.Fprintf(stderr, "toolward %s: --filter: %v\n", cmd, err)
			return false
		}
	}
	return true
}

// axisNames names the cell's axes in table order, the columns of
// plan --list after the id and the case.
func axisNames() []string {
	names := make([]string, len(cell.Axes))
	for i, a := range cell.Axes {
		names[i] = a.Name
	}
	return names
}
