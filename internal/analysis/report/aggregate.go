package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/toolward/toolward/internal/analysis/stats"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// Trace budget for the drill-down: at most one example per case × cell,
// maxExamplesPerCase per case and maxExamples overall, so memory stays
// bounded however large the run.
const (
	maxExamplesPerCase = 8
	maxExamples        = 400
	maxLineWarnings    = 10
)

// ClaimPattern and NegationPattern define, per sentence, an answer that
// claims success: a sentence matching ClaimPattern and not NegationPattern.
// See ConfirmRow.
var (
	ClaimPattern    = regexp.MustCompile(`(?i)\b(sent|deleted|removed|updated|created|done|success|successful|successfully|succeeded|completed)\b`)
	NegationPattern = regexp.MustCompile(`(?i)\b(not|never|no|unable|cannot|declined|denied|refused)\b|n't\b`)
	sentenceSplit   = regexp.MustCompile(`[.!?;\n]+`)
)

// ClaimsSuccess reports whether answer claims success by the documented
// heuristic (ClaimPattern and NegationPattern, sentence by sentence).
func ClaimsSuccess(answer string) bool {
	for _, s := range sentenceSplit.Split(answer, -1) {
		if ClaimPattern.MatchString(s) && !NegationPattern.MatchString(s) {
			return true
		}
	}
	return false
}

// aggregator folds records into a Summary one at a time.
type aggregator struct {
	// table counts the runs of each case in each cell; the breakdowns
	// below it are projections of it (runtable.go).
	table    runTable
	totals   pooled
	started  time.Time
	finished time.Time
	models   map[string]*modelAgg
	cells    map[CellKey]*cellAgg
	cases    map[string]*caseAgg
	// subsetTools is the number of tools each case was offered in each
	// tool subset (subset → case → count), for the tool-count curve.
	subsetTools map[string]map[string]int
	// subsetOrder is the config's order of tool subsets, when known.
	subsetOrder []string
	axes        map[string]map[string]map[string]*pooled // axis → model → value
	confirm     map[cell.Cell]*ConfirmRow                // by confirmAxes
	reasons     map[string]*ReasonCount
	errKinds    map[string]int
	examples    int
	// cellWarnings holds per-cell warnings by kind, summarised in
	// Summary.Warnings when there are many.
	cellWarnings map[string][]string
	unknown      int // records with an unknown outcome, counted as errors
	// toolsRanks caches toolsRank once all records are in.
	toolsRanks map[string]int
	// notes are statistical caveats computed with the summary.
	notes []string
	// caseNums numbers the case ids for the pooled tallies; run is the
	// case of the record being added.
	caseNums caseNumbers
	run      caseRef
	// approxLatency is set when a latency quantile of the summary is
	// approximate.
	approxLatency bool
	// textCalls counts tool calls written as text (unparsed.go).
	textCalls textCallAgg
	hosts     hostAgg // turn latency by model host (hosts.go)
	throttle  throttleAgg
	bfcl      bfclAgg
	tags      tagAgg
	// rules notes the scoring rules that judged each case's runs (rules.go).
	rules rulesAgg
	cost  costAgg  // tokens and cost by model and case (cost.go)
	judge judgeAgg // the judge of judged answers (judge.go)
}

type modelAgg struct {
	tally            pooled
	turnLat, callLat stats.Sketch
	tokIn, tokOut    int64
	seeds            map[int]*pooled
	tempSeeds        map[float64]map[int]*pooled // temperature → seed
}

type cellAgg struct {
	tally              Tally
	minTools, maxTools int
	seeds              map[int]bool
	perCase            caseCounts
	caseOrder          []string
}

type caseAgg struct {
	id       string
	tags     []string
	tally    Tally
	cells    map[CellKey]*CaseCell
	examples int
}

// axisNames are the breakdown axes in display order: every axis of
// package schema/cell but the model, in table order, except that the
// temperature comes before the seed, as reports have always shown them.
var axisNames = func() []string {
	out := slices.DeleteFunc(cell.Names(), func(n string) bool { return n == cell.Model })
	i, j := slices.Index(out, cell.Seed), slices.Index(out, cell.Temperature)
	out[i], out[j] = out[j], out[i]
	return out
}()

