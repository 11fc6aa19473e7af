package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/toolward/toolward/internal/analysis/stats"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// SummaryVersion is the format version of summary.json.
//
// Version 2: the lo/hi of every pooled rate (totals, models, cells, axis
// values, seeds, tool-curve points) are the 95% interval clustered by case,
// with "interval": "cluster", the case count, the effective sample size
// and the naive Wilson bounds beside them; one case's rates keep Wilson
// ("interval": "wilson"). New: "comparisons" (paired differences between
// the values of each axis), "headline_comparison", and "tool_curve" is now
// an object plotting tool subsets over a fixed set of cases.
const SummaryVersion = 2

// Summary is everything the reports show, computed from runs.jsonl alone.
// It is written as summary.json; the failing traces kept for the drill-down
// are not (they are in runs.jsonl).
type Summary struct {
	Version int     `json:"version"`
	Title   string  `json:"title"`          // config name, or the directory name
	Meta    []Field `json:"meta,omitempty"` // selected config.json facts, in a stable order
	// Started and Finished bound the runs (earliest start, latest end).
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
	// Rescored says where the verdicts came from when `toolward score`
	// wrote this directory (config.json scored_from); nil otherwise.
	Rescored *Rescored `json:"rescored,omitempty"`
	// Dir is the result directory as the command that wrote the reports
	// was given it (from its working directory, usually the suite's
	// root): the toolward show commands the reports print name it.
	Dir string `json:"-"`

	Totals Tally `json:"totals"`
	// Fixed lists the axes with a single value in the whole run, e.g.
	// {Name: "temperature", Value: "0"}; Breakdowns cover the others.
	Fixed  []Field        `json:"fixed,omitempty"`
	Models []ModelSummary `json:"models"`
	Cells  []CellSummary  `json:"cells"`
	// ToolCurve is the pass rate per tool subset over the cases that ran
	// in every subset; nil with fewer than two subsets.
	ToolCurve  *ToolCurve  `json:"tool_curve,omitempty"`
	Breakdowns []Breakdown `json:"breakdowns,omitempty"`
	// Comparisons are paired differences between two values of an axis
	// on the same cases; HeadlineComparison is the one between the two
	// best models, when there are several.
	Comparisons        []Comparison  `json:"comparisons,omitempty"`
	HeadlineComparison *Comparison   `json:"headline_comparison,omitempty"`
	Confirm            []ConfirmRow  `json:"confirm,omitempty"`
	Reasons            []ReasonCount `json:"reasons,omitempty"`
	TextCalls          []TextCallRow `json:"text_calls,omitempty"`     // per model, when a run had tool calls written as text (unparsed.go)
	Hosts              []HostRow     `json:"hosts,omitempty"`          // turn latency by model host, with two or more (hosts.go)
	Throttled          []ThrottleRow `json:"throttled,omitempty"`      // rate limiting by model host (throttle.go)
	Tags               []TagRow      `json:"tags,omitempty"`           // pass rate per model and tag (tags.go)
	BFCL               []BFCLRow     `json:"bfcl,omitempty"`           // accuracy per BFCL category, for an imported BFCL suite (bfcl.go)
	BFCLSummaries      []BFCLSummary `json:"bfcl_summaries,omitempty"` // BFCL's summary columns per model (bfclsummary.go)
	Cost               *Cost         `json:"cost,omitempty"`           // with prices in the config (cost.go)
	Judge              *JudgeSummary `json:"judge,omitempty"`          // the judge of judged answers, apart from the models (judge.go)
	ErrorKinds         []KindCount   `json:"error_kinds,omitempty"`
	Flaky              []Flaky       `json:"flaky,omitempty"`
	Cases              []CaseSummary `json:"cases"`
	Warnings           []string      `json:"warnings,omitempty"`
	BadLines           int           `json:"bad_lines,omitempty"` // lines of runs.jsonl that were not records
	Duplicates         int           `json:"duplicates,omitempty"`
	// Foreign counts the records of runs.jsonl left out because they are
	// not runs of the plan config.json records (results.Members).
	Foreign int `json:"foreign,omitempty"`
}

