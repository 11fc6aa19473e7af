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
	"github.com/toolward/toolward/engine/backend/anthropic"
	"github.com/toolward/toolward/engine/backend/ollama"
	"github.com/toolward/toolward/engine/backend/openai"
	"github.com/toolward/toolward/engine/backend/pool"
	"github.com/toolward/toolward/engine/backend/replay"
	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/results"
	"github.com/toolward/toolward/schema/runconfig"
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

	// SkipContextCheck skips measuring, before any run, whether the
	// longest prompt of each model and tool subset fits the context (see
	// checkContext); runs whose prompt the server cuts are then recorded
	// as context_truncated errors.
	SkipContextCheck bool

	// ThrottleSleep waits out one rate limit (d, or until ctx ends); nil
	// means a timer. Tests make it return at once: the wait still counts
	// against limits.throttle_wait.
	ThrottleSleep func(ctx context.Context, d time.Duration) error

	// Backend replaces the config's backend (tests, benchmarks).
	Backend backend.Backend
	// Simulator replaces the backend of the config's simulator (tests);
	// nil means simulator.backend, or else the job's backend.
	Simulator backend.Backend
	// Judge replaces the backend of the config's judge (tests); nil
	// means judge.backend, or else the job's backend.
	Judge backend.Backend
	// Builtin builds the MCP server for a config's server: builtin; one
	// server serves a whole job, each run connecting with its own session.
	// The engine does not import the bundled server (package mcpserver):
	// cmd/toolward hands it in. Nil makes a builtin config an error before
	// anything runs.
	Builtin func(schema.Builtin) (*server.MCPServer, error)
	// Backoff is the delay before retry attempt n (1-based); nil means
	// exponential from 200ms, capped at 10s, with full jitter.
	Backoff func(n int) time.Duration
	// Now returns the time; nil means time.Now.
	Now func() time.Time
	// MaxConversationBytes bounds each run's conversation (tests); 0
	// means agent.DefaultMaxConversationBytes.
	MaxConversationBytes int
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
	// Unretryable counts the Errors that a retry cannot fix (a cassette
	// miss, a rejected request, a tool the server lacks): resuming sends
	// the same and fails the same way.
	Unretryable int64
	// Interrupted is set when Stop or the context ended the job early;
	// the job can be resumed from Dir.
	Interrupted bool
}

