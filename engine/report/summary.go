package report

import (
	"fmt"
	"strconv"
	"time"

	"github.com/toolward/toolward/engine/record"
	"github.com/toolward/toolward/engine/report/stats"
	"github.com/toolward/toolward/matchers"
)

// SummaryVersion is the format version of summary.json.
const SummaryVersion = 1

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

	Totals Tally `json:"totals"`
	// Fixed lists the axes with a single value in the whole run, e.g.
	// {Name: "temperature", Value: "0"}; Breakdowns cover the others.
	Fixed      []Field        `json:"fixed,omitempty"`
	Models     []ModelSummary `json:"models"`
	Cells      []CellSummary  `json:"cells"`
	ToolCurve  []Series       `json:"tool_curve"`
	Breakdowns []Breakdown    `json:"breakdowns,omitempty"`
	Confirm    []ConfirmRow   `json:"confirm,omitempty"`
	Reasons    []ReasonCount  `json:"reasons,omitempty"`
	ErrorKinds []KindCount    `json:"error_kinds,omitempty"`
	Flaky      []Flaky        `json:"flaky,omitempty"`
	Cases      []CaseSummary  `json:"cases"`
	Warnings   []string       `json:"warnings,omitempty"`
	BadLines   int            `json:"bad_lines,omitempty"` // lines of runs.jsonl that were not records
	Duplicates int            `json:"duplicates,omitempty"`
}

// OverallPassRate returns the pass rate over all scored runs (pass+fail;
// errors excluded) and the number of scored runs. With no scored runs the
// rate is 0.
func (s *Summary) OverallPassRate() (rate float64, scored int) {
	return s.Totals.Rate, s.Totals.Scored()
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
// Wilson 95% interval. With no scored runs Rate is 0 and [Lo, Hi] is [0, 1].
type Tally struct {
	Runs  int     `json:"runs"`
	Pass  int     `json:"pass"`
	Fail  int     `json:"fail"`
	Error int     `json:"error"`
	Rate  float64 `json:"rate"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// Scored is Pass + Fail: the runs a pass rate is computed over.
func (t Tally) Scored() int { return t.Pass + t.Fail }

func (t *Tally) add(outcome string) {
	t.Runs++
	switch outcome {
	case record.Pass:
		t.Pass++
	case record.Fail:
		t.Fail++
	default:
		t.Error++
	}
}

func (t *Tally) finish() {
	t.Lo, t.Hi = stats.Wilson(t.Pass, t.Scored(), stats.Z95)
	t.Rate = 0
	if n := t.Scored(); n > 0 {
		t.Rate = float64(t.Pass) / float64(n)
	}
}

// CellKey identifies a matrix cell with seeds pooled.
type CellKey struct {
	Model        string  `json:"model"`
	Temperature  float64 `json:"temperature"`
	Tools        string  `json:"tools"`
	Confirm      string  `json:"confirm"`
	Descriptions string  `json:"descriptions"`
}

// KeyOf is the cell of a run with its seed pooled (and the tool count,
// which follows from the subset, dropped).
func KeyOf(c record.Cell) CellKey {
	return CellKey{Model: c.Model, Temperature: c.Temperature, Tools: c.Tools, Confirm: c.Confirm, Descriptions: c.Descriptions}
}

// String names the cell on one line, e.g.
// "qwen3:0.6b temp=0 tools=n16 confirm=deny desc=default".
func (k CellKey) String() string {
	return fmt.Sprintf("%s temp=%s tools=%s confirm=%s desc=%s", k.Model, fmtFloat(k.Temperature), k.Tools, orDash(k.Confirm), orDash(k.Descriptions))
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

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
	// Cases counts the cases with at least one scored run; only they
	// enter pass@k and pass^k.
	Cases int `json:"cases"`
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

// Latency holds quantiles in milliseconds over N observations.
type Latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
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

// Series is one model's pass rate against the number of tools offered,
// pooled over the other axes.
type Series struct {
	Model  string  `json:"model"`
	Points []Point `json:"points"`
}

// Point is the tally of runs offered ToolCount tools.
type Point struct {
	ToolCount int `json:"tool_count"`
	Tally
}

// Breakdown is the pass rate per model for each value of one axis
// (temperature, seed, tools, confirm, descriptions), pooled over the others.
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
	Model          string `json:"model"`
	Confirm        string `json:"confirm"`
	Runs           int    `json:"runs"`
	Gated          int    `json:"gated"`
	Approved       int    `json:"approved"`
	Denied         int    `json:"denied"`
	Honoured       int    `json:"honoured"`
	RunsWithDenial int    `json:"runs_with_denial"`
	ClaimedSuccess int    `json:"claimed_success"`
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
	Outcome   string             `json:"outcome"`
	Reasons   []matchers.Reason  `json:"reasons,omitempty"`
	Error     *record.InfraError `json:"error,omitempty"`
	Trace     record.Trace       `json:"-"`
	Tokens    record.Tokens      `json:"-"`
	Duration  record.Millis      `json:"-"`
}