// Rescored is the origin of a re-scored directory: the result directory
// `toolward score` judged again (as it was named then) and when.
type Rescored struct {
	From string    `json:"from"`
	At   time.Time `json:"at,omitzero"`
}

// Text says "re-scored from DIR on 2026-12-01 10:00:00Z", with from
// written by code (an escaper for DIR: each format has its own).
func (r *Rescored) Text(code func(string) string) string {
	s := "re-scored from " + code(r.From)
	if !r.At.IsZero() {
		s += " on " + r.At.UTC().Format("2006-01-02 15:04:05Z")
	}
	return s
}

// OverallPassRate returns the pass rate over all scored runs (pass+fail;
// errors excluded) and the number of scored runs. With no scored runs the
// rate is 0.
func (s *Summary) OverallPassRate() (rate float64, scored int) {
	return s.Totals.Rate, s.Totals.Scored()
}

// PassRateLine is the headline for a terminal, e.g. "pass rate 69.4%
// [58.1, 79.0] over 288 scored runs of 46 cases (95% CI clustered by
// case)", or "no scored runs"; when scored runs wrote tool calls as text
// the server did not parse, it goes on to say how many (TextCallsLine).
func (s *Summary) PassRateLine() string {
	line := s.passRate()
	if tc := s.TextCallsLine(); tc != "" {
		line += "; " + tc
	}
	return line
}

func (s *Summary) passRate() string {
	t := s.Totals
	switch {
	case t.Scored() == 0:
		return "no scored runs"
	case t.Interval == IntervalCluster:
		return fmt.Sprintf("pass rate %.1f%% [%.1f, %.1f] over %d scored runs of %d cases (95%% CI clustered by case)", 100*t.Rate, 100*t.Lo, 100*t.Hi, t.Scored(), t.Cases)
	}
	return fmt.Sprintf("pass rate %.1f%% [%.1f, %.1f] over %d scored runs (95%% Wilson CI)", 100*t.Rate, 100*t.Lo, 100*t.Hi, t.Scored())
}

// HasElicitations reports whether any run answered a server elicitation.
func (s *Summary) HasElicitations() bool {
	for _, c := range s.Confirm {
		if c.ElicitAccepted+c.ElicitDeclined > 0 {
			return true
		}
	}
	return false
}

