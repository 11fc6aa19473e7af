// Command resultgen writes a synthetic but realistic result directory, as
// `toolward run` would leave it, for measuring the analysis commands
// (report, score, diff, merge) at scale: the case files (bench/casegen),
// config.json (the config, each case's run digest and rules digest) and
// runs.jsonl with one record per run of the plan, each with a whole trace
// (offered tools, turns with content, calls with arguments and results),
// judged by the cases' own scoring rules.
//
//	go run ./bench/resultgen -n 100000 -out /tmp/r100k [-cases 100] [-models 5] [-temps 2] [-seed 1]
//
// The matrix is cases × models × temperatures × seeds, with as many seeds
// as n needs (n is rounded up to a whole number of seeds). -shards k
// writes k shard directories out/shard-i instead (each with its part of
// the plan, as `toolward run --shard i/k` would), for merge. -drift d
// makes a d fraction of the passing runs fail (another seed of the
// pseudo-random choice), for a second directory to diff against.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/toolward/toolward/bench/casegen"
	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

func main() {
	n := flag.Int64("n", 100000, "number of runs (rounded up to whole seeds)")
	out := flag.String("out", "", "result directory to write (new or empty)")
	ncases := flag.Int("cases", 100, "number of cases")
	nmodels := flag.Int("models", 5, "number of models")
	ntemps := flag.Int("temps", 2, "number of temperatures")
	seed := flag.Uint64("seed", 1, "seed of the pseudo-random outcomes")
	drift := flag.Float64("drift", 0, "fraction of passing runs made to fail")
	shards := flag.Int("shards", 0, "write this many shard directories out/shard-i instead of one")
	casesDir := flag.String("casedir", "", "where the case files go (default out/suite); reuse one to diff two directories")
	floorDir := flag.String("floor", "", "instead of writing, decode `DIR`/runs.jsonl with the trace kept raw (the decode floor)")
	flag.Parse()
	if *floorDir != "" {
		if err := floor(*floorDir); err != nil {
			fmt.Fprintln(os.Stderr, "resultgen:", err)
			os.Exit(1)
		}
		return
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "resultgen: -out is required")
		os.Exit(2)
	}
	if err := run(*n, *out, *casesDir, *ncases, *nmodels, *ntemps, *seed, *drift, *shards); err != nil {
		fmt.Fprintln(os.Stderr, "resultgen:", err)
		os.Exit(1)
	}
}

func run(n int64, out, casesDir string, ncases, nmodels, ntemps int, seed uint64, drift float64, shards int) error {
	if casesDir == "" {
		casesDir = filepath.Join(out, "suite")
	}
	casesDir, err := filepath.Abs(casesDir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(casesDir, "cases")); err != nil {
		if err := casegen.Write(casesDir, ncases); err != nil {
			return err
		}
	}
	cfg := config(casesDir, n, ncases, nmodels, ntemps)
	cases, err := schema.LoadCases(cfg.Cases)
	if err != nil {
		return err
	}
	rules := map[string]*score.Rules{}
	meta := &results.Meta{
		Version: results.MetaVersion, Toolward: "bench", ConfigFile: "configs/bench.cue", Config: cfg,
		Cases: map[string]string{}, Rules: map[string]string{}, Created: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		Backend: &results.BackendInfo{Server: "ollama 0.17.4 at http://127.0.0.1:11434", Digests: map[string]string{}},
	}
	for _, c := range cases {
		r, err := score.CaseRules(c)
		if err != nil {
			return err
		}
		rules[c.ID] = r
		meta.Cases[c.ID] = c.RunDigest
		meta.Rules[c.ID] = r.Digest
	}
	for _, m := range cfg.Matrix.Values(cell.Model) {
		meta.Backend.Digests[m] = "sha256:0123456789abcdef0123456789abcdef"
	}
	if meta.ConfigDigest, err = results.DigestConfig(cfg); err != nil {
		return err
	}
	if shards == 0 {
		p, _, err := plan.Build(cfg, cases, nil, "")
		if err != nil {
			return err
		}
		return writeDir(out, meta, p, rules, seed, drift)
	}
	for i := range shards {
		sh := fmt.Sprintf("%d/%d", i, shards)
		p, _, err := plan.Build(cfg, cases, nil, sh)
		if err != nil {
			return err
		}
		m := *meta
		m.Shard = sh
		if err := writeDir(filepath.Join(out, fmt.Sprintf("shard-%d", i)), &m, p, rules, seed, drift); err != nil {
			return err
		}
	}
	return nil
}

