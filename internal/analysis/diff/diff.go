package diff

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolward/toolward/internal/analysis/stats"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// Result is the comparison of a base and a new result directory.
type Result struct {
	Base, New Side
	// Alpha is the significance level for Regressed.
	Alpha float64
	// Models holds one row per model present on both sides, by name.
	Models []ModelDiff
	// Regressions are pairs that went pass → fail; Fixes fail → pass.
	Regressions []Change
	Fixes       []Change
	// Broken lists (case, model) pairs whose paired runs all passed in
	// base and all fail in new. It is descriptive: a case with few seeds
	// gets there by chance; CaseRegressions is the tested flag.
	Broken []Broken
	// CasesTested counts the (case, model) pairs with a scored run pair,
	// each tested with an exact McNemar test on its own run pairs;
	// CaseRegressions are those that regressed after Holm's correction
	// for that many tests (B > C and adjusted p < Alpha).
	CasesTested     int
	CaseRegressions []CaseTest
	// NewCases and DroppedCases are case ids present on one side only.
	NewCases     []string
	DroppedCases []string
	// Changed lists case ids present on both sides whose paired runs have
	// different run ids: the case content changed between the runs.
	Changed []string
	// Paired counts runs present on both sides; Scored those where
	// neither side errored; ErrorPairs the rest.
	Paired, Scored, ErrorPairs int
	// BaseOnly and NewOnly count runs of shared cases with no partner
	// (cells added or removed from the matrix).
	BaseOnly, NewOnly int
	// DroppedRuns counts the base's runs of DroppedCases.
	DroppedRuns int
	Warnings    []string
	// Verdicts lists every paired run scored on both sides whose verdict
	// (outcome or reasons) differs, with the cause (verdicts.go).
	Verdicts []VerdictChange
}

// Side describes one result directory.
type Side struct {
	Dir      string
	Runs     int
	BadLines int
}

// ModelDiff is one model's paired comparison. B counts pass → fail pairs,
// C fail → pass; P is the exact McNemar p-value on them, which treats run
// pairs as independent.
type ModelDiff struct {
	Model             string
	Pairs             int // scored pairs
	BasePass, NewPass int
	B, C              int
	P                 float64
	// Regressed is set when B > C and P < Alpha.
	Regressed bool
	// ByCase is the difference of pass rates (new − base) over the same
	// run pairs with its 95% interval, p-value and minimum detectable
	// difference clustered by case: runs of a case are not independent,
	// so this is the honest size of the change.
	ByCase stats.Diff
}

// CaseTest is one case's paired runs for one model: B pass → fail,
// C fail → pass, the exact McNemar p-value and its Holm-adjusted value
// over Result.CasesTested tests.
type CaseTest struct {
	Case, Model string
	Pairs, B, C int
	P, PAdj     float64
}

// BaseRate and NewRate are the pass rates over the scored pairs.
func (m ModelDiff) BaseRate() float64 { return ratio(m.BasePass, m.Pairs) }

