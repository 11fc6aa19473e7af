package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/ollama"
	"github.com/toolward/toolward/engine/backend/openai"
	"github.com/toolward/toolward/engine/backend/pool"
	"github.com/toolward/toolward/engine/backend/replay"
	"github.com/toolward/toolward/engine/plan"
	"github.com/toolward/toolward/engine/progress"
	"github.com/toolward/toolward/engine/record"
	"github.com/toolward/toolward/engine/results"
	"github.com/toolward/toolward/engine/score"
	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/mcpserver"
	"github.com/toolward/toolward/schema"
)

// Options configure Run. The zero value of each field is documented.
type Options struct {
	// ConfigPath is the run config to execute. Ignored when ResumeDir is
	// set, except that it must then resolve to the same config.
	ConfigPath string
	// ResumeDir continues an earlier job in place: the config, filters and
	// shard come from its config.json, and only the runs without a pass or
	// fail record run. Cases may have been edited since (not added or
	// removed): the runs of a case that now shows the model something
	// else run again; those of a case whose scoring rules changed are
	// re-scored from their records, with no model request.
	ResumeDir string
	// Filters narrow the plan ("key=glob"); see plan.ParseFilter.
	Filters []string
	// Shard, "i/n", runs one slice of the plan; "" runs it all.
	Shard string
	// OutDir, when set, is the new result directory (created; it must not
	// exist or be empty) instead of <output>/<name>/<stamp>.
	OutDir string
	// Workers is the number of runs in flight; 0 means limits.concurrency.
	Workers int
	// RecordDir, when set, records the backend's replies as cassettes
	// there (replay.NewRecorder).
	RecordDir string
	// Progress receives progress lines; nil means none. ProgressTTY
	// redraws one line in place.
	Progress    io.Writer
	ProgressTTY bool
	// Stop, when closed, stops starting runs; runs in flight finish.
	// Closed before the first run (during the preflight, say), it ends
	// the job at once, as cancelling ctx does.
	Stop <-chan struct{}

	// Backend replaces the config's backend (tests, benchmarks).
	Backend backend.Backend
	// Builtin builds the MCP server for server: builtin; nil means
	// Bundled, the bundled server.
	Builtin func(schema.Builtin) (*server.MCPServer, error)
	// Backoff is the delay before retry attempt n (1-based); nil means
	// exponential from 200ms, capped at 10s, with full jitter.
	Backoff func(n int) time.Duration
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

// Result says what a job did.
type Result struct {
	// Dir is the result directory; "" when Stop or ctx ended the job
	// before its first run (nothing was written, a resumed directory is
	// as it was).
	Dir     string
	Planned int64 // runs in the (filtered, sharded) plan
	Skipped int64 // runs already finished (resume)
	Ran     int64 // runs finished by this call
	// Outcomes of the runs finished by this call.
	Pass, Fail, Errors int64
	// Interrupted is set when Stop or the context ended the job early;
	// the job can be resumed from Dir.
	Interrupted bool
}

// Remaining is the number of planned runs without a record.
func (r *Result) Remaining() int64 { return r.Planned - r.Skipped - r.Ran }

// Bundled builds the bundled MCP server (package mcpserver) for a config's
// server: builtin. One server serves a whole job; each run connects with
// its own session, hence its own sandbox.
func Bundled(b schema.Builtin) (*server.MCPServer, error) {
	s, err := mcpserver.New(mcpserver.Options{Corpus: b.Corpus, Catalogs: b.Catalogs})
	if err != nil {
		return nil, err
	}
	return s.MCPServer(), nil
}

// Loaded is a config with its cases, their scoring rules and the plan.
type Loaded struct {
	Config  *schema.Config
	Cases   []*schema.Case
	Rules   map[string]*score.Rules // by case id
	Plan    *plan.Plan              // filtered and sharded
	Filters []string
	Shard   plan.Shard
}

// Load reads a config and its cases and builds the plan, as `toolward
// plan` shows it and Run executes it.
func Load(configPath string, filters []string, shard string) (*Loaded, error) {
	cfg, err := schema.LoadConfig(configPath)
	if err != nil {
		return nil, err
	}
	return load(cfg, filters, shard)
}

func load(cfg *schema.Config, filters []string, shard string) (*Loaded, error) {
	cases, err := schema.LoadCases(cfg.Cases)
	if err != nil {
		return nil, err
	}
	l := &Loaded{Config: cfg, Cases: cases, Rules: make(map[string]*score.Rules, len(cases)), Filters: filters}
	for _, c := range cases {
		r, err := score.CaseRules(c)
		if err != nil {
			return nil, err
		}
		l.Rules[c.ID] = r
	}
	if l.Plan, l.Shard, err = plan.Build(cfg, cases, filters, shard); err != nil {
		return nil, err
	}
	return l, nil
}

// Run executes a job. It returns an error, with no run started, when the
// config, the cases, the backend's preflight or the MCP server fail; once
// runs have started, infrastructure failures become error records and Run
// returns a Result. Stop or ctx ending before the first run returns at
// once an interrupted Result with no Dir, whatever step was under way.
//
// Nothing in Run walks the whole plan before the first run: remaining
// work is the plan's size minus the runs found done, and the scheduler
// checks Stop and ctx at every plan position.
func Run(ctx context.Context, opts Options) (*Result, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	l, meta, err := loadJob(opts)
	if err != nil {
		return nil, err
	}
	cfg := l.Config
	if n := l.Plan.Len(); n > HugePlan && opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "warning: %s: the plan has %d runs, more than %d; even at %d runs/s it would take %s. Narrow it with --filter or --shard, or press Ctrl-C\n",
			cfg.Name, n, HugePlan, hugePlanRate, humanDays(n/hugePlanRate))
	}
	// Until the first run starts, Stop ends the job like ctx: an
	// interrupted preflight, handshake or resume bookkeeping returns at
	// once with nothing run.
	pre, endPre := stopContext(ctx, opts.Stop)
	defer endPre()
	interrupted := func() (*Result, error) {
		return &Result{Planned: l.Plan.Len(), Interrupted: true}, nil
	}
	descs, err := loadDescriptions(cfg, l.Plan.DescriptionSets())
	if err != nil {
		return nil, err
	}

	// The backend, checked before anything runs.
	be := opts.Backend
	if be == nil {
		if be, err = newBackend(cfg.Backend); err != nil {
			return nil, err
		}
	}
	var rec *replay.Recorder
	if opts.RecordDir != "" {
		rec = replay.NewRecorder(be, opts.RecordDir)
		be = rec
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = cfg.Limits.Concurrency
	}
	if workers <= 0 {
		workers = 1
	}
	var info *backend.Info
	if pf, ok := be.(backend.Preflighter); ok {
		pctx, cancel := context.WithTimeout(pre, 2*time.Minute)
		info, err = pf.Preflight(pctx, l.Plan.Models())
		cancel()
		if err != nil && pre.Err() != nil {
			return interrupted()
		}
		if err != nil {
			return nil, fmt.Errorf("backend preflight failed, nothing ran: %w", err)
		}
		if info != nil && opts.Progress != nil {
			for _, w := range info.Warnings {
				fmt.Fprintf(opts.Progress, "warning: backend: %s\n", w)
			}
		}
	}

	if meta != nil && meta.Backend != nil && info != nil {
		for m, d := range meta.Backend.Digests {
			if nd, ok := info.Digests[m]; ok && nd != d {
				return nil, fmt.Errorf("cannot resume %s: model %s is not the one the job started with (digest %.12s, now %.12s); start a new run", opts.ResumeDir, m, d, nd)
			}
		}
	}

	// The result directory: new, or the one being resumed. A new one is
	// removed again if the job fails before its first run.
	dir := opts.ResumeDir
	started := false // set at the first run; a new directory is kept from then on
	if dir == "" {
		if opts.OutDir != "" {
			dir = opts.OutDir
			err = results.CreateAt(dir)
		} else {
			out := cfg.Output
			if out == "" {
				out = "results"
			}
			dir, err = results.Create(out, cfg.Name, now())
		}
		if err != nil {
			return nil, err
		}
		defer func() {
			if !started {
				removeUnused(dir)
			}
		}()
	}

	// The MCP server. A command server's stderr goes to the result dir.
	sopts := session.Options{Server: cfg.Server, ClientVersion: Version()}
	if cfg.Server.Builtin != nil {
		mk := opts.Builtin
		if mk == nil {
			mk = Bundled
		}
		if sopts.Builtin, err = mk(*cfg.Server.Builtin); err != nil {
			return nil, fmt.Errorf("starting the builtin MCP server: %w", err)
		}
	}
	if len(cfg.Server.Command) > 0 {
		f, err := os.OpenFile(filepath.Join(dir, results.StderrFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		sopts.Stderr = f
	}
	// A server that never answers the handshake must not hang the job.
	octx, cancel := context.WithTimeout(pre, openTimeout)
	src, err := session.Open(octx, sopts)
	cancel()
	if err != nil && pre.Err() != nil {
		return interrupted()
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s: %w", openTimeout, err)
		}
		return nil, fmt.Errorf("connecting to the MCP server, nothing ran: %w", err)
	}
	defer src.Close()
	if err := checkTools(src, l, descs, opts.Progress); err != nil {
		return nil, err
	}

	res := &Result{Dir: dir, Planned: l.Plan.Len()}
	var done map[int64]struct{} // plan positions with a pass or fail record
	if opts.ResumeDir != "" {
		if done, err = resumeDone(pre, dir, l, opts.Progress); err != nil {
			if pre.Err() != nil {
				return interrupted()
			}
			return nil, err
		}
		if info != nil {
			meta.Backend = info
		}
		meta.Cases, meta.Rules = caseDigests(l)
	} else {
		digest, err := results.DigestConfig(cfg)
		if err != nil {
			return nil, err
		}
		meta = &results.Meta{
			Version: results.MetaVersion, Toolward: Version(), ConfigFile: opts.ConfigPath, ConfigDigest: digest, Config: cfg,
			Filters: opts.Filters, Shard: l.Shard.String(), Planned: l.Plan.Len(), Total: l.Plan.Total(),
			Backend: info, Created: now().UTC(),
		}
		meta.Cases, meta.Rules = caseDigests(l)
	}
	recordServer(meta, src, opts.Progress)
	if err := results.WriteMeta(dir, meta); err != nil {
		return nil, err
	}
	f, err := results.OpenRuns(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	j := &job{
		l: l, be: be, src: src, descs: descs, w: record.NewWriter(f), res: res,
		backoff: opts.Backoff, now: now, tools: map[toolsKey]*toolsEntry{},
	}
	if j.backoff == nil {
		j.backoff = defaultBackoff
	}
	// Counted from what was done, never by walking the plan, so the first
	// run starts at once however large the plan.
	res.Skipped = int64(len(done))
	todo := res.Planned - res.Skipped
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "%s: %d runs to do", cfg.Name, todo)
		if res.Skipped > 0 {
			fmt.Fprintf(opts.Progress, " (%d of %d already done)", res.Skipped, res.Planned)
		}
		fmt.Fprintf(opts.Progress, " on %d workers, results in %s\n", workers, dir)
		j.meter = progress.New(opts.Progress, todo, progress.Options{TTY: opts.ProgressTTY, Now: now})
	}
	started = true
	endPre()
	j.schedule(ctx, opts.Stop, workers, func(i int64) bool { _, ok := done[i]; return ok })
	if j.meter != nil {
		j.meter.Finish()
	}
	if rec != nil {
		if err := rec.Close(); err != nil {
			return res, fmt.Errorf("writing cassettes to %s: %w", opts.RecordDir, err)
		}
	}
	if err := j.writeErr.Load(); err != nil {
		return res, fmt.Errorf("writing %s: %w", filepath.Join(dir, results.RunsFile), *err)
	}
	if res.Remaining() > 0 {
		res.Interrupted = true
	}
	return res, nil
}

