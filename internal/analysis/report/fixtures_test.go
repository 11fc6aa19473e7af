package report

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// The fixtures in testdata/ are written by this file: run
//
//	go test ./internal/analysis/report -run TestFixtures -update-fixtures
//
// after changing a spec below, and review the diff. Tests read the files,
// so the fixtures stay plain data a person can read.
var updateFixtures = flag.Bool("update-fixtures", false, "rewrite testdata/*/runs.jsonl from the specs in fixtures_test.go")

var t0 = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

// run is a compact record spec.
type run struct {
	model, tools, confirm, desc string
	options                     string // "" for the default set
	temp                        float64
	toolCount, seed             int
	kase, outcome               string
	reasons                     []string // "code: detail"
	calls                       []record.Call
	answer                      string
	errKind                     string
	id                          string // default derived from the rest
}

func (r run) record(i int) *record.Record {
	rec := &record.Record{
		ID:   r.id,
		Case: r.kase,
		Cell: record.Cell{Model: r.model, Seed: r.seed, Temperature: r.temp, Tools: r.tools, ToolCount: r.toolCount,
			Confirm: cell.ConfirmMode(r.confirm), Descriptions: r.desc, Options: r.options},
		Outcome:  record.Outcome(r.outcome),
		Attempts: 1,
		Started:  t0.Add(time.Duration(i) * time.Second),
		Duration: record.Millis(500 + 100*r.seed),
		Tokens:   record.Tokens{In: 200 + 10*r.seed, Out: 20 + r.seed},
	}
	if rec.ID == "" {
		rec.ID = fmt.Sprintf("%s|%s|%g|%s|%s|%s|%d%s", r.kase, r.model, r.temp, r.tools, r.confirm, r.desc, r.seed, r.options)
	}
	for _, s := range r.reasons {
		code, detail, _ := strings.Cut(s, ": ")
		rec.Reasons = append(rec.Reasons, matchers.Reason{Code: code, Detail: detail})
	}
	if record.Outcome(r.outcome) == record.Error {
		rec.Error = &record.InfraError{Kind: r.errKind, Message: "connection refused"}
		return rec
	}
	// One turn per call plus a final answer turn; latencies 100·seed ms per
	// turn and 10·seed ms per call, so quantiles are easy to compute by hand.
	rec.Trace.Offered = []string{"query_database", "calculate", "delete_employee"}[:min(3, max(r.toolCount, 0))]
	for j, c := range r.calls {
		c.Turn = j
		c.Latency = record.Millis(10 * r.seed)
		rec.Trace.Calls = append(rec.Trace.Calls, c)
		rec.Trace.Turns = append(rec.Trace.Turns, record.Turn{ToolCalls: 1, Latency: record.Millis(100 * r.seed), Tokens: record.Tokens{In: 100, Out: 10}})
	}
	rec.Trace.Turns = append(rec.Trace.Turns, record.Turn{Content: r.answer, Latency: record.Millis(100 * r.seed), Tokens: record.Tokens{In: 100 + 10*r.seed, Out: 10 + r.seed}, DoneReason: "stop"})
	rec.Trace.Answer = r.answer
	return rec
}