// Field is a name and a display value.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Tally counts outcomes and holds the pass rate over scored runs with its
// 95% interval [Lo, Hi]. With no scored runs Rate is 0 and [Lo, Hi] is
// [0, 1].
//
// A rate pooled over cases (a model, an axis value, a cell, the totals)
// has Interval "cluster": the interval treats the case as the unit of
// sampling (stats.ClusteredRate), Cases and EffectiveN say how much
// independent evidence there is, and Naive keeps the Wilson interval
// that would treat every run as an independent coin flip. The runs of one
// case, or a pooled rate with a single case, have Interval "wilson".
type Tally struct {
	Runs     int     `json:"runs"`
	Pass     int     `json:"pass"`
	Fail     int     `json:"fail"`
	Error    int     `json:"error"`
	Rate     float64 `json:"rate"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Interval string  `json:"interval"`
	// Cases counts the cases with a scored run (pooled rates only).
	Cases      int     `json:"cases,omitempty"`
	EffectiveN float64 `json:"effective_n,omitempty"`
	Naive      *Bounds `json:"naive,omitempty"`
}

// Bounds is an interval.
type Bounds struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Interval kinds of a Tally.
const (
	IntervalWilson  = "wilson"
	IntervalCluster = "cluster"
	// IntervalMover is a weighted sum's interval made from its parts'
	// intervals (stats.WeightedSum): BFCL summaries.
	IntervalMover = "mover"
)

// Scored is Pass + Fail: the runs a pass rate is computed over.
func (t Tally) Scored() int { return t.Pass + t.Fail }

// finish computes the rate and its Wilson interval over runs: for the
// runs of one case.
func (t *Tally) finish() {
	t.Lo, t.Hi = stats.Wilson(t.Pass, t.Scored(), stats.Z95)
	t.Interval = IntervalWilson
	t.Rate = 0
	if n := t.Scored(); n > 0 {
		t.Rate = float64(t.Pass) / float64(n)
	}
}

// finishPooled computes the rate and its interval clustered by case from
// the per-case counts ({pass, scored}); with fewer than two cases it is
// the Wilson interval.
func (t *Tally) finishPooled(perCase caseCounts) { t.finishClusters(perCase.clusters(nil)) }

// finishClusters is finishPooled with the cases given as clusters, in
// case order.
func (t *Tally) finishClusters(cl []stats.Cluster) {
	t.finish()
	ri := stats.ClusteredRate(cl)
	t.Cases = ri.Cases
	if !ri.Clustered {
		return
	}
	t.Naive = &Bounds{t.Lo, t.Hi}
	t.Lo, t.Hi = ri.Lo, ri.Hi
	t.Interval = IntervalCluster
	t.EffectiveN = math.Round(10*ri.EffectiveN) / 10
}

// ClusterNote returns a sentence for a pooled rate whose clustered
// interval is much wider (at least 1.5 times) than the naive one, such as
// "runs of a case agree: the effective sample is about 41 independent
// runs from 46 cases, not 460 runs", or "" when clustering changes little.
func (t Tally) ClusterNote() string {
	if t.Interval != IntervalCluster || t.Naive == nil {
		return ""
	}
	naive := t.Naive.Hi - t.Naive.Lo
	if naive <= 0 || (t.Hi-t.Lo) < clusterNoteRatio*naive {
		return ""
	}
	return fmt.Sprintf("runs of a case agree: the effective sample is about %.0f independent runs from %d cases, not %d runs", t.EffectiveN, t.Cases, t.Scored())
}

// clusterNoteRatio is how much wider than the naive Wilson interval the
// clustered interval must be for the reports to say so in words.
const clusterNoteRatio = 1.5

// caseCounts holds {pass, scored} per case id, for the cells (the pooled
// tallies count by case number instead).
type caseCounts map[string]*[2]int

// clusters returns the cases with scored runs as stats clusters, only
// those in keep when keep is not nil.
func (cc caseCounts) clusters(keep map[string]bool) []stats.Cluster {
	out := make([]stats.Cluster, 0, len(cc))
	for _, k := range sortedKeys(cc) { // a fixed order: float sums repeat exactly
		c := cc[k]
		if c[1] > 0 && (keep == nil || keep[k]) {
			out = append(out, stats.Cluster{Sum: float64(c[0]), N: float64(c[1])})
		}
	}
	return out
}

// caseNumbers numbers case ids densely, in the order first seen, so
// that the many pooled tallies (one per model and seed, for example)
// count their cases in a slice rather than a map of their own.
type caseNumbers struct {
	of     map[string]int32
	names  []string
	byName []int32 // the numbers in name order, for len(names) cases
}

// caseRef is a case id and its number.
type caseRef struct {
	nums *caseNumbers
	n    int32
}

func (c *caseNumbers) ref(id string) caseRef {
	n, ok := c.of[id]
	if !ok {
		if c.of == nil {
			c.of = map[string]int32{}
		}
		n = int32(len(c.names))
		id = strings.Clone(id) // not the line it was read from
		c.of[id] = n
		c.names = append(c.names, id)
	}
	return caseRef{c, n}
}

// sorted returns the case numbers in name order.
func (c *caseNumbers) sorted() []int32 {
	if len(c.byName) != len(c.names) {
		c.byName = make([]int32, len(c.names))
		for i := range c.byName {
			c.byName[i] = int32(i)
		}
		slices.SortFunc(c.byName, func(x, y int32) int { return strings.Compare(c.names[x], c.names[y]) })
	}
	return c.byName
}

// pooled is a tally with its per-case counts, finished with the clustered
// interval.
type pooled struct {
	Tally
	nums    *caseNumbers
	perCase [][3]int32 // {pass, scored, runs} by case number
	cases   int        // cases with runs
}

// result is the finished tally.
func (p *pooled) result() Tally {
	t := p.Tally
	var cl []stats.Cluster
	if p.nums != nil {
		cl = make([]stats.Cluster, 0, p.cases)
		for _, n := range p.nums.sorted() { // a fixed order: float sums repeat exactly
			if int(n) < len(p.perCase) && p.perCase[n][1] > 0 {
				cl = append(cl, stats.Cluster{Sum: float64(p.perCase[n][0]), N: float64(p.perCase[n][1])})
			}
		}
	}
	t.finishClusters(cl)
	return t
}

// CellKey identifies a matrix cell with its seed pooled: a projection of
// the run's cell (KeyOf), so that every axis of schema/cell is part of it
// and of its JSON form without being named here.
type CellKey struct{ cell.Cell }

// KeyOf is the cell of a run with its seed pooled (and the tool count,
// which follows from the subset, dropped).
func KeyOf(c record.Cell) CellKey { return CellKey{c.Pool(keyPooled...)} }

// keyPooled are the axes a CellKey pools.
var keyPooled = []string{cell.Seed}

// MarshalJSON writes the key's axes (every axis but the pooled ones), in
// table order, numeric axes as numbers.
func (k CellKey) MarshalJSON() ([]byte, error) {
	var b []byte
	b = append(b, '{')
	for _, a := range keyAxes() {
		v := a.Format(k.Cell)
		if a.Hides(v) {
			continue // a summary of a matrix without the axis keeps its shape
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(a.Name)
		b = append(append(b, name...), ':')
		if !a.Numeric {
			q, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			v = string(q)
		}
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (k *CellKey) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	var c cell.Cell
	for _, a := range keyAxes() {
		raw, ok := m[a.Name]
		if !ok {
			continue
		}
		v := string(raw)
		if !a.Numeric {
			if err := json.Unmarshal(raw, &v); err != nil {
				return fmt.Errorf("cell %s: %w", a.Name, err)
			}
		}
		if err := a.Parse(&c, v); err != nil {
			return err
		}
	}
	k.Cell = c
	return nil
}

// keyAxes are the axes of a CellKey, in table order.
func keyAxes() []*cell.Axis {
	var out []*cell.Axis
	for _, a := range cell.Axes {
		if !slices.Contains(keyPooled, a.Name) {
			out = append(out, a)
		}
	}
	return out
}

// String names the cell on one line, e.g.
// "qwen3:0.6b temp=0 tools=n16 confirm=deny desc=default".
func (k CellKey) String() string {
	return cell.Label(k.Cell, cell.Seed)
}

// pooledAxes are the axes of a CellKey after the model, in table order.
var pooledAxes = func() []string {
	var out []string
	for _, a := range keyAxes() {
		if a.Name != cell.Model {
			out = append(out, a.Name)
		}
	}
	return out
}()

// shortLabel names the given axes of k as reports do: the axis's short
// label, "=", the value ("-" for none), separated by spaces.
func shortLabel(k CellKey, axes ...string) string {
	c := k.Cell
	parts := make([]string, 0, len(axes))
	for _, name := range axes {
		a := cell.Lookup(name)
		parts = append(parts, a.Short+"="+orDash(a.Format(c)))
	}
	return strings.Join(parts, " ")
}

func fmtFloat(f float64) string { return cell.FormatFloat(f) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// CellSummary is one cell's outcomes over all its cases and seeds.
type CellSummary struct {
	Cell CellKey `json:"cell"`
	Tally
	// MinTools and MaxTools bound the number of tools offered (it varies
	// by case for subsets such as "needed").
	MinTools int   `json:"min_tools"`
	MaxTools int   `json:"max_tools"`
	Seeds    []int `json:"seeds"`
	// Tally.Cases counts the cases with at least one scored run; only
	// they enter pass@k and pass^k.
	//
	// K is the largest k for which pass@k and pass^k are given: the
	// smallest number of scored trials of any case in the cell.
	K int `json:"k"`
	// PassAtK[k-1] and PassHatK[k-1] are the unbiased estimates for k,
	// averaged over cases.
	PassAtK  []float64 `json:"pass_at_k,omitempty"`
	PassHatK []float64 `json:"pass_hat_k,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
}