// HugePlan is the plan size above which Run warns, before anything runs,
// that the job cannot finish in any sane time (hugePlanRate runs/s, a fast
// local model, would take over a day).
const HugePlan = 10_000_000

const hugePlanRate = 100

// humanDays spells a number of seconds in days, or hours below two days.
func humanDays(secs int64) string {
	if h := secs / 3600; h < 48 {
		return fmt.Sprintf("%d hours", h)
	}
	return fmt.Sprintf("%d days", secs/86400)
}

// stopContext returns a context that ends with ctx, or when stop is
// closed; the cancel function releases it.
func stopContext(ctx context.Context, stop <-chan struct{}) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(ctx)
	if stop != nil {
		go func() {
			select {
			case <-stop:
				cancel()
			case <-c.Done():
			}
		}()
	}
	return c, cancel
}

// loadJob loads what Run executes: the config at opts.ConfigPath, or on
// resume the one in the result directory's config.json (returned as
// meta), after checking that the given config has not changed since the
// job started and that no case was added or removed. Edited cases are
// fine: resumeDone re-scores or reruns their runs.
func loadJob(opts Options) (*Loaded, *results.Meta, error) {
	if opts.ResumeDir == "" {
		l, err := Load(opts.ConfigPath, opts.Filters, opts.Shard)
		return l, nil, err
	}
	meta, err := results.ReadMeta(opts.ResumeDir)
	if err != nil {
		return nil, nil, err
	}
	if len(opts.Filters) > 0 || opts.Shard != "" || opts.OutDir != "" {
		return nil, nil, errors.New("--resume continues in the result directory with its filters and shard; do not give --filter, --shard or --out")
	}
	if opts.ConfigPath != "" {
		cfg, err := schema.LoadConfig(opts.ConfigPath)
		if err != nil {
			return nil, nil, err
		}
		d, err := results.DigestConfig(cfg)
		if err != nil {
			return nil, nil, err
		}
		if d != meta.ConfigDigest {
			return nil, nil, fmt.Errorf("%s has changed since %s was started; resume with the config it ran (omit the config argument) or start a new run", opts.ConfigPath, opts.ResumeDir)
		}
	}
	if meta.Legacy() {
		return nil, nil, fmt.Errorf("cannot resume %s: %w", opts.ResumeDir, results.ErrLegacy)
	}
	l, err := load(meta.Config, meta.Filters, meta.Shard)
	if err != nil {
		return nil, nil, err
	}
	if err := sameCaseIDs(meta.Cases, l.Plan.Cases()); err != nil {
		return nil, nil, fmt.Errorf("cannot resume %s: %w", opts.ResumeDir, err)
	}
	return l, meta, nil
}