// NewRate is the new side's pass rate over the scored pairs.
func (m ModelDiff) NewRate() float64 { return ratio(m.NewPass, m.Pairs) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Change is one pair whose outcome flipped.
type Change struct {
	Case string
	Cell record.Cell
	// Reasons are the failure codes on the failing side.
	Reasons []string
}

// Broken is a case that always passed for a model in base and always
// fails in new, over Runs paired runs.
type Broken struct {
	Case, Model string
	Runs        int
}

// Regressed reports whether the new results are worse: some model
// regressed with McNemar p < Alpha, or some case regressed for a model
// with its Holm-adjusted McNemar p < Alpha (CaseRegressions). A case that
// went from always passing to always failing (Broken) is listed but does
// not count by itself: with few seeds per case and many cases, some do so
// by chance in most comparisons.
//
// A comparison with no scored pair cannot show a regression; a gate should
// check Gate, which also fails in that case.
func (r *Result) Regressed() bool {
	for _, m := range r.Models {
		if m.Regressed {
			return true
		}
	}
	return len(r.CaseRegressions) > 0
}

// GateOptions relax Gate. The zero value is the strict gate.
type GateOptions struct {
	// AllowMissing accepts new results that lack cases or runs of the
	// base (a run filtered or sharded on purpose); by default they fail
	// the gate, since a crashed or partial run shows nothing about the
	// runs it did not do.
	AllowMissing bool
	// FailOnBroken also fails the gate on any Broken case (always passing
	// in base, always failing in new), significant or not: the strict
	// gate for a suite run with few seeds.
	FailOnBroken bool
}

// GateWith is the verdict a CI gate needs: nil when the new results can
// be trusted not to have regressed, otherwise an error saying why: no
// scored pair at all (nothing was compared, so nothing was shown), a
// regression, or runs of the base missing from the new side (unless
// opts.AllowMissing).
func (r *Result) GateWith(opts GateOptions) error {
	switch {
	case r.Scored == 0:
		return fmt.Errorf("nothing to compare: no run pairs with a scored run on the other side (%d paired, %d errored)", r.Paired, r.ErrorPairs)
	case r.Regressed():
		return fmt.Errorf("regressed")
	case opts.FailOnBroken && len(r.Broken) > 0:
		names := make([]string, 0, min(len(r.Broken), maxNamed))
		for _, b := range r.Broken[:min(len(r.Broken), maxNamed)] {
			names = append(names, fmt.Sprintf("%s (%s, %d runs)", b.Case, b.Model, b.Runs))
		}
		more := ""
		if len(r.Broken) > maxNamed {
			more = fmt.Sprintf(" and %d more", len(r.Broken)-maxNamed)
		}
		return fmt.Errorf("broken (--fail-on-broken): %d cases went from always passing to always failing: %s%s", len(r.Broken), strings.Join(names, ", "), more)
	case !opts.AllowMissing && r.DroppedRuns+r.BaseOnly > 0:
		return r.missingError()
	}
	return nil
}

// Underpowered says, for each model with more pass → fail than fail →
// pass pairs that did not reach significance, what it would take: how
// many pass → fail pairs McNemar needs beside the fail → pass ones to
// reach p < Alpha on these pairs (or that no outcome of them can), and
// the minimum detectable difference by case. Empty when no model lost
// runs, or every loss was significant. A gate that passes prints it, so a
// pass → fail that cannot count is not read as checked.
func (r *Result) Underpowered() []string {
	var out []string
	for _, m := range r.Models {
		if m.B <= m.C || m.Regressed {
			continue
		}
		need := ""
		switch b := minSignificantB(m.C, m.Pairs, r.Alpha); {
		case b < 0 && m.C == 0:
			need = fmt.Sprintf("no outcome of %d scored pairs can reach p < %g (McNemar's smallest p is %s, every pair pass → fail)", m.Pairs, r.Alpha, pval(stats.McNemarExact(m.Pairs, 0)))
		case b < 0:
			need = fmt.Sprintf("with %d fail → pass, no outcome of the other %d scored pairs can reach p < %g", m.C, m.Pairs-m.C, r.Alpha)
		default:
			need = fmt.Sprintf("reaching p < %g on these %d scored pairs takes at least %d pass → fail beside the %d fail → pass", r.Alpha, m.Pairs, b, m.C)
		}
		if !math.IsNaN(m.ByCase.MDD) {
			need += "; the smallest difference these cases detect (MDD by case) is " + mdd(m.ByCase)
		}
		out = append(out, fmt.Sprintf("%s: %d pass → fail, %d fail → pass, p %s: not significant; %s", m.Model, m.B, m.C, pval(m.P), need))
	}
	return out
}

// minSignificantB is the fewest pass → fail pairs b, beside c fail →
// pass, with McNemar p < alpha and b + c <= pairs; -1 when none.
func minSignificantB(c, pairs int, alpha float64) int {
	for b := c + 1; b+c <= pairs; b++ {
		if stats.McNemarExact(b, c) < alpha {
			return b
		}
	}
	return -1
}

// maxNamed bounds the case ids a gate error lists.
const maxNamed = 10

// missingError says which of the base's cases and runs the new side
// lacks.
func (r *Result) missingError() error {
	var parts []string
	if n := len(r.DroppedCases); n > 0 {
		names := strings.Join(r.DroppedCases[:min(n, maxNamed)], ", ")
		if n > maxNamed {
			names += fmt.Sprintf(", … (%d more)", n-maxNamed)
		}
		parts = append(parts, fmt.Sprintf("%d case(s) of the base (%d runs): %s", n, r.DroppedRuns, names))
	}
	if r.BaseOnly > 0 {
		parts = append(parts, fmt.Sprintf("%d run(s) of cases both sides ran", r.BaseOnly))
	}
	return fmt.Errorf("incomplete: the new results lack %s; a crashed or partial run cannot pass the gate: complete it (toolward run --resume NEWDIR), or pass --allow-missing if it left them out on purpose (--filter, --shard, a changed matrix)",
		strings.Join(parts, " and "))
}

// key pairs runs: the case id and the cell with the seed, without the
// tool count (which follows from the subset).
type key struct {
	Case string
	Cell record.Cell
}

type entry struct {
	id      string
	outcome record.Outcome
	reasons []string
}

// Compare pairs the runs of baseDir/runs.jsonl and newDir/runs.jsonl. alpha
// is the significance level for a model regression (0 < alpha < 1).
func Compare(baseDir, newDir string, alpha float64) (*Result, error) {
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("diff: alpha must be between 0 and 1, got %v", alpha)
	}
	r := &Result{Base: Side{Dir: baseDir}, New: Side{Dir: newDir}, Alpha: alpha}
	t := newTable()
	base, err := load(baseDir, &r.Base, &r.Warnings, t)
	if err != nil {
		return nil, err
	}
	nw, err := load(newDir, &r.New, &r.Warnings, t)
	if err != nil {
		return nil, err
	}
	r.Warnings = append(r.Warnings, serverWarnings(baseDir, newDir)...) // server.go
	p := &pairing{r: r, t: t, sameIDs: sameIDFormat(baseDir, newDir),
		baseCases: caseSet(base), newCases: caseSet(nw),
		models: map[string]*ModelDiff{}, perCase: map[caseModel]*caseRuns{}, changed: map[string]bool{}}
	r.NewCases = t.only(p.newCases, p.baseCases)
	r.DroppedCases = t.only(p.baseCases, p.newCases)
	p.walk(base, nw)
	p.test(alpha)
	r.finish()
	r.finishVerdicts(p.sameIDs) // verdicts.go
	return r, nil
}