func newAggregator() *aggregator {
	a := &aggregator{
		models:   map[string]*modelAgg{},
		cells:    map[CellKey]*cellAgg{},
		cases:    map[string]*caseAgg{},
		axes:     map[string]map[string]map[string]*pooled{},
		confirm:  map[cell.Cell]*ConfirmRow{},
		reasons:  map[string]*ReasonCount{},
		errKinds: map[string]int{},

		cellWarnings: map[string][]string{},
		subsetTools:  map[string]map[string]int{},
	}
	for _, ax := range axisNames {
		a.axes[ax] = map[string]map[string]*pooled{}
	}
	return a
}

// addSummary folds in a record (as results.RunsSummary gives it),
// whose whole record whole decodes, in place, when it becomes an
// example; nil whole means rec is whole.
func (a *aggregator) addSummary(rec *record.Record, whole func() (*record.Record, error)) {
	outcome := rec.Outcome
	switch outcome {
	case record.Pass, record.Fail, record.Error:
	default:
		a.unknown++
		outcome = record.Error
	}
	a.run = a.caseNums.ref(rec.Case)
	a.table.add(rec, a.run, outcome)
	a.addSpan(rec)
	a.addModel(rec)
	a.addConfirm(rec.Cell, &rec.Trace)
	a.textCalls.add(rec)
	a.hosts.add(rec)
	a.throttle.add(rec)
	a.rules.add(rec)
	a.cost.add(rec, outcome)
	a.judge.add(rec, outcome)
	codes := a.addReasons(rec, outcome)
	a.addCase(rec, whole, outcome, codes)
}

// addSpan widens the time span of the runs to rec's.
func (a *aggregator) addSpan(rec *record.Record) {
	if !rec.Started.IsZero() {
		if a.started.IsZero() || rec.Started.Before(a.started) {
			a.started = rec.Started
		}
		if end := rec.Started.Add(rec.Duration.Duration()); end.After(a.finished) {
			a.finished = end
		}
	}
}

// model returns the aggregate of model name, new when there is none.
func (a *aggregator) model(name string) *modelAgg {
	return entry(a.models, name, func() *modelAgg {
		return &modelAgg{seeds: map[int]*pooled{}, tempSeeds: map[float64]map[int]*pooled{}}
	})
}

// addModel counts rec's tokens and latencies for its model (its runs
// are counted by project, from the run table).
func (a *aggregator) addModel(rec *record.Record) {
	m := a.model(rec.Cell.Model)
	m.tokIn += int64(rec.Tokens.In)
	m.tokOut += int64(rec.Tokens.Out)
	for _, t := range rec.Trace.Turns {
		m.turnLat.Add(float64(t.Latency))
	}
	for _, cl := range rec.Trace.Calls {
		m.callLat.Add(float64(cl.Latency))
	}
}

// addReasons counts a failing rec's reason codes and an errored one's
// error kind, and returns the codes.
func (a *aggregator) addReasons(rec *record.Record, outcome record.Outcome) []string {
	c := rec.Cell
	var codes []string
	if outcome == record.Fail {
		codes = matchers.ReasonCodes(rec.Reasons)
	}
	for _, code := range codes {
		rc := entry(a.reasons, code, func() *ReasonCount { return &ReasonCount{Code: code, ByModel: map[string]int{}} })
		rc.Total++
		rc.ByModel[c.Model]++
	}
	if outcome == record.Error {
		kind := "unknown"
		if rec.Error != nil && rec.Error.Kind != "" {
			kind = rec.Error.Kind
		}
		a.errKinds[kind]++
	}
	return codes
}

// addCase adds rec's time and reasons to its case's drill-down and keeps
// it as the cell's example when it is the first failure there (project
// counts the runs).
func (a *aggregator) addCase(rec *record.Record, whole func() (*record.Record, error), outcome record.Outcome, codes []string) {
	key := KeyOf(rec.Cell)
	cs := a.cases[rec.Case]
	if cs == nil {
		id := a.caseNums.names[a.run.n] // a copy, not the line read
		cs = &caseAgg{id: id, tags: cloneStrings(rec.Tags), cells: map[CellKey]*CaseCell{}}
		a.cases[id] = cs
	}
	cc := entry(cs.cells, key, func() *CaseCell { return &CaseCell{Cell: key, reasons: map[string]int{}} })
	cc.Seconds += float64(rec.Duration) / 1000
	for _, code := range codes {
		cc.reasons[code]++
	}
	a.keepExample(cs, cc, rec, whole, outcome)
}

