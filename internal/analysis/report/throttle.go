package report

// This file holds the report's rate-limit section: per model host, the
// throttled answers (429, or 503 with Retry-After) and the time runs
// waited them out (record.Record.Throttled). Throttling costs no attempt
// and no score, only time, so it is shown apart from errors.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolward/toolward/schema/record"
)

// ThrottleRow is one model host's rate limiting over the job.
type ThrottleRow struct {
	Host     string  `json:"host"` // "" for a backend without hosts
	Runs     int     `json:"runs"` // runs throttled at least once by the host
	Requests int     `json:"requests"`
	WaitMs   float64 `json:"wait_ms"` // total time waited
}

// throttleAgg folds records into ThrottleRows.
type throttleAgg struct {
	hosts map[string]*ThrottleRow
}

func (a *throttleAgg) add(rec *record.Record) {
	for _, t := range rec.Throttled {
		if a.hosts == nil {
			a.hosts = map[string]*ThrottleRow{}
		}
		r := entry(a.hosts, t.Host, func() *ThrottleRow { return &ThrottleRow{Host: t.Host} })
		r.Runs++
		r.Requests += t.Requests
		r.WaitMs += float64(t.Wait)
	}
}

// rows returns one row per host, by name; nil when nothing was throttled.
func (a *throttleAgg) rows() []ThrottleRow {
	var out []ThrottleRow
	for _, r := range a.hosts {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(x, y ThrottleRow) int { return strings.Compare(x.Host, y.Host) })
	return out
}

// throttleExplainer says what the rate-limit table shows.
const throttleExplainer = "Requests a model host refused for now (429, or 503 with Retry-After), and the time runs waited before sending the same request again (to the same host, or at once to another host of a pool). Throttling costs no attempt and is never scored."

// throttleTable is the rate-limit table of report.md and report.html;
// nil when nothing was throttled.
func (s *Summary) throttleTable() *Table {
	if len(s.Throttled) == 0 {
		return nil
	}
	t := &Table{ID: "throttled-table", Columns: []Column{col("host"), numCol("runs"), numCol("throttled requests"), numCol("time waited")}}
	for _, r := range s.Throttled {
		host := r.Host
		if host == "" {
			host = "(the server)"
		}
		wait := time.Duration(r.WaitMs * float64(time.Millisecond)).Round(time.Second)
		t.Rows = append(t.Rows, []Cell{nameCell(host), numCell(r.Runs), numCell(r.Requests), textCell(fmt.Sprint(wait))})
	}
	return t
}