// caseSet is the set of the cases of runs.
func caseSet(runs []run) map[uint32]bool {
	set := map[uint32]bool{}
	for i := range runs {
		set[runs[i].key.kase] = true
	}
	return set
}

// only returns the names of the cases of a that b lacks.
func (t *table) only(a, b map[uint32]bool) []string {
	var out []string
	for c := range a {
		if !b[c] {
			out = append(out, t.cases[c])
		}
	}
	return out
}

// caseModel is one case under one model, the unit of the per-case tests.
type caseModel struct{ Case, Model string }

// caseRuns counts one caseModel's scored pairs, and of them b, pass →
// fail, and c, fail → pass.
type caseRuns struct{ paired, b, c int }

// pairing is what Compare learns while it pairs the two sides.
type pairing struct {
	r                   *Result
	t                   *table
	sameIDs             bool
	baseCases, newCases map[uint32]bool
	models              map[string]*ModelDiff
	perCase             map[caseModel]*caseRuns
	changed             map[string]bool // cases whose run ids changed
}

// walk goes through the two sides, each sorted by key, together,
// counting the runs of one side only and comparing each pair.
func (p *pairing) walk(base, nw []run) {
	r := p.r
	i, j := 0, 0
	for i < len(base) || j < len(nw) {
		var c int
		switch {
		case i == len(base):
			c = 1
		case j == len(nw):
			c = -1
		default:
			c = compareCKeys(base[i].key, nw[j].key)
		}
		if c > 0 { // a run of new only
			if p.baseCases[nw[j].key.kase] {
				r.NewOnly++
			}
			j++
			continue
		}
		b := &base[i]
		i++
		if c < 0 { // a run of base only
			if p.newCases[b.key.kase] {
				r.BaseOnly++
			} else {
				r.DroppedRuns++
			}
			continue
		}
		n := &nw[j]
		j++
		p.pair(b, n)
	}
}

