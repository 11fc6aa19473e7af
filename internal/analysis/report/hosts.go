package report

// This file holds the report's split of model-turn latency by the host
// that served each turn (record.Turn.Host), for jobs whose backend is a
// pool of hosts (backend.ollama.hosts, backend.openai.base_urls): a slow
// or overloaded host shows up here, not just as a wider spread overall.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolward/toolward/internal/analysis/stats"
	"github.com/toolward/toolward/schema/record"
)

// HostRow is the turn latency of one model host, and how many turns and
// runs it served.
type HostRow struct {
	Host    string  `json:"host"`
	Turns   int     `json:"turns"`
	Runs    int     `json:"runs"` // runs with at least one turn on the host
	Latency Latency `json:"latency_ms"`
	// TokensOutPerS is the generated tokens per second of turn time.
	TokensOutPerS float64 `json:"tokens_out_per_s,omitempty"`
}

// hostAgg folds records into HostRows.
type hostAgg struct {
	hosts map[string]*hostTally
}

type hostTally struct {
	lat    stats.Sketch
	runs   int
	tokOut int64
	ms     float64
}

func (a *hostAgg) add(rec *record.Record) {
	var seen []string
	for _, t := range rec.Trace.Turns {
		if t.Host == "" {
			continue
		}
		if a.hosts == nil {
			a.hosts = map[string]*hostTally{}
		}
		h := entry(a.hosts, t.Host, zero[hostTally])
		h.lat.Add(float64(t.Latency))
		h.tokOut += int64(t.Tokens.Out)
		h.ms += float64(t.Latency)
		if !slices.Contains(seen, t.Host) {
			seen = append(seen, t.Host)
			h.runs++
		}
	}
}

// rows returns one row per host, by name; nil unless turns went to more
// than one host (a single host's split is the models' latency again).
func (a *hostAgg) rows() []HostRow {
	if len(a.hosts) < 2 {
		return nil
	}
	out := make([]HostRow, 0, len(a.hosts))
	for name, h := range a.hosts {
		r := HostRow{Host: name, Turns: h.lat.N(), Runs: h.runs, Latency: latency(&h.lat)}
		if h.ms > 0 {
			r.TokensOutPerS = float64(h.tokOut) / (h.ms / 1000)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(x, y HostRow) int { return strings.Compare(x.Host, y.Host) })
	return out
}

// hostsExplainer says what the latency-by-host table shows.
const hostsExplainer = "Model-turn latency by the host that served the turn (p50 / p95). A turn retried on another host after its first host failed counts on the host that answered."

// hostsTable is the latency-by-host table of report.md and report.html;
// nil for a job served by one host.
func (s *Summary) hostsTable() *Table {
	if len(s.Hosts) == 0 {
		return nil
	}
	t := &Table{ID: "hosts-table", Columns: []Column{col("host"), numCol("runs"), numCol("turns"), numCol("turn latency"), numCol("tokens out/s")}}
	for _, r := range s.Hosts {
		t.Rows = append(t.Rows, []Cell{nameCell(r.Host), numCell(r.Runs), numCell(r.Turns), textCell(msFmt(r.Latency)), textCell(fmt.Sprintf("%.0f", r.TokensOutPerS))})
	}
	return t
}