// config is the run config: the cases under dir, nmodels models,
// ntemps temperatures and as many seeds as n runs need.
func config(dir string, n int64, ncases, nmodels, ntemps int) *schema.Config {
	per := int64(ncases * nmodels * ntemps)
	nseeds := int((n + per - 1) / per)
	cfg := &schema.Config{
		Name:    "bench",
		Cases:   []string{filepath.Join(dir, "cases", "**", "*.yaml")},
		Server:  schema.Server{Builtin: &schema.Builtin{}},
		Backend: schema.Backend{Ollama: &schema.Ollama{Host: "http://127.0.0.1:11434"}},
		Output:  "results",
	}
	var models, temps, seeds []string
	for i := range nmodels {
		models = append(models, fmt.Sprintf("model-%d:%db", i, i+1))
	}
	for i := range ntemps {
		temps = append(temps, cell.FormatFloat(float64(i)*0.7/float64(max(1, ntemps-1))))
	}
	for i := range nseeds {
		seeds = append(seeds, strconv.Itoa(i+1))
	}
	cfg.Matrix = schema.Matrix{Tools: []schema.ToolSubset{{Name: "needed"}}}.
		With(cell.Model, models...).With(cell.Temperature, temps...).With(cell.Seed, seeds...).
		With(cell.Confirm, string(cell.ConfirmAuto)).With(cell.Descriptions, "default")
	cfg.Limits = schema.Limits{MaxIterations: 8, RunTimeout: schema.Duration{Duration: 120 * time.Second}, CallTimeout: schema.Duration{Duration: 30 * time.Second}, Concurrency: 4, Retries: 2}
	return cfg
}

// writeDir writes dir/config.json and one judged record per run of p.
func writeDir(dir string, meta *results.Meta, p *plan.Plan, rules map[string]*score.Rules, seed uint64, drift float64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	meta.Planned, meta.Total = p.Len(), p.Total()
	if err := results.WriteMeta(dir, meta); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, results.RunsFile))
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := record.NewWriter(bw)
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range p.Len() {
		run := p.Run(i)
		// The outcome depends on the run's position and seed only, so
		// two directories of one plan differ where drift says.
		rng := rand.New(rand.NewPCG(seed, uint64(run.Index)))
		rec := synth(run, rng, start.Add(time.Duration(run.Index)*150*time.Millisecond))
		if rec.Outcome != record.Error {
			if drift > 0 && rng.Float64() < drift {
				breakTrace(&rec.Trace)
			}
			rules[run.Case.ID].Score(rec)
		}
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

var offered = []string{"query_database", "calculate", "send_email"}

// synth builds the record of run: mostly the case's golden calls (a
// pass), sometimes a wrong or missing call (a fail), about 2% errors.
func synth(run plan.Run, rng *rand.Rand, started time.Time) *record.Record {
	c := run.Case
	cl := run.Cell
	cl.ToolCount = len(offered)
	rec := &record.Record{
		ID: run.ID, Case: c.ID, Tags: c.Tags, Cell: cl, Attempts: 1, Started: started,
		Duration: record.Millis(800 + rng.Float64()*4000),
	}
	if rng.Float64() < 0.02 {
		rec.Outcome = record.Error
		rec.Attempts = 3
		rec.Error = &record.InfraError{Kind: "timeout", Message: "run timed out after 120s (limits.run_timeout)"}
		return rec
	}
	tr := &rec.Trace
	tr.Offered = offered
	for i, g := range c.Golden.Calls {
		args := map[string]any{}
		for k, v := range g.Args {
			args[k] = v
		}
		tr.Turns = append(tr.Turns, record.Turn{
			Content:   fmt.Sprintf("I will call %s to find out.", g.Tool),
			ToolCalls: 1, Tokens: record.Tokens{In: 900 + 150*i, Out: 40 + rng.IntN(30)},
			Latency: record.Millis(200 + rng.Float64()*600), DoneReason: "stop",
		})
		tr.Calls = append(tr.Calls, record.Call{
			Turn: i, Tool: g.Tool, Args: args,
			Result:  result(g.Tool, rng),
			Latency: record.Millis(2 + rng.Float64()*20),
		})
	}
	tr.Answer = c.Golden.Answer
	tr.Turns = append(tr.Turns, record.Turn{
		Content: tr.Answer, Tokens: record.Tokens{In: 1400, Out: 25 + rng.IntN(40)},
		Latency: record.Millis(300 + rng.Float64()*900), DoneReason: "stop",
	})
	if rng.Float64() < 0.25 {
		breakTrace(tr)
	}
	for _, t := range tr.Turns {
		rec.Tokens.In += t.Tokens.In
		rec.Tokens.Out += t.Tokens.Out
	}
	return rec
}

// breakTrace makes a passing trace fail: a wrong answer.
func breakTrace(tr *record.Trace) {
	tr.Answer = "I could not work out the total."
	if n := len(tr.Turns); n > 0 {
		tr.Turns[n-1].Content = tr.Answer
	}
}

// result is a plausible tool result text.
func result(tool string, rng *rand.Rand) string {
	switch tool {
	case "query_database":
		return fmt.Sprintf(`{"columns":["sum"],"rows":[[%d]],"row_count":1,"truncated":false,"elapsed_ms":%d}`, 708000, rng.IntN(9)+1)
	case "calculate":
		return `{"expression":"708000 * 0.12","result":84960}`
	}
	return `{"status":"queued","message_id":"msg-` + fmt.Sprint(rng.IntN(1e6)) + `","to":"hr@example.com"}`
}