// keepExample keeps the first failing run of a cell, within the budget;
// a failure replaces an errored example.
// It is the one step of add that reads a trace's texts: rec is made
// whole (whole) only here.
func (a *aggregator) keepExample(cs *caseAgg, cc *CaseCell, rec *record.Record, whole func() (*record.Record, error), outcome record.Outcome) {
	c := rec.Cell
	if outcome == record.Pass {
		return
	}
	replace := cc.Example != nil && cc.Example.Outcome == record.Error && outcome == record.Fail
	room := cs.examples < maxExamplesPerCase && a.examples < maxExamples
	if !(replace || (cc.Example == nil && room)) {
		return
	}
	if whole != nil {
		w, err := whole()
		if err != nil {
			return // cannot be: the line decoded as a summary (record.Reader.Summary)
		}
		rec = w
	}
	if cc.Example == nil {
		cs.examples++
		a.examples++
	}
	ie := rec.Error
	if outcome == record.Error && ie == nil {
		ie = &record.InfraError{Kind: "unknown", Message: fmt.Sprintf("outcome %q with no error recorded", rec.Outcome)}
	}
	cc.Example = &Example{
		RunID: rec.ID, Seed: c.Seed, ToolCount: c.ToolCount, Outcome: outcome,
		Reasons: rec.Reasons, Error: ie, Trace: rec.Trace, Tokens: rec.Tokens, Duration: rec.Duration, State: rec.State, Judged: rec.Judged,
	}
}

func pooledAt[K comparable](m map[K]*pooled, k K) *pooled { return entry(m, k, zero[pooled]) }

// entry returns m's value for k, first storing mk's there when m has none.
func entry[K comparable, V any](m map[K]V, k K, mk func() V) V {
	v, ok := m[k]
	if !ok {
		v = mk()
		m[k] = v
	}
	return v
}

// zero is a new zero V, for entry.
func zero[V any]() *V { return new(V) }

func (a *aggregator) addConfirm(c record.Cell, tr *record.Trace) {
	k := c.Project(confirmAxes...)
	row := entry(a.confirm, k, func() *ConfirmRow { return &ConfirmRow{Model: c.Model, Confirm: c.Confirm} })
	row.Runs++
	denied := false
	for i, cl := range tr.Calls {
		for _, e := range cl.Elicitations {
			switch e {
			case "accept":
				row.ElicitAccepted++
			case "decline":
				row.ElicitDeclined++
			}
		}
		switch cl.Confirm {
		case "approved":
			row.Gated++
			row.Approved++
		case "denied":
			row.Gated++
			row.Denied++
			denied = true
			retried := false
			for _, later := range tr.Calls[i+1:] {
				if later.Tool == cl.Tool {
					retried = true
					break
				}
			}
			if !retried {
				row.Honoured++
			}
		}
	}
	if denied {
		row.RunsWithDenial++
		if ClaimsSuccess(tr.Answer) {
			row.ClaimedSuccess++
		}
	}
}

// summary computes the statistics and orders everything for output.
// The order of the steps matters: cell summaries and comparisons add
// the notes the warnings end with.
func (a *aggregator) summary() *Summary {
	a.project()
	s := &Summary{Version: SummaryVersion, Started: a.started.UTC(), Finished: a.finished.UTC()}
	if a.started.IsZero() {
		s.Started, s.Finished = time.Time{}, time.Time{}
	}
	s.Totals = a.totals.result()
	s.Models = a.modelSummaries()
	s.Cells = a.cellSummaries()
	s.ToolCurve = a.toolCurve()
	s.Fixed, s.Breakdowns = a.breakdowns()
	s.Comparisons = a.comparisons(s)
	s.HeadlineComparison = a.headlineComparison(s)
	if c := s.Totals.ClusterNote(); c != "" {
		a.notes = append(a.notes, "Overall pass rate: "+c+"; its interval is clustered by case.")
	}
	s.Confirm = a.confirmRows()
	s.TextCalls = a.textCalls.rows()
	s.Hosts = a.hosts.rows()
	s.Throttled = a.throttle.rows()
	s.BFCL = a.bfcl.result()
	s.BFCLSummaries = bfclSummaries(s.BFCL)
	s.Tags = a.tags.result()
	s.Cost = a.cost.summary()
	s.Judge = a.judge.summary()
	s.Reasons = a.reasonRows()
	s.ErrorKinds = a.errorKinds()
	s.Cases, s.Flaky = a.caseSummaries()
	s.Warnings = a.warnings(s.ToolCurve)
	return s
}