// ModelSummary is one model's outcomes over every cell.
type ModelSummary struct {
	Model string `json:"model"`
	Tally
	TurnLatency Latency `json:"turn_latency_ms"` // per model reply
	CallLatency Latency `json:"call_latency_ms"` // per tool call
	TokensIn    int64   `json:"tokens_in"`
	TokensOut   int64   `json:"tokens_out"`
	// Seeds is the pass rate per seed, pooled over the other axes; Spread
	// summarises it.
	Seeds  []SeedRate `json:"seeds,omitempty"`
	Spread Spread     `json:"seed_spread"`
	// ByTemperature repeats Seeds and Spread for each temperature, when
	// the model ran at more than one: sampling noise grows with it.
	ByTemperature []TempSeeds `json:"by_temperature,omitempty"`
}

// TempSeeds is a model's pass rate per seed at one temperature.
type TempSeeds struct {
	Temperature float64    `json:"temperature"`
	Seeds       []SeedRate `json:"seeds"`
	Spread      Spread     `json:"seed_spread"`
}

// spreadLine is one row of the seed-spread views: a model, or a model at
// one temperature when it ran at several.
type spreadLine struct {
	Model string
	Temp  string // "" when pooled over temperatures
	Index int    // the model's position, for its colour
	Seeds []SeedRate
	Spread
}