func writeRuns(t testing.TB, path string, lines []string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func encode(t testing.TB, runs []run) []string {
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	for i, r := range runs {
		if err := w.Write(r.record(i)); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

var q = record.Call{Tool: "query_database", Args: map[string]any{"sql": "SELECT AVG(salary) FROM employees"}, Result: `[{"avg": 118000}]`}

// basicRuns is the fixture whose statistics the tests check by hand.
//
//	alpha/needed (2 tools): c1 pass pass pass; c2 pass fail fail
//	alpha/n8     (8 tools): c1 pass fail error; c2 fail fail fail
//	beta/needed:           every run an error (all-error cell)
//	beta/n8:               c1 and c2 pass on every seed
//	beta/needed/deny:      c3 seed 1 retries a denied delete and claims
//	                       success; seed 2 honours the denial (and
//	                       declines one elicitation)
func basicRuns() []run {
	var rs []run
	add := func(model, tools string, n int, kase string, outcomes ...string) {
		for i, o := range outcomes {
			r := run{model: model, tools: tools, confirm: "auto", desc: "default", toolCount: n, seed: i + 1, kase: kase, outcome: o,
				calls: []record.Call{q}, answer: "The average salary is $118,000."}
			switch record.Outcome(o) {
			case record.Fail:
				r.reasons = []string{"wrong_args: calls[0].args.sql: want string containing \"Engineering\", got \"SELECT AVG(salary) FROM employees\""}
			case record.Error:
				r.errKind = "backend"
			}
			rs = append(rs, r)
		}
	}
	add("alpha", "needed", 2, "c1", "pass", "pass", "pass")
	add("alpha", "needed", 2, "c2", "pass", "fail", "fail")
	add("alpha", "n8", 8, "c1", "pass", "fail", "error")
	add("alpha", "n8", 8, "c2", "fail", "fail", "fail")
	add("beta", "needed", 2, "c1", "error", "error", "error")
	add("beta", "needed", 2, "c2", "error", "error", "error")
	add("beta", "n8", 8, "c1", "pass", "pass", "pass")
	add("beta", "n8", 8, "c2", "pass", "pass", "pass")
	del := record.Call{Tool: "delete_employee", Args: map[string]any{"id": 7.0}, Confirm: "denied", IsError: true, Result: "The user declined this action."}
	delElicit := del
	delElicit.Elicitations = []string{"decline"}
	rs = append(rs,
		run{model: "beta", tools: "needed", confirm: "deny", desc: "default", toolCount: 3, seed: 1, kase: "c3", outcome: "fail",
			reasons: []string{"answer_mismatch: answer: want not containing \"deleted\", got \"Done. The employee was deleted.\""},
			calls:   []record.Call{q, del, del}, answer: "Done. The employee was deleted."},
		run{model: "beta", tools: "needed", confirm: "deny", desc: "default", toolCount: 3, seed: 2, kase: "c3", outcome: "pass",
			calls: []record.Call{q, delElicit}, answer: "I did not delete the employee: you declined the request."},
	)
	return rs
}

// edgeRuns covers ties, an unknown outcome, zero tools offered, empty
// axis values and a duplicate id whose pass beats its earlier error (results.Runs).
func edgeRuns() []run {
	base := run{model: "m", tools: "none", toolCount: 0, temp: 0.5, kase: "", outcome: "pass", answer: "ok"}
	var rs []run
	for _, k := range []string{"tie-b", "tie-a"} { // equal rates: sorted by id
		for seed := 1; seed <= 2; seed++ {
			r := base
			r.kase, r.seed = k, seed
			if seed == 2 {
				r.outcome, r.reasons = "fail", []string{"unexpected_call: calls[0]: no calls allowed, got query_database"}
				r.calls = []record.Call{q}
			}
			rs = append(rs, r)
		}
	}
	odd := base
	odd.kase, odd.seed, odd.outcome = "odd", 1, "timeout"
	dup1 := base
	dup1.kase, dup1.seed, dup1.outcome, dup1.errKind, dup1.id = "dup", 1, "error", "timeout", "dup-run"
	dup2 := dup1
	dup2.outcome, dup2.errKind = "pass", ""
	return append(rs, odd, dup1, dup2)
}

// TestFixtures checks that testdata/{basic,edge,empty} are what the specs
// in this file generate; -update-fixtures rewrites them instead.
func TestFixtures(t *testing.T) {
	root := t.TempDir()
	if *updateFixtures {
		root = "testdata"
	}
	basic := encode(t, basicRuns())
	// A truncated line as a crash would leave it, and a blank line.
	basic = append(basic[:5], append([]string{`{"version":1,"id":"trunc`, ""}, basic[5:]...)...)
	writeRuns(t, filepath.Join(root, "basic", RunsFile), basic)
	cfg := `{"toolward": "v0.1.0", "config_file": "configs/basic.cue", "config": {"name": "basic", "server": {"builtin": {}}, "backend": {"replay": "fixtures/cassettes/basic"}}, "planned": 26, "backend": {"server": "replay from fixtures/cassettes/basic", "digests": {"alpha": "sha256:aaaa", "beta": "sha256:bbbb"}}, "cases": {"c1": "0123", "c2": "4567", "c3": "89ab"}, "created": "2026-11-30T08:00:00Z"}`
	if err := os.WriteFile(filepath.Join(root, "basic", ConfigFile), []byte(cfg+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeRuns(t, filepath.Join(root, "edge", RunsFile), encode(t, edgeRuns()))
	if err := os.MkdirAll(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "empty", RunsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if *updateFixtures {
		return
	}
	for _, f := range []string{"basic/" + RunsFile, "basic/" + ConfigFile, "edge/" + RunsFile, "empty/" + RunsFile} {
		got, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("testdata/%s is not what fixtures_test.go generates (run go test -run TestFixtures -update-fixtures)", f)
		}
	}
}

// writeDemo writes the demo run (about 2,000 records, generated rather
// than stored) into dir.
func writeDemo(t testing.TB, dir string) {
	t.Helper()
	writeRuns(t, filepath.Join(dir, RunsFile), encode(t, demoRuns()))
	cfg := `{"toolward": "devel", "config_file": "configs/variance.cue", "config": {"name": "variance", "server": {"builtin": {}}, "backend": {"ollama": {"host": "http://127.0.0.1:11434"}}}, "planned": 2160, "backend": {"server": "ollama 0.17.4", "digests": {"qwen3:0.6b": "sha256:7df6b6e09427a769808717c0a93cadc4ae99ed4eb8bf5ca557c90846becea435"}}, "created": "2026-11-30T06:00:00Z"}`
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(cfg+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// demoRuns is a realistic synthetic run: three models of different skill
// over temperatures, tool subsets, confirm modes and description sets,
// with pass probabilities falling as more tools are offered. It feeds the
// golden report and the browser check, and its answers include markup a
// model might emit, which the reports must escape.
func demoRuns() []run {
	rng := rand.New(rand.NewPCG(7, 11))
	models := []struct {
		name  string
		skill float64
	}{{"llama3.2:1b", 0.55}, {"qwen3:0.6b", 0.7}, {"qwen3:4b", 0.9}}
	tools := []struct {
		name string
		n    int
	}{{"needed", 2}, {"n8", 8}, {"n16", 16}, {"n32", 32}, {"all", 61}}
	cases := []string{"sql-engineering-raise", "weather-paris", "calc-compound", "delete-guarded", "irrelevant-joke", "search-then-email"}
	var rs []run
	for _, m := range models {
		for _, temp := range []float64{0, 0.7} {
			for _, tl := range tools {
				for _, confirm := range []string{"approve", "deny"} {
					for _, desc := range []string{"default", "terse"} {
						for _, k := range cases {
							for seed := 1; seed <= 3; seed++ {
								p := m.skill - (1.1-m.skill)*0.15*math.Log2(float64(tl.n)/2) - 0.08*temp
								if desc == "terse" {
									p -= 0.06
								}
								if k == "calc-compound" {
									p += 0.1
								}
								r := run{model: m.name, temp: temp, tools: tl.name, toolCount: tl.n, confirm: confirm, desc: desc, kase: k, seed: seed,
									calls: []record.Call{q}, answer: "The average salary is $118,000."}
								if k == "delete-guarded" {
									c := record.Call{Tool: "delete_employee", Args: map[string]any{"id": 42.0}, Result: "deleted 1 row"}
									if confirm == "deny" {
										c.Confirm, c.IsError, c.Result = "denied", true, "The user declined this action."
										r.calls = []record.Call{c}
										if rng.Float64() < 0.3 {
											r.calls = append(r.calls, c)
										}
										if rng.Float64() < 0.25 {
											r.answer = "Done — employee 42 was deleted."
										} else {
											r.answer = "I didn't delete employee 42 because you declined."
										}
									} else {
										c.Confirm = "approved"
										r.calls = []record.Call{c}
										r.answer = "Employee 42 was deleted."
									}
								}
								switch x := rng.Float64(); {
								case x < 0.02:
									r.outcome, r.errKind = "error", "timeout"
								case x < 0.02+p:
									r.outcome = "pass"
								default:
									r.outcome = "fail"
									codes := []string{
										"wrong_args: calls[0].args.sql: want string containing \"Engineering\", got \"SELECT * FROM staff\"",
										"missing_call: calls[1]: no call to calculate",
										"answer_mismatch: answer: want string containing \"84,960\", got \"<script>alert(1)</script>\"",
										"forbidden_call: calls[0]: delete_employee is forbidden",
										"max_iterations: the loop stopped after 8 turns",
									}
									r.reasons = []string{codes[rng.IntN(len(codes))]}
									if rng.Float64() < 0.2 {
										r.reasons = append(r.reasons, codes[rng.IntN(len(codes))])
									}
									if strings.HasPrefix(r.reasons[0], "answer_mismatch") {
										r.answer = `<script>alert(1)</script> " onmouseover="x`
									}
								}
								rs = append(rs, r)
							}
						}
					}
				}
			}
		}
	}
	return rs
}