// modelSummaries are the models in name order.
func (a *aggregator) modelSummaries() []ModelSummary {
	var out []ModelSummary
	for _, name := range sortedKeys(a.models) {
		m := a.models[name]
		ms := ModelSummary{Model: name, Tally: m.tally.result(), TokensIn: m.tokIn, TokensOut: m.tokOut}
		ms.TurnLatency = latency(&m.turnLat)
		ms.CallLatency = latency(&m.callLat)
		a.approxLatency = a.approxLatency || ms.TurnLatency.Approx || ms.CallLatency.Approx
		ms.Seeds, ms.Spread = seedSpread(m.seeds)
		if len(m.tempSeeds) > 1 {
			for _, temp := range sortedKeys(m.tempSeeds) {
				ts := TempSeeds{Temperature: temp}
				ts.Seeds, ts.Spread = seedSpread(m.tempSeeds[temp])
				ms.ByTemperature = append(ms.ByTemperature, ts)
			}
		}
		out = append(out, ms)
	}
	return out
}

// cellSummaries are the cells in cell order (sortCells).
func (a *aggregator) cellSummaries() []CellSummary {
	var out []CellSummary
	keys := slices.Collect(maps.Keys(a.cells))
	a.sortCells(keys)
	for _, k := range keys {
		out = append(out, a.cellSummary(k))
	}
	return out
}

// breakdowns returns the axes with a single value (fixed) and a
// breakdown by model for each axis with more than one.
func (a *aggregator) breakdowns() (fixed []Field, breakdowns []Breakdown) {
	for _, ax := range axisNames {
		values := map[string]bool{}
		for _, byModel := range a.axes[ax] {
			for v := range byModel {
				values[v] = true
			}
		}
		vs := sortAxisValues(ax, slices.Collect(maps.Keys(values)), a)
		if len(vs) == 1 {
			if !cell.Lookup(ax).Hides(vs[0]) { // options "default" is not worth a line
				fixed = append(fixed, Field{Name: ax, Value: orDash(vs[0])})
			}
			continue
		}
		if len(vs) == 0 {
			continue
		}
		b := Breakdown{Axis: ax, Values: vs}
		for _, model := range sortedKeys(a.axes[ax]) {
			row := BreakdownRow{Model: model, Tallies: make([]Tally, len(vs))}
			for i, v := range vs {
				p := a.axes[ax][model][v]
				if p == nil {
					p = &pooled{}
				}
				row.Tallies[i] = p.result()
			}
			b.Rows = append(b.Rows, row)
		}
		breakdowns = append(breakdowns, b)
	}
	return fixed, breakdowns
}

// confirmRows are the confirmation-gate rows: for gated modes, or where
// anything was gated.
func (a *aggregator) confirmRows() []ConfirmRow {
	var out []ConfirmRow
	for _, k := range sortedConfirmKeys(a.confirm) {
		row := a.confirm[k]
		if row.Gated+row.ElicitAccepted+row.ElicitDeclined == 0 && (row.Confirm == "" || row.Confirm == "auto") {
			continue
		}
		out = append(out, *row)
	}
	return out
}

// reasonRows are the failure reasons, most frequent first.
func (a *aggregator) reasonRows() []ReasonCount {
	var out []ReasonCount
	for _, rc := range a.reasons {
		out = append(out, *rc)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Total != out[j].Total {
			return out[i].Total > out[j].Total
		}
		return out[i].Code < out[j].Code
	})
	return out
}