// removeUnused removes a result directory that no run wrote to. A command
// server's stderr log goes with it: when the server failed to start, the
// error (session.Error.Stderr) already quotes the log's first lines.
func removeUnused(dir string) {
	os.RemoveAll(dir)
}

func loadDescriptions(cfg *schema.Config, names []string) (map[string]toolset.Descriptions, error) {
	out := map[string]toolset.Descriptions{}
	for _, n := range names {
		path := schema.DescriptionFile(cfg, n)
		if path == "" {
			continue
		}
		d, err := toolset.LoadDescriptions(path)
		if err != nil {
			return nil, fmt.Errorf("description set %s: %w", n, err)
		}
		out[n] = d
	}
	return out, nil
}

// newBackend builds the backend a config names. Ollama and OpenAI
// backends are a pool of their hosts (one host is a pool of one), which
// applies host_concurrency and names the host in every response.
func newBackend(b schema.Backend) (backend.Backend, error) {
	switch {
	case b.Ollama != nil:
		o := b.Ollama
		return newPool(o.PoolHosts(), func(url string) (backend.Backend, error) {
			return ollama.New(ollama.Config{Host: url, NumCtx: o.NumCtx, KeepAlive: o.KeepAlive, Think: o.Think})
		})
	case b.OpenAI != nil:
		o := b.OpenAI
		return newPool(o.PoolHosts(), func(url string) (backend.Backend, error) {
			return openai.New(openai.Config{
				BaseURL: url, APIKeyEnv: o.APIKeyEnv, Headers: o.Headers,
				MaxTokens: o.MaxTokens, ToolChoice: o.ToolChoice, ParallelToolCalls: o.ParallelToolCalls, NoStream: !o.Stream,
			})
		})
	case b.Replay != "":
		return replay.New(b.Replay)
	}
	return nil, errors.New("config: backend must set ollama, openai or replay")
}

// newPool makes a pool of hosts, one backend per host from mk.
func newPool(hosts []schema.PoolHost, mk func(url string) (backend.Backend, error)) (backend.Backend, error) {
	members := make([]pool.Host, len(hosts))
	for i, h := range hosts {
		be, err := mk(h.URL)
		if err != nil {
			return nil, err
		}
		members[i] = pool.Host{Name: h.URL, Backend: be, Limit: h.Concurrency, Models: h.Models}
	}
	return pool.New(members, pool.Options{})
}

// openTimeout bounds connecting to the MCP server and listing its tools
// (a command server may first have to be downloaded, as with npx -y).
var openTimeout = 2 * time.Minute

func defaultBackoff(n int) time.Duration {
	d := 200 * time.Millisecond << min(n-1, 6)
	d = min(d, 10*time.Second)
	return time.Duration(rand.Int64N(int64(d)) + 1)
}