// pair compares the two runs of one key: a changed id, a changed
// verdict, and for a scored pair, its model's and its case's counts and
// a regression or a fix.
func (p *pairing) pair(b, n *run) {
	r, t := p.r, p.t
	k := t.pairKey(b.key)
	r.Paired++
	if !sameID(b, n) {
		p.changed[k.Case] = true
	}
	if !b.verdict() || !n.verdict() {
		r.ErrorPairs++
		return
	}
	r.Scored++
	if b.outcome != n.outcome || b.reasons != n.reasons {
		r.Verdicts = append(r.Verdicts, VerdictChange{Case: k.Case, Cell: k.Cell, Base: t.verdictOf(b), New: t.verdictOf(n), Why: why(t, b, n, p.sameIDs)})
	}
	m := p.models[k.Cell.Model]
	if m == nil {
		m = &ModelDiff{Model: k.Cell.Model}
		p.models[k.Cell.Model] = m
	}
	m.Pairs++
	bp, np := b.outcome == outPass, n.outcome == outPass
	if bp {
		m.BasePass++
	}
	if np {
		m.NewPass++
	}
	cm := caseModel{k.Case, k.Cell.Model}
	cr := p.perCase[cm]
	if cr == nil {
		cr = &caseRuns{}
		p.perCase[cm] = cr
	}
	cr.paired++
	switch {
	case bp && !np:
		m.B++
		cr.b++
		r.Regressions = append(r.Regressions, Change{Case: k.Case, Cell: k.Cell, Reasons: t.codes(n)})
	case !bp && np:
		m.C++
		cr.c++
		r.Fixes = append(r.Fixes, Change{Case: k.Case, Cell: k.Cell, Reasons: t.codes(b)})
	}
}

// test judges the counts: a McNemar test per case and model (Holm-
// adjusted: the case regressions), the cases that broke (every pair
// from pass to fail), and per model a McNemar test over its pairs and the
// paired difference clustered by case.
func (p *pairing) test(alpha float64) {
	r := p.r
	clusters := map[string][]stats.Cluster{} // model → one cluster per case
	var tests []CaseTest
	for _, k := range slices.SortedFunc(maps.Keys(p.perCase), func(x, y caseModel) int {
		return cmp.Or(cmp.Compare(x.Case, y.Case), cmp.Compare(x.Model, y.Model))
	}) {
		cr := p.perCase[k]
		if cr.b == cr.paired { // every pair went from pass to fail
			r.Broken = append(r.Broken, Broken{Case: k.Case, Model: k.Model, Runs: cr.paired})
		}
		// Per pair, new − base is +1 (fail → pass), −1 or 0.
		clusters[k.Model] = append(clusters[k.Model], stats.Cluster{Sum: float64(cr.c - cr.b), N: float64(cr.paired)})
		tests = append(tests, CaseTest{Case: k.Case, Model: k.Model, Pairs: cr.paired, B: cr.b, C: cr.c, P: stats.McNemarExact(cr.b, cr.c)})
	}
	r.CasesTested = len(tests)
	ps := make([]float64, len(tests))
	for i, t := range tests {
		ps[i] = t.P
	}
	for i, adj := range stats.Holm(ps) {
		tests[i].PAdj = adj
		if tests[i].B > tests[i].C && adj < alpha {
			r.CaseRegressions = append(r.CaseRegressions, tests[i])
		}
	}
	for _, m := range p.models {
		m.P = stats.McNemarExact(m.B, m.C)
		m.Regressed = m.B > m.C && m.P < alpha
		m.ByCase = stats.PairedDiff(clusters[m.Model])
		r.Models = append(r.Models, *m)
	}
	for c := range p.changed {
		r.Changed = append(r.Changed, c)
	}
}