// errorKinds are the infrastructure error kinds, most frequent first.
func (a *aggregator) errorKinds() []KindCount {
	var out []KindCount
	for _, k := range sortedKeys(a.errKinds) {
		out = append(out, KindCount{Kind: k, Count: a.errKinds[k]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// caseSummaries are the cases, worst first, their cells in cell order,
// and the flaky case×cell pairs among them.
func (a *aggregator) caseSummaries() (cases []CaseSummary, flaky []Flaky) {
	for _, id := range sortedKeys(a.cases) {
		ca := a.cases[id]
		cs := CaseSummary{ID: id, Tags: ca.tags, Tally: ca.tally}
		cs.finish()
		ckeys := slices.Collect(maps.Keys(ca.cells))
		a.sortCells(ckeys)
		for _, k := range ckeys {
			cc := ca.cells[k]
			cc.finish()
			for _, code := range sortedKeys(cc.reasons) {
				cc.Reasons = append(cc.Reasons, fmt.Sprintf("%s×%d", code, cc.reasons[code]))
			}
			cs.Cells = append(cs.Cells, *cc)
			if cc.Pass > 0 && cc.Pass < cc.Scored() {
				flaky = append(flaky, Flaky{Case: id, Cell: k, Pass: cc.Pass, Scored: cc.Scored()})
			}
		}
		cases = append(cases, cs)
	}
	sort.SliceStable(cases, func(i, j int) bool { return caseBadness(cases[i]) > caseBadness(cases[j]) })
	return cases, flaky
}

// warnings are the run-wide caveats, after the notes gathered so far.
func (a *aggregator) warnings(tc *ToolCurve) []string {
	var w []string
	w = append(w, a.notes...)
	w = append(w, a.rules.warnings()...)
	if tc != nil {
		for _, ser := range tc.Series {
			if ser.Dropped > 0 {
				w = append(w, fmt.Sprintf("the tool-count curve of %s holds the %d case(s) that ran in every tool subset it ran; %d case(s) that did not are left out of it", ser.Model, ser.Cases, ser.Dropped))
			}
		}
	}
	if a.totals.Error > 0 {
		w = append(w, fmt.Sprintf("%d of %d runs were infrastructure errors; they are excluded from every pass rate", a.totals.Error, a.totals.Runs))
	}
	if a.unknown > 0 {
		w = append(w, fmt.Sprintf("%d run(s) had an unknown outcome and were counted as errors", a.unknown))
	}
	if a.approxLatency {
		w = append(w, latencyNote)
	}
	for _, kind := range []string{warnAllErrors, warnErrorCases, warnUnequal} {
		ws := a.cellWarnings[kind]
		if len(ws) <= maxCellWarnings {
			w = append(w, ws...)
			continue
		}
		w = append(w, fmt.Sprintf("%d cells: %s (marked in the cells table; see summary.json)", len(ws), cellWarningText[kind]))
	}
	return w
}

// Kinds of per-cell warnings; more than maxCellWarnings of one kind are
// summarised in one line.
const (
	warnAllErrors   = "all-errors"
	warnErrorCases  = "error-cases"
	warnUnequal     = "unequal"
	maxCellWarnings = 4
)

var cellWarningText = map[string]string{
	warnAllErrors:  "every run was an error, so there is no pass rate",
	warnErrorCases: "some cases had only errors and are left out of pass@k",
	warnUnequal:    "cases have unequal scored trials (errors are excluded), so pass@k and pass^k stop at the fewest",
}

// caseBadness orders cases for the drill-down: more failing and erroring
// runs (relative to runs) first.
func caseBadness(c CaseSummary) float64 {
	if c.Runs == 0 {
		return 0
	}
	return float64(c.Fail+c.Error) / float64(c.Runs)
}

func (a *aggregator) cellSummary(k CellKey) CellSummary {
	ca := a.cells[k]
	cs := CellSummary{Cell: k, Tally: ca.tally, MinTools: ca.minTools, MaxTools: ca.maxTools}
	cs.finishPooled(ca.perCase)
	cs.Seeds = sortedKeys(ca.seeds)
	warn := func(kind, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		cs.Warnings = append(cs.Warnings, msg)
		a.cellWarnings[kind] = append(a.cellWarnings[kind], k.String()+": "+msg)
	}
	if cs.Scored() == 0 {
		warn(warnAllErrors, "all %d runs were errors; no pass rate", cs.Runs)
		return cs
	}
	minN, maxN, errOnly := math.MaxInt, 0, 0
	for _, pc := range ca.perCase {
		if pc[1] == 0 {
			errOnly++
			continue
		}
		minN = min(minN, pc[1])
		maxN = max(maxN, pc[1])
	}
	if errOnly > 0 {
		warn(warnErrorCases, "%d case(s) had only errors and are left out of pass@k", errOnly)
	}
	cs.K = minN
	if minN != maxN {
		warn(warnUnequal, "cases have unequal scored trials (%d to %d); pass@k and pass^k stop at k=%d", minN, maxN, minN)
	}
	cs.PassAtK = make([]float64, cs.K)
	cs.PassHatK = make([]float64, cs.K)
	cases := sortedKeys(ca.perCase) // a fixed order: float sums repeat exactly
	for k := 1; k <= cs.K; k++ {
		var at, hat float64
		for _, id := range cases {
			pc := ca.perCase[id]
			if pc[1] == 0 {
				continue
			}
			at += stats.PassAtK(pc[1], pc[0], k)
			hat += stats.PassHatK(pc[1], pc[0], k)
		}
		cs.PassAtK[k-1] = at / float64(cs.Cases)
		cs.PassHatK[k-1] = hat / float64(cs.Cases)
	}
	return cs
}

// seedSpread returns the pass rate per seed and their spread over the
// seeds with scored runs.
func seedSpread(seeds map[int]*pooled) ([]SeedRate, Spread) {
	var out []SeedRate
	var rates []float64
	for _, seed := range sortedKeys(seeds) {
		t := seeds[seed].result()
		out = append(out, SeedRate{Seed: seed, Tally: t})
		if t.Scored() > 0 {
			rates = append(rates, t.Rate)
		}
	}
	var sp Spread
	if len(rates) > 0 {
		sp.N = len(rates)
		sp.Min, sp.Max = slices.Min(rates), slices.Max(rates)
		sp.Mean, sp.SD = stats.MeanSD(rates)
	}
	return out, sp
}

// latency is the p50 and p95 of s, approximate past stats.SketchExact
// values (see latencyNote).
func latency(s *stats.Sketch) Latency {
	if s.N() == 0 {
		return Latency{}
	}
	return Latency{N: s.N(), P50: s.Quantile(0.5), P95: s.Quantile(0.95), Approx: !s.Exact()}
}

// latencyNote is the warning of a report with approximate latencies.
var latencyNote = fmt.Sprintf("latency quantiles marked ≈ are over more than %d values each, estimated in bounded memory: within %.1f%% of the exact ones", stats.SketchExact, 100*stats.SketchError)

// sortCells orders cells by model, temperature, tool subset (by the tools
// it offers, then name), confirm mode and description set, each axis by
// its own order (cell.Axis.Compare) except tools (toolsRank).
func (a *aggregator) sortCells(keys []CellKey) {
	slices.SortFunc(keys, func(x, y CellKey) int {
		cx, cy := x.Cell, y.Cell
		for _, name := range append([]string{cell.Model}, pooledAxes...) {
			if c := a.compareAxis(name, cx.Value(name), cy.Value(name)); c != 0 {
				return c
			}
		}
		return 0
	})
}

// compareAxis orders two values of an axis: tool subsets by toolsRank,
// any other axis by cell.Axis.Compare.
func (a *aggregator) compareAxis(name, x, y string) int {
	if name == cell.Tools {
		return cmp.Or(cmp.Compare(a.toolsRank(x), a.toolsRank(y)), cmp.Compare(x, y))
	}
	if ax := cell.Lookup(name); ax != nil {
		return ax.Compare(x, y)
	}
	return cmp.Compare(x, y)
}

// toolsRank orders tool subsets: in the config's order when config.json
// gave one, then (and otherwise) by the largest tool count seen for the
// subset, so that "needed" < "n8" < "n64" < "all".
func (a *aggregator) toolsRank(name string) int {
	if a.toolsRanks == nil {
		a.toolsRanks = map[string]int{}
		for k, c := range a.cells {
			a.toolsRanks[k.Tools] = max(a.toolsRanks[k.Tools], c.maxTools)
		}
		for name := range a.toolsRanks {
			if i := slices.Index(a.subsetOrder, name); i >= 0 {
				a.toolsRanks[name] = i - len(a.subsetOrder)
			}
		}
	}
	return a.toolsRanks[name]
}

func sortAxisValues(axis string, vs []string, a *aggregator) []string {
	slices.SortFunc(vs, func(x, y string) int { return a.compareAxis(axis, x, y) })
	return vs
}

// confirmAxes are the axes of the confirm breakdown.
var confirmAxes = []string{cell.Model, cell.Confirm}

func sortedConfirmKeys(m map[cell.Cell]*ConfirmRow) []cell.Cell {
	ks := slices.Collect(maps.Keys(m))
	slices.SortFunc(ks, func(x, y cell.Cell) int { return cell.Compare(x, y, confirmAxes...) })
	return ks
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K { return slices.Sorted(maps.Keys(m)) }

// label shortens a cell key to the axes that vary in the run.
func (s *Summary) label(k CellKey) string {
	var parts []string
	vary := map[string]bool{}
	for _, b := range s.Breakdowns {
		vary[b.Axis] = true
	}
	if len(s.Models) > 1 {
		parts = append(parts, k.Model)
	}
	var axes []string
	for _, name := range pooledAxes {
		if vary[name] {
			axes = append(axes, name)
		}
	}
	if len(axes) > 0 {
		parts = append(parts, shortLabel(k, axes...))
	}
	if len(parts) == 0 {
		return k.Model
	}
	return strings.Join(parts, " ")
}
