package report

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// RunCSV writes runs as CSV, one row per run, for spreadsheets and
// pandas: the run and case ids, the tags, one column per cell axis (the
// axis table of package schema/cell, so a new axis gets a column without
// a change here) and the tool count, then the outcome, the reason codes,
// the error kind, attempts, turns, calls, the user messages sent and
// the state probes made, tokens, the time spent in the
// model and in tool calls, and the run's duration, then the judge's
// verdicts on its judged answers (pass or fail each, in the case's
// order: empty for a run without) and the judge's requests, tokens and
// time, apart from the model's. Multiple
// values in a cell (tags, reasons) are joined with ";". Cells starting
// with = + - @ are prefixed with ' so a spreadsheet does not read a model
// or case string as a formula.
type RunCSV struct {
	w *csv.Writer
}

// NewRunCSV writes the header row to w.
func NewRunCSV(w io.Writer) (*RunCSV, error) {
	c := &RunCSV{w: csv.NewWriter(w)}
	head := []string{"id", "case", "tags"}
	head = append(head, cell.Names()...)
	head = append(head, "tool_count", "outcome", "reasons", "error_kind", "attempts", "turns", "calls", "user_turns", "probes",
		"tokens_in", "tokens_out", "model_latency_ms", "tool_latency_ms", "duration_ms",
		"judged", "judge_requests", "judge_tokens_in", "judge_tokens_out", "judge_latency_ms")
	return c, c.w.Write(head)
}

// Write writes one run's row.
func (c *RunCSV) Write(rec *record.Record) error {
	row := []string{rec.ID, rec.Case, strings.Join(rec.Tags, ";")}
	for _, a := range cell.Axes {
		row = append(row, a.Format(rec.Cell))
	}
	kind := ""
	if rec.Error != nil {
		kind = rec.Error.Kind
	}
	var model, tool float64
	for _, t := range rec.Trace.Turns {
		model += float64(t.Latency)
	}
	for _, c := range rec.Trace.Calls {
		tool += float64(c.Latency)
	}
	row = append(row, strconv.Itoa(rec.Cell.ToolCount), string(rec.Outcome), strings.Join(matchers.ReasonCodes(rec.Reasons), ";"), kind,
		strconv.Itoa(rec.Attempts), strconv.Itoa(len(rec.Trace.Turns)), strconv.Itoa(len(rec.Trace.Calls)),
		strconv.Itoa(sentUserTurns(rec.Trace.Users)), strconv.Itoa(probeCount(rec.State)),
		strconv.Itoa(rec.Tokens.In), strconv.Itoa(rec.Tokens.Out), csvMillis(model), csvMillis(tool), csvMillis(float64(rec.Duration)))
	var judged []string
	var requests, jin, jout int
	var jlat float64
	for _, j := range rec.Judged {
		judged = append(judged, verdictWord(j.Pass))
		for _, v := range j.Votes {
			requests, jin, jout, jlat = requests+1, jin+v.Tokens.In, jout+v.Tokens.Out, jlat+float64(v.Latency)
		}
	}
	row = append(row, strings.Join(judged, ";"), strconv.Itoa(requests), strconv.Itoa(jin), strconv.Itoa(jout), csvMillis(jlat))
	for i, v := range row {
		row[i] = noFormula(displaySafe(v))
	}
	return c.w.Write(row)
}

// csvMillis formats a sum of latencies in milliseconds to the nanosecond, so a
// float sum's noise (0.013645000000000001) does not reach the cell.
func csvMillis(f float64) string { return strconv.FormatFloat(math.Round(f*1e6)/1e6, 'f', -1, 64) }

// sentUserTurns counts the user messages the model received: the
// opening, scripted replies and simulated turns (0 for a single request,
// which records none).
func sentUserTurns(us []record.UserTurn) int {
	n := 0
	for _, u := range us {
		if !u.Unsent {
			n++
		}
	}
	return n
}

// probeCount counts the state probes a run made: of the end state and
// after each user turn.
func probeCount(st *record.State) int {
	if st == nil {
		return 0
	}
	n := len(st.Probes)
	for _, ps := range st.Turns {
		n += len(ps)
	}
	return n
}

// Flush writes what is buffered and reports a write error.
func (c *RunCSV) Flush() error {
	c.w.Flush()
	return c.w.Error()
}

// noFormula keeps a spreadsheet from evaluating a value as a formula.
func noFormula(s string) string {
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return "'" + s
		}
	}
	return s
}