// finish sorts what Compare listed and adds the warnings about the
// pairing itself.
func (r *Result) finish() {
	slices.SortFunc(r.Models, func(a, b ModelDiff) int { return cmp.Compare(a.Model, b.Model) })
	slices.Sort(r.NewCases)
	slices.Sort(r.DroppedCases)
	slices.Sort(r.Changed)
	slices.SortFunc(r.Broken, func(a, b Broken) int { return cmp.Or(cmp.Compare(a.Case, b.Case), cmp.Compare(a.Model, b.Model)) })
	sortChanges(r.Regressions)
	sortChanges(r.Fixes)
	if r.Paired == 0 {
		r.Warnings = append(r.Warnings, "no runs pair between the two directories")
	}
	if r.ErrorPairs > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d paired runs errored on one side or both and are not compared", r.ErrorPairs))
	}
}

func sortChanges(cs []Change) {
	slices.SortFunc(cs, func(a, b Change) int { return compareKeys(key{a.Case, a.Cell}, key{b.Case, b.Cell}) })
}

// order is the axis order of listed runs: the report's cell (every axis
// but the seed, in table order), then the seed; each axis orders its
// values as package schema/cell says.
var order = append(slices.DeleteFunc(cell.Names(), func(n string) bool { return n == cell.Seed }), cell.Seed)

// compareKeys orders runs by case, then cell (in order).
func compareKeys(x, y key) int {
	return cmp.Or(cmp.Compare(x.Case, y.Case), cell.Compare(x.Cell, y.Cell, order...))
}

// load reads the runs of dir/runs.jsonl, one record per run by the rule
// of results.Runs (its first pass or fail record, else its first other
// one), sorted by key, the last record of a key winning. Bad lines
// become warnings.
func load(dir string, side *Side, warnings *[]string, t *table) ([]run, error) {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("diff: %s is a file; give the result directory that holds runs.jsonl", dir)
	}
	path := filepath.Join(dir, "runs.jsonl")
	if err := results.CheckRuns(dir); err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	members, planned := planMembers(dir, warnings)
	out := make([]run, 0, planned)
	var foreign results.Foreign
	st, err := results.RunsSummary(func(rec *record.Record, _ func() (*record.Record, error)) error {
		if !members.Holds(rec) {
			foreign.Add(rec)
			return nil
		}
		out = t.add(out, rec)
		return nil
	}, dir)
	if err != nil {
		return nil, fmt.Errorf("diff: reading %s: %w", path, err)
	}
	out = settle(out)
	side.BadLines = st.BadLines
	if w := foreign.String(); w != "" {
		*warnings = append(*warnings, dir+": "+w)
	}
	for i, e := range st.Bad {
		if i == 5 {
			break
		}
		*warnings = append(*warnings, "skipped "+e.Error())
	}
	side.Runs = len(out)
	if side.BadLines > 5 {
		*warnings = append(*warnings, fmt.Sprintf("%d more bad lines in %s", side.BadLines-5, path))
	}
	return out, nil
}

// planMembers returns the test of which records are runs of the plan
// dir/config.json records (results.Members), so that a record appended
// by hand can neither pair nor stand in for a missing run; nil (every
// record) when there is no readable config.json or its plan cannot be
// rebuilt, the latter with a warning.
//
// The second result is the number of runs config.json says the
// directory planned (bounded, for sizing; 0 when unknown).
func planMembers(dir string, warnings *[]string) (*results.Members, int) {
	m, err := results.ReadMeta(dir)
	if err != nil {
		return nil, 0
	}
	ms, err := m.Members()
	if err != nil {
		*warnings = append(*warnings, fmt.Sprintf("%s: records not checked against the plan: %v", dir, err))
	}
	return ms, int(min(max(m.Planned, 0), maxPresize))
}

// maxPresize bounds the runs load makes room for before reading.
const maxPresize = 1 << 22

// keyOf pairs runs across directories: the case and the cell without the
// tool count (which a server change may move).
func keyOf(rec *record.Record) key {
	c := rec.Cell
	c.ToolCount = 0
	return key{rec.Case, c}
}