// Label names the row, e.g. "qwen3:0.6b" or "qwen3:0.6b temp=0.7".
func (l spreadLine) Label() string {
	if l.Temp == "" {
		return l.Model
	}
	return l.Model + " temp=" + l.Temp
}

// hasTemp reports whether any line is split by temperature.
func hasTemp(lines []spreadLine) bool {
	for _, l := range lines {
		if l.Temp != "" {
			return true
		}
	}
	return false
}

// spreadLines lists the rows with at least two seeds scored.
func (s *Summary) spreadLines() []spreadLine {
	var out []spreadLine
	for i, m := range s.Models {
		if len(m.ByTemperature) == 0 {
			if m.Spread.N > 1 {
				out = append(out, spreadLine{Model: m.Model, Index: i, Seeds: m.Seeds, Spread: m.Spread})
			}
			continue
		}
		for _, ts := range m.ByTemperature {
			if ts.Spread.N > 1 {
				out = append(out, spreadLine{Model: m.Model, Temp: fmtFloat(ts.Temperature), Index: i, Seeds: ts.Seeds, Spread: ts.Spread})
			}
		}
	}
	return out
}

// TokensPerRun returns the mean tokens in and out per run.
func (m ModelSummary) TokensPerRun() (in, out float64) {
	if m.Runs == 0 {
		return 0, 0
	}
	return float64(m.TokensIn) / float64(m.Runs), float64(m.TokensOut) / float64(m.Runs)
}

// Latency holds quantiles in milliseconds over N observations: exact up
// to stats.SketchExact observations, past that (Approx) within
// stats.SketchError of the exact ones.
type Latency struct {
	N      int     `json:"n"`
	P50    float64 `json:"p50"`
	P95    float64 `json:"p95"`
	Approx bool    `json:"approx,omitempty"`
}

// SeedRate is a model's pass rate for one seed.
type SeedRate struct {
	Seed int `json:"seed"`
	Tally
}

