package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema/record"
)

// TestLatencyByHost: turns served by two hosts give one row per host in
// summary.json and a section in report.md and report.html (through the
// table model, so both show the same rows; before, report.html had
// none); one host gives none of them.
func TestLatencyByHost(t *testing.T) {
	turn := func(host string, ms float64) record.Turn {
		return record.Turn{Host: host, Latency: record.Millis(ms), Tokens: record.Tokens{Out: 10}}
	}
	recs := []record.Record{
		{ID: "1", Case: "c", Outcome: record.Pass, Cell: record.Cell{Model: "m"}, Trace: record.Trace{Turns: []record.Turn{turn("http://a:1", 100), turn("http://b:1", 300)}}},
		{ID: "2", Case: "c", Outcome: record.Fail, Cell: record.Cell{Model: "m", Seed: 2}, Trace: record.Trace{Turns: []record.Turn{turn("http://a:1", 200)}}},
	}
	s := summarize(t, recs)
	if len(s.Hosts) != 2 {
		t.Fatalf("hosts %+v", s.Hosts)
	}
	a, b := s.Hosts[0], s.Hosts[1]
	if a.Host != "http://a:1" || a.Turns != 2 || a.Runs != 2 || a.Latency.N != 2 || b.Host != "http://b:1" || b.Turns != 1 || b.Latency.P50 != 300 {
		t.Errorf("hosts %+v", s.Hosts)
	}
	if a.TokensOutPerS != 20/0.3 {
		t.Errorf("tokens/s %v", a.TokensOutPerS)
	}
	var md strings.Builder
	if err := s.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Latency by host") || !strings.Contains(md.String(), "| `http://b:1` | 1 | 1 | 300 / 300 | 33 |") {
		t.Errorf("report.md lacks the host section:\n%s", md.String())
	}
	var html strings.Builder
	if err := s.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<section id="hosts">`, `href="#hosts"`, `id="hosts-table"`, "http://b:1", "300 / 300"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}

	recs[0].Trace.Turns[1].Host = "http://a:1"
	s = summarize(t, recs)
	md.Reset()
	s.WriteMarkdown(&md)
	html.Reset()
	s.WriteHTML(&html)
	if s.Hosts != nil || strings.Contains(md.String(), "by host") || strings.Contains(html.String(), "by host") {
		t.Errorf("one host: hosts %+v", s.Hosts)
	}
}

func summarize(t *testing.T, recs []record.Record) *Summary {
	t.Helper()
	dir := t.TempDir()
	var b []byte
	for _, r := range recs {
		r.Version = record.Version
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, RunsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRateLimitsByHost: throttled runs give one row per host in
// summary.json and a "Rate limits" section in report.md and report.html;
// a job never throttled has none.
func TestRateLimitsByHost(t *testing.T) {
	recs := []record.Record{
		{ID: "1", Case: "c", Outcome: record.Pass, Cell: record.Cell{Model: "m"}, Throttled: []record.Throttle{{Host: "http://a:1", Requests: 2, Wait: 2000}, {Host: "http://b:1", Requests: 1}}},
		{ID: "2", Case: "c", Outcome: record.Pass, Cell: record.Cell{Model: "m", Seed: 2}, Throttled: []record.Throttle{{Host: "http://a:1", Requests: 3, Wait: 3000}}},
		{ID: "3", Case: "c", Outcome: record.Pass, Cell: record.Cell{Model: "m", Seed: 3}},
	}
	s := summarize(t, recs)
	want := []ThrottleRow{{Host: "http://a:1", Runs: 2, Requests: 5, WaitMs: 5000}, {Host: "http://b:1", Runs: 1, Requests: 1}}
	if len(s.Throttled) != 2 || s.Throttled[0] != want[0] || s.Throttled[1] != want[1] {
		t.Fatalf("throttled %+v, want %+v", s.Throttled, want)
	}
	var md strings.Builder
	if err := s.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Rate limits") || !strings.Contains(md.String(), "| `http://a:1` | 2 | 5 | 5s |") {
		t.Errorf("report.md lacks the rate-limit section:\n%s", md.String())
	}
	var html strings.Builder
	if err := s.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<section id="throttled">`, `href="#throttled"`, `id="throttled-table"`, "http://b:1"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if s := summarize(t, recs[2:]); s.Throttled != nil {
		t.Errorf("unthrottled job: %+v", s.Throttled)
	}
}

// TestBFCLCategories: an imported BFCL suite's runs give accuracy per
// model and BFCL category with its interval in summary.json, report.md
// and report.html; never-passable cases count as failures.
func TestBFCLCategories(t *testing.T) {
	rec := func(id, kase string, outcome record.Outcome, seed int, tags ...string) record.Record {
		return record.Record{ID: id, Case: kase, Outcome: outcome, Tags: tags, Cell: record.Cell{Model: "m", Seed: seed}}
	}
	recs := []record.Record{
		rec("1", "simple_python_0", record.Pass, 1, "bfcl", "simple_python", "python"),
		rec("2", "simple_python_0", record.Pass, 2, "bfcl", "simple_python", "python"),
		rec("3", "simple_python_1", record.Fail, 1, "bfcl", "simple_python", "python", "bfcl-unpassable"),
		rec("4", "irrelevance_0", record.Pass, 1, "bfcl", "irrelevance", "python"),
		rec("5", "mine", record.Pass, 1, "other"),
	}
	s := summarize(t, recs)
	if len(s.BFCL) != 2 {
		t.Fatalf("bfcl rows %+v", s.BFCL)
	}
	sp := s.BFCL[1]
	if sp.Category != "simple_python" || sp.Tally.Pass != 2 || sp.Tally.Fail != 1 || sp.Tally.Cases != 2 || sp.Unpassable != 1 || !(sp.Tally.Lo < sp.Tally.Rate && sp.Tally.Rate < sp.Tally.Hi) {
		t.Errorf("simple_python %+v", sp)
	}
	var md strings.Builder
	if err := s.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## BFCL categories") || !strings.Contains(md.String(), "`simple_python`") {
		t.Errorf("report.md lacks the BFCL section:\n%s", md.String())
	}
	var html strings.Builder
	if err := s.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), `id="bfcl-table"`) {
		t.Error("report.html lacks the BFCL table")
	}
	if s := summarize(t, recs[4:]); s.BFCL != nil {
		t.Errorf("a suite without BFCL cases: %+v", s.BFCL)
	}
}
