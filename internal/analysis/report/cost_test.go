package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// costDir writes recs and a config.json with the given backend and
// prices into a fresh result directory.
func costDir(t *testing.T, be schema.Backend, prices map[string]schema.Price, recs []record.Record) string {
	t.Helper()
	dir := t.TempDir()
	var b []byte
	for _, r := range recs {
		r.Version = record.Version
		line, _ := json.Marshal(r)
		b = append(append(b, line...), '\n')
	}
	os.WriteFile(filepath.Join(dir, RunsFile), b, 0o644)
	cfg := &schema.Config{Name: "cost", Backend: be, Prices: prices, Matrix: schema.Matrix{}.With(cell.Model, "a", "b")}
	if err := results.WriteMeta(dir, &results.Meta{Version: results.MetaVersion, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCost: with prices, summary.json, report.md and report.html give
// the cost in all, per run, per pass, per model and per case (computed
// here by hand); cached input is priced apart; a model without a price is
// named; without prices there is no cost; a local backend costs nothing
// and says so.
func TestCost(t *testing.T) {
	cached := 0.3
	prices := map[string]schema.Price{"a": {Input: 3, Output: 15, CachedInput: &cached}}
	recs := []record.Record{
		{ID: "1", Case: "c1", Outcome: record.Pass, Cell: record.Cell{Model: "a"}, Tokens: record.Tokens{In: 1000, Cached: 400, Out: 100}},
		{ID: "2", Case: "c2", Outcome: record.Fail, Cell: record.Cell{Model: "a"}, Tokens: record.Tokens{In: 2000, Out: 200}},
		{ID: "3", Case: "c1", Outcome: record.Pass, Cell: record.Cell{Model: "b"}, Tokens: record.Tokens{In: 5000, Out: 500}},
	}
	be := schema.Backend{Anthropic: &schema.Anthropic{BaseURL: "https://api.anthropic.com"}}
	dir := costDir(t, be, prices, recs)
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cost
	// run 1: (600*3 + 400*0.3 + 100*15) / 1e6 = 0.00342; run 2: (2000*3 + 200*15) / 1e6 = 0.009
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if c == nil || !near(c.Total, 0.01242) || !near(c.PerRun, 0.00414) || !near(c.PerPass, 0.00621) || len(c.Unpriced) != 1 || c.Unpriced[0] != "b" {
		t.Fatalf("cost %+v", c)
	}
	if m := c.Models[0]; m.Model != "a" || !near(m.Cost, 0.01242) || !near(m.PerPass, 0.01242) || m.TokensCached != 400 || !m.Priced {
		t.Errorf("model a %+v", m)
	}
	if k := c.Cases[0]; k.Case != "c2" || !near(k.Cost, 0.009) || k.PerPass != 0 {
		t.Errorf("dearest case %+v", k)
	}
	sum, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	md, _ := os.ReadFile(filepath.Join(dir, MarkdownFile))
	html, _ := os.ReadFile(filepath.Join(dir, HTMLFile))
	for name, want := range map[string][]string{
		"summary.json": {`"cost": {`, `"per_pass": 0.0062`, `"unpriced": [`},
		"report.md":    {"## Cost", "$0.0124 in all, $0.00414 per run, $0.00621 per passing run", "| `a` | 2 | 3000 | 400 | 300 | $0.0124 | $0.00621 | $0.0124 |", "| `b` | 1 | 5000 | 0 | 500 | no price |", "| `c2` | 1 | 0 | $0.00900 | $0.00900 | no pass |"},
		"report.html":  {`<section id="cost">`, `href="#cost"`, "cost-cases-table"},
	} {
		text := map[string][]byte{"summary.json": sum, "report.md": md, "report.html": html}[name]
		for _, w := range want {
			if !strings.Contains(string(text), w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
	}

	if s, err := Summarize(costDir(t, be, nil, recs)); err != nil || s.Cost != nil {
		t.Errorf("without prices: cost %+v, %v", s.Cost, err)
	}
	local := costDir(t, schema.Backend{Ollama: &schema.Ollama{Host: "http://gpu-box:11434"}}, prices, recs)
	s, err = Build(local)
	if err != nil {
		t.Fatal(err)
	}
	md, _ = os.ReadFile(filepath.Join(local, MarkdownFile))
	if s.Cost == nil || s.Cost.Local != "ollama" || s.Cost.Total != 0 || !strings.Contains(string(md), "The ollama backend runs on your own hardware") {
		t.Errorf("local: %+v", s.Cost)
	}
}