// Remaining is the number of planned runs without a record.
func (r *Result) Remaining() int64 { return r.Planned - r.Skipped - r.Ran }

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
	cfg, err := runconfig.Load(configPath)
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
		r.JudgeConfig = cfg.Judge
		l.Rules[c.ID] = r
	}
	if l.Plan, l.Shard, err = plan.Build(cfg, cases, filters, shard); err != nil {
		return nil, err
	}
	if cfg.Simulator == nil {
		for _, c := range l.Plan.Cases() {
			if c.User.Simulated() {
				return nil, fmt.Errorf("%s: case %s (%s:%d) has a simulated user (user.instructions), but the config names no simulator: add simulator: {model: \"…\"} (the user model; its backend defaults to the config's)", cfg.File, c.ID, c.File, c.Line)
			}
		}
	}
	if cfg.Judge == nil {
		for _, c := range l.Plan.Cases() {
			if r := l.Rules[c.ID]; r != nil && r.HasJudge() {
				return nil, fmt.Errorf("%s: case %s (%s:%d) has a judged answer ({$judge: …}), but the config names no judge: add judge: {model: \"…\"} (the judge model; its backend defaults to the config's)", cfg.File, c.ID, c.File, c.Line)
			}
		}
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
	s, err := newStarting(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer s.close()
	switch err := s.prepare(); {
	case errors.Is(err, errInterrupted):
		return &Result{Planned: s.l.Plan.Len(), Interrupted: true}, nil
	case err != nil:
		return nil, s.redact.Error(err)
	}
	res, err := s.run(ctx)
	return res, s.redact.Error(err)
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
		if results.LockOnly(opts.ResumeDir) {
			return nil, nil, fmt.Errorf("cannot resume %s: it holds only %s (its job stopped before it wrote config.json or any run); start the job again in it with --out %s", opts.ResumeDir, results.LockFile, opts.ResumeDir)
		}
		return nil, nil, err
	}
	if len(opts.Filters) > 0 || opts.Shard != "" || opts.OutDir != "" {
		return nil, nil, errors.New("--resume continues in the result directory with its filters and shard; do not give --filter, --shard or --out")
	}
	if opts.ConfigPath != "" {
		if err := checkResumeConfig(opts.ConfigPath, opts.ResumeDir, meta); err != nil {
			return nil, nil, err
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

// newBackend builds the backend a config names. Ollama, OpenAI and
// Anthropic backends are a pool of their hosts (one host is a pool of one), which
// applies host_concurrency and names the host in every response. block
// is where b is in the config ("backend", "simulator.backend"), for the
// messages that say what to change.
func newBackend(b schema.Backend, block string) (backend.Backend, error) {
	switch {
	case b.Ollama != nil:
		o := b.Ollama
		return newPool(o.PoolHosts(), func(url string) (backend.Backend, error) {
			return ollama.New(ollama.Config{Host: url, NumCtx: o.NumCtx, KeepAlive: o.KeepAlive, Think: o.Think, Block: block})
		})
	case b.OpenAI != nil:
		o := b.OpenAI
		return newPool(o.PoolHosts(), func(url string) (backend.Backend, error) {
			return openai.New(openai.Config{
				BaseURL: url, APIKeyEnv: o.APIKeyEnv, Headers: o.Headers,
				MaxTokens: o.MaxTokens, ToolChoice: o.ToolChoice, ParallelToolCalls: o.ParallelToolCalls, NoStream: !o.Stream,
				Block: block,
			})
		})
	case b.Anthropic != nil:
		a := b.Anthropic
		cfg := anthropic.Config{
			APIKeyEnv: a.APIKeyEnv, Headers: a.Headers, MaxTokens: a.MaxTokens,
			DisableParallelToolUse: a.DisableParallelToolUse, ThinkingBudget: a.ThinkingBudget,
		}
		if tc := a.ToolChoice; tc != nil {
			cfg.ToolChoice, cfg.ToolName = tc.Type, tc.Tool
		}
		return newPool(a.PoolHosts(), func(url string) (backend.Backend, error) {
			c := cfg
			c.BaseURL = url
			return anthropic.New(c)
		})
	case b.Replay != "":
		return replay.New(b.Replay)
	}
	return nil, errors.New("config: backend must set ollama, openai, anthropic or replay")
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

// checkResumeConfig checks a CONFIG given together with --resume dir:
// resume takes the config from dir, so CONFIG may only be the config dir
// ran, unchanged. The error says to omit CONFIG, and why.
func checkResumeConfig(config, dir string, meta *results.Meta) error {
	omit := fmt.Sprintf("--resume takes the config from %s: omit CONFIG", dir)
	if meta.ConfigFile != "" {
		omit = fmt.Sprintf("--resume takes the config from %s (it ran %s): omit CONFIG", dir, meta.ConfigFile)
	}
	same := samePath(config, meta.ConfigFile)
	d, err := configDigest(config)
	switch {
	case err == nil && d == meta.ConfigDigest:
		return nil
	case !same:
		return fmt.Errorf("%s is not the config %s ran; %s, or start a new run with %s", config, dir, omit, config)
	case err != nil:
		return fmt.Errorf("%w\n(%s)", err, omit)
	default:
		return fmt.Errorf("%s has changed since %s was started; %s to continue with the config as it was, or start a new run with the edited one", config, dir, omit)
	}
}

// configDigest loads the run config at path and returns its digest.
func configDigest(path string) (string, error) {
	cfg, err := runconfig.Load(path)
	if err != nil {
		return "", err
	}
	return results.DigestConfig(cfg)
}

// samePath reports whether paths a and b name the same file, as given
// or, when both exist, by identity (a symbolic link, another spelling).
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	if absA, errA := filepath.Abs(a); errA == nil {
		if absB, errB := filepath.Abs(b); errB == nil && absA == absB {
			return true
		}
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
