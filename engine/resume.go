package engine

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// resumeDone compacts the runs.jsonl of the job being resumed to the pass
// and fail records of runs in l's plan, and returns their plan positions.
// Cases edited since are handled run by run (see resumer): a record whose
// case now shows the model something else is dropped, so its run runs
// again; one judged by older scoring rules is judged again, with no model
// request. The work is proportional to the records, not to the plan (each
// is located in O(1), plan.Locator). What changed is said on progress.
func resumeDone(ctx context.Context, dir string, l *Loaded, progress io.Writer) (map[int64]struct{}, error) {
	rs := &resumer{loc: plan.NewLocator(l.Plan), rules: l.Rules, seen: map[int64]bool{},
		rerun: map[string]int{}, rescored: map[string]int{}, partial: map[string]int{}, reprobe: map[string]int{}, rejudge: map[string]int{}}
	c, err := results.Compact(ctx, dir, rs.keep)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	if progress != nil {
		rs.report(progress, c)
	}
	return c.Done, nil
}

// resumer decides, record by record, what a resume keeps, and counts per
// case what it re-scored or sends to run again.
type resumer struct {
	loc   *plan.Locator
	rules map[string]*score.Rules
	seen  map[int64]bool // positions counted already (a duplicate record is not counted twice)

	rerun    map[string]int // pass or fail records dropped: the case changed what the model sees
	rescored map[string]int // records judged again under the case's current rules
	partial  map[string]int // records judged by older rules but stored in part: they run again
	reprobe  map[string]int // records whose probe results measured other probe calls: they run again
	rejudge  map[string]int // records without a verdict for a judged answer's current input: they run again
	// explained counts every record keep dropped for a reason above
	// (duplicates and error records included), which Compact counts as
	// foreign.
	explained int
}

// keep is Compact's locate: the record's plan position, or false when its
// run must run again (or is not in the plan). A record judged by older
// rules is re-scored in place.
func (r *resumer) keep(rec *record.Record) (int64, bool) {
	i, m := r.loc.Find(rec)
	scored := rec.Outcome != record.Error
	first := !r.seen[i]
	switch {
	case m == plan.Absent:
		return 0, false
	case m == plan.Changed:
		r.explained++
		if scored && first {
			r.seen[i] = true
			r.rerun[rec.Case]++
		}
		return 0, false
	case !scored:
		return i, true // Compact drops it: errors run again
	}
	ru := r.rules[rec.Case]
	if ru.StaleState(rec) {
		// Its probe results measured other probe calls (or none): only
		// running it again measures what the case now asks.
		r.explained++
		if first {
			r.seen[i] = true
			r.reprobe[rec.Case]++
		}
		return 0, false
	}
	if rec.Rules == ru.Digest {
		return i, true
	}
	if ok, _ := score.Rescorable(rec); !ok {
		r.explained++
		if first {
			r.seen[i] = true
			r.partial[rec.Case]++
		}
		return 0, false
	}
	if ru.StaleJudged(rec) > 0 {
		// A judged answer's input changed (its rubric, the judge): the
		// run runs again, which asks the judge (toolward score asks it
		// without running the model).
		r.explained++
		if first {
			r.seen[i] = true
			r.rejudge[rec.Case]++
		}
		return 0, false
	}
	ru.Score(rec)
	if first {
		r.seen[i] = true
		r.rescored[rec.Case]++
	}
	return i, true
}

// report says on progress what the resume dropped, re-scored and sends
// to run again, case by case.
func (r *resumer) report(w io.Writer, c *results.Compacted) {
	for _, id := range slices.Sorted(maps.Keys(r.rerun)) {
		fmt.Fprintf(w, "resume: case %s changed what the model sees: its %s run again\n", id, plural(r.rerun[id], "finished run"))
	}
	for _, id := range slices.Sorted(maps.Keys(r.rescored)) {
		fmt.Fprintf(w, "resume: case %s changed how runs are judged: %s re-scored, no model request\n", id, plural(r.rescored[id], "finished run"))
	}
	for _, id := range slices.Sorted(maps.Keys(r.partial)) {
		fmt.Fprintf(w, "resume: case %s changed how runs are judged, but %s stored in part (record size limits) cannot be re-scored: they run again\n", id, plural(r.partial[id], "run"))
	}
	for _, id := range slices.Sorted(maps.Keys(r.reprobe)) {
		fmt.Fprintf(w, "resume: case %s changed what its state probes call (expect.state calls, or the golden an equals probe replays): its %s run again\n", id, plural(r.reprobe[id], "finished run"))
	}
	for _, id := range slices.Sorted(maps.Keys(r.rejudge)) {
		fmt.Fprintf(w, "resume: case %s changed a judged answer's rubric or judge: its %s run again (toolward score would ask only the judge)\n", id, plural(r.rejudge[id], "finished run"))
	}
	foreign := c.Foreign - r.explained
	for _, d := range []struct {
		n         int
		what, why string
	}{
		{c.Bad, "unreadable lines", fmt.Sprintf(" (a crash mid-write, or a line over %d bytes); those runs run again", record.MaxLineBytes)},
		{c.Unknown, "records with an outcome other than pass, fail or error", "; those runs run again"},
		{foreign, "records of runs this job's plan does not hold", ""},
	} {
		if d.n > 0 {
			fmt.Fprintf(w, "resume: dropped %d %s from %s%s\n", d.n, d.what, results.RunsFile, d.why)
		}
	}
}

// plural spells n things: "1 finished run", "3 finished runs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// sameCaseIDs checks that the cases are the ones the job started with,
// by id: a resume continues a job, so it may not gain or lose cases
// (their contents may change; see resumeDone).
func sameCaseIDs(want map[string]string, cases []*schema.Case) error {
	have := make(map[string]bool, len(cases))
	for _, c := range cases {
		have[c.ID] = true
		if _, ok := want[c.ID]; !ok {
			return fmt.Errorf("case %s was added to the case files; start a new run", c.ID)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if !have[id] {
			return fmt.Errorf("case %s is gone from the case files; start a new run", id)
		}
	}
	return nil
}

// caseDigests returns the run digest (plan.RunDigest) and the rules
// digest of each case of l, by case id, as config.json keeps them.
func caseDigests(l *Loaded) (runs, rules map[string]string) {
	cases := l.Plan.Cases()
	runs = make(map[string]string, len(cases))
	rules = make(map[string]string, len(cases))
	for _, c := range cases {
		runs[c.ID] = plan.RunDigest(l.Config, c)
		if r := l.Rules[c.ID]; r != nil {
			rules[c.ID] = r.Digest
		}
	}
	return runs, rules
}