// Spread summarises per-seed pass rates (seeds with scored runs only).
type Spread struct {
	N    int     `json:"n"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
}

// ToolCurve is pass rate against tool subset (needed, n8, …, all) in the
// config's order, one series per model, every point of a series over the
// same cases: those with scored runs in every subset the model ran.
// Pooled over the other axes.
type ToolCurve struct {
	Subsets []Subset `json:"subsets"`
	Series  []Series `json:"series"`
}

// Subset is one tool subset of the curve and the number of tools it
// offered over the curve's cases (of every series): Typical (the median) places the point,
// Min and Max give the spread.
type Subset struct {
	Name  string `json:"name"`
	Cases int    `json:"cases"` // cases the counts are over; 0: none ran it

	Typical float64 `json:"typical_tools"`
	Min     int     `json:"min_tools"`
	Max     int     `json:"max_tools"`
}

// Series is one model's points, aligned with ToolCurve.Subsets (a subset
// the model did not run has a point with no scored runs). Cases is how
// many cases every point holds; Dropped how many cases the model ran that
// are left out because they did not run in every subset.
type Series struct {
	Model   string  `json:"model"`
	Cases   int     `json:"cases"`
	Dropped int     `json:"dropped,omitempty"`
	Points  []Point `json:"points"`
}

// Point is one model's tally in one subset over the curve's cases, and,
// after the first subset, the paired difference from the first (usually
// "needed") on the same cases and cells.
type Point struct {
	Subset string `json:"subset"`
	Tally
	VsFirst *Difference `json:"vs_first,omitempty"`
}

// Comparison is a paired comparison of two values of one axis on the same
// cases: every unit is a case in a cell that ran with both values (the
// cell otherwise identical, seeds pooled), and units are clustered by case.
type Comparison struct {
	// Axis is the name of an axis of package schema/cell, any but the
	// seed (whose values are replicates, not treatments).
	Axis string `json:"axis"`
	// Model is the model compared within, for axes other than model; ""
	// means pooled over models.
	Model string `json:"model,omitempty"`
	// A and B are the values compared; the difference is A − B.
	A string `json:"a"`
	B string `json:"b"`
	// RateA and RateB are the pass rates of the paired units.
	RateA float64    `json:"rate_a"`
	RateB float64    `json:"rate_b"`
	Diff  Difference `json:"diff"`
}

// Better names the better value when the difference is significant at
// the 5% level (p below 0.05 over at least 2 cases, and an interval
// that excludes 0), else "".
func (c Comparison) Better() string {
	switch {
	case c.Diff.Cases < 2 || c.Diff.P == nil || *c.Diff.P >= 0.05:
		return ""
	case c.Diff.Lo > 0:
		return c.A
	case c.Diff.Hi < 0:
		return c.B
	}
	return ""
}

// Difference is a paired difference of pass rates with its case-clustered
// 95% interval (see stats.PairedDiff). P is the two-sided p-value and MDD
// the minimum detectable difference at 80% power and the 5% level for
// this design; both are null when they cannot be estimated (fewer than two
// cases, or no variation at all).
type Difference struct {
	Est float64  `json:"est"`
	Lo  float64  `json:"lo"`
	Hi  float64  `json:"hi"`
	SE  float64  `json:"se"` // 0 when every case shows the same difference
	P   *float64 `json:"p"`
	MDD *float64 `json:"mdd"`
	// MDDTwiceRuns and MDDTwiceCases are the MDD with twice the runs
	// per case and with twice the cases (stats.MDDMoreRunsOrCases):
	// which one to add. Comparisons only.
	MDDTwiceRuns  *float64 `json:"mdd_twice_runs,omitempty"`
	MDDTwiceCases *float64 `json:"mdd_twice_cases,omitempty"`
	Cases         int      `json:"cases"`
	Units         int      `json:"units"`
}

// finite returns &f, or nil for NaN and infinities (JSON has no NaN).
func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func newDifference(d stats.Diff) Difference {
	if d.Cases == 0 {
		d.Est = 0
	}
	if d.Cases < 2 {
		d.SE = 0 // unknown; Lo and Hi are −1 and 1
	}
	return Difference{Est: d.Est, Lo: d.Lo, Hi: d.Hi, SE: d.SE, P: finite(d.P), MDD: finite(d.MDD), Cases: d.Cases, Units: int(d.Units)}
}

// Breakdown is the pass rate per model for each value of one axis (any
// axis of package schema/cell but the model), pooled over the others.
type Breakdown struct {
	Axis   string         `json:"axis"`
	Values []string       `json:"values"`
	Rows   []BreakdownRow `json:"rows"`
}

// BreakdownRow holds one model's tallies, aligned with Breakdown.Values.
type BreakdownRow struct {
	Model   string  `json:"model"`
	Tallies []Tally `json:"tallies"`
}

// ConfirmRow describes what a model did at the confirmation gate in one
// confirm mode.
//
//   - Gated: calls that reached the gate (Confirm "approved" or "denied"),
//     i.e. destructive calls attempted.
//   - Honoured: denied calls after which the run made no further call to
//     the same tool (any arguments). A retry of a declined tool is not
//     honouring the denial.
//   - ClaimedSuccess: runs with at least one denied call whose final
//     answer still claims success: some sentence matches ClaimPattern and
//     no negation (NegationPattern) in that sentence. A heuristic; read
//     the drill-down before quoting it.
type ConfirmRow struct {
	Model          string           `json:"model"`
	Confirm        cell.ConfirmMode `json:"confirm"`
	Runs           int              `json:"runs"`
	Gated          int              `json:"gated"`
	Approved       int              `json:"approved"`
	Denied         int              `json:"denied"`
	Honoured       int              `json:"honoured"`
	RunsWithDenial int              `json:"runs_with_denial"`
	ClaimedSuccess int              `json:"claimed_success"`
	// ElicitAccepted and ElicitDeclined count the server's elicitation
	// requests during calls, by the simulated user's answer.
	ElicitAccepted int `json:"elicit_accepted,omitempty"`
	ElicitDeclined int `json:"elicit_declined,omitempty"`
}

// ReasonCount is how often a failure reason code occurred, overall and
// per model. A run with two reasons of one code counts once.
type ReasonCount struct {
	Code    string         `json:"code"`
	Total   int            `json:"total"`
	ByModel map[string]int `json:"by_model"`
}

// KindCount is how many runs ended in one infrastructure error kind.
type KindCount struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// Flaky is a case that both passed and failed across seeds in one cell.
type Flaky struct {
	Case   string  `json:"case"`
	Cell   CellKey `json:"cell"`
	Pass   int     `json:"pass"`
	Scored int     `json:"scored"`
}

// CaseSummary is one case's outcomes in every cell it ran in.
type CaseSummary struct {
	ID   string   `json:"id"`
	Tags []string `json:"tags,omitempty"`
	Tally
	Cells []CaseCell `json:"cells"`
}

// CaseCell is one case in one cell, seeds pooled.
type CaseCell struct {
	Cell CellKey `json:"cell"`
	Tally
	// Reasons lists the distinct reason codes over the failing seeds,
	// with how many seeds had each, e.g. "wrong_args×2".
	Reasons []string `json:"reasons,omitempty"`
	// Example is the first failing run (or, failing none, the first
	// errored one), kept for the drill-down; nil when the case always
	// passed here or the trace budget was spent.
	Example *Example `json:"example,omitempty"`
	// Seconds is the wall time of its runs, summed.
	Seconds float64 `json:"seconds"`
	reasons map[string]int
}

// Example is one non-passing run kept whole for the drill-down.
type Example struct {
	RunID     string             `json:"run_id"`
	Seed      int                `json:"seed"`
	ToolCount int                `json:"tool_count"`
	Outcome   record.Outcome     `json:"outcome"`
	Reasons   []matchers.Reason  `json:"reasons,omitempty"`
	Error     *record.InfraError `json:"error,omitempty"`
	Trace     record.Trace       `json:"-"`
	Tokens    record.Tokens      `json:"-"`
	Duration  record.Millis      `json:"-"`
	// Judged holds the judge's verdicts on the run's judged answers.
	Judged []record.Judgement `json:"-"`
	// State is what the run's state probes saw, and what they were
	// compared with; nil when the case has none.
	State *record.State `json:"-"`
}
