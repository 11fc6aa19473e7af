package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/replay"
	"github.com/toolward/toolward/engine/judge"
	"github.com/toolward/toolward/engine/progress"
	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
	"github.com/toolward/toolward/schema/runconfig"
)

// errInterrupted is returned by a step of starting when Stop or ctx ended the
// job before its first run; Run turns it into an interrupted Result.
var errInterrupted = errors.New("interrupted before the first run")

// starting is a job from loading to its first run. prepare runs the steps
// of the package doc in order, each adding what the next needs; run
// schedules the runs; close releases, in reverse order, what the steps
// opened, and removes a new result directory no run wrote to.
type starting struct {
	opts Options
	now  func() time.Time
	// pre ends with ctx, or when Stop closes, until the first run: an
	// interrupted preflight, handshake or resume bookkeeping returns at
	// once with nothing run.
	pre    context.Context
	endPre context.CancelFunc

	l     *Loaded
	meta  *results.Meta // read from the resumed directory, or built by bookkeep
	descs map[string]toolset.Descriptions
	be    backend.Backend
	sim   backend.Backend // the simulated user's backend; nil without a simulator
	judge backend.Backend // the judge's backend; nil without a judge
	// judgeInfo is the judge backend's preflight facts; nil without a
	// judged answer in the plan or a preflight.
	judgeInfo *backend.Info
	rec       *replay.Recorder // set with Options.RecordDir
	info      *backend.Info    // the backend's preflight facts; nil without a preflight
	// simInfo is the simulator backend's preflight facts; nil without a
	// simulated user in the plan or a preflight.
	simInfo *backend.Info
	dir     string
	src     *session.Source
	done    map[int64]struct{} // plan positions with a pass or fail record (resume)

	started  bool     // set at the first run: a new directory is kept from then on
	cleanups []func() // run by close, last first
	// redact takes the config's secrets out of what the job records
	// (runs.jsonl, the server's stderr log) and of Run's error.
	redact *redactor
}

// newStarting loads the job (step 1 and 2: config, cases, plan).
func newStarting(ctx context.Context, opts Options) (*starting, error) {
	l, meta, err := loadJob(opts)
	if err != nil {
		return nil, err
	}
	s := &starting{opts: opts, now: opts.Now, l: l, meta: meta, redact: newRedactor(secretsOf(l.Config))}
	if s.now == nil {
		s.now = time.Now
	}
	s.pre, s.endPre = stopContext(ctx, opts.Stop)
	s.cleanups = append(s.cleanups, s.endPre)
	return s, nil
}

// close releases what the steps opened, last first.
func (s *starting) close() {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
}

// stopped reports whether Stop or ctx ended the job before its first
// run: a step that failed then returns errInterrupted, not its error.
func (s *starting) stopped() bool { return s.pre.Err() != nil }

// prepare runs every step before the first run (3 to 5 of the package
// doc). An error means nothing ran.
func (s *starting) prepare() error {
	s.warnHugePlan()
	steps := []func() error{
		s.loadDescriptions, s.checkBuiltin, s.checkIsolation, s.resumeRuns, s.openBackend, s.preflight, s.checkModels,
		s.openDir, s.openServer, s.checkTools, s.checkContext, s.bookkeep,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func (s *starting) warnHugePlan() {
	if n := s.l.Plan.Len(); n > HugePlan && s.opts.Progress != nil {
		fmt.Fprintf(s.opts.Progress, "warning: %s: the plan has %d runs, more than %d; even at %d runs/s it would take %s. Narrow it with --filter or --shard, or press Ctrl-C\n",
			s.l.Config.Name, n, HugePlan, hugePlanRate, humanDays(n/hugePlanRate))
	}
}

func (s *starting) loadDescriptions() (err error) {
	s.descs, err = loadDescriptions(s.l.Config, s.l.Plan.Values(cell.Descriptions))
	return err
}

// checkBuiltin refuses a builtin server config when the caller handed in
// no server to build (Options.Builtin), before any backend is contacted.
func (s *starting) checkBuiltin() error {
	if s.l.Config.Server.Builtin != nil && s.opts.Builtin == nil {
		return errors.New("the config asks for the builtin MCP server (server: builtin), but this program does not bundle one (engine.Options.Builtin is nil); use the toolward command, or a command or url server")
	}
	return nil
}

// checkIsolation refuses state checks the runs cannot give: against a
// server whose runs share state, or a reset with several runs in flight.
func (s *starting) checkIsolation() error {
	if e := runconfig.StateIsolation(s.l.Config, s.l.Plan.Cases(), s.workers()); e != nil {
		return e
	}
	return nil
}

// openBackend builds the config's backend (or takes Options.Backend) and
// the simulator's (Options.Simulator, simulator.backend, or the same),
// both recorded into one set of cassettes with Options.RecordDir.
func (s *starting) openBackend() error {
	s.be = s.opts.Backend
	if s.be == nil {
		be, err := newBackend(s.l.Config.Backend, "backend")
		if err != nil {
			return err
		}
		s.be = be
	}
	// Rate limits are waited out here, above any pool (which routes
	// around a throttled host first).
	s.be = &backend.Throttle{Backend: s.be, Sleep: s.opts.ThrottleSleep}
	if sim := s.l.Config.Simulator; sim != nil {
		s.sim = s.opts.Simulator
		switch {
		case s.sim != nil:
		case sim.Backend != nil:
			be, err := newBackend(*sim.Backend, "simulator.backend")
			if err != nil {
				return fmt.Errorf("simulator: %w", err)
			}
			s.sim = &backend.Throttle{Backend: be, Sleep: s.opts.ThrottleSleep}
		default:
			s.sim = s.be
		}
	}
	if jc := s.l.Config.Judge; jc != nil {
		s.judge = s.opts.Judge
		switch {
		case s.judge != nil:
		case jc.Backend != nil:
			be, err := newBackend(*jc.Backend, "judge.backend")
			if err != nil {
				return fmt.Errorf("judge: %w", err)
			}
			s.judge = &backend.Throttle{Backend: be, Sleep: s.opts.ThrottleSleep}
		default:
			s.judge = s.be
		}
	}
	if s.opts.RecordDir != "" {
		s.rec = replay.NewRecorder(s.be, s.opts.RecordDir)
		if s.sim != nil {
			s.sim = s.rec.Wrap(s.sim)
		}
		if s.judge != nil {
			s.judge = s.rec.Wrap(s.judge)
		}
		s.be = s.rec
	}
	return nil
}

// preflightTimeout bounds the backend's preflight.
const preflightTimeout = 2 * time.Minute

// resumeRuns, on resume, holds the result directory and compacts its
// runs.jsonl to the runs that need not run again (re-scoring those judged
// by older rules; see resumeDone), before any server is contacted: a job
// with nothing left to run contacts no model server (nothingLeft).
func (s *starting) resumeRuns() error {
	if s.opts.ResumeDir == "" {
		return nil
	}
	s.dir = s.opts.ResumeDir
	if err := s.lockDir(); err != nil {
		return err
	}
	done, err := resumeDone(s.pre, s.dir, s.l, s.opts.Progress)
	if err != nil && s.stopped() {
		return errInterrupted
	}
	if err != nil {
		return err
	}
	s.done = done
	return nil
}

// nothingLeft reports whether a resumed job has every run of its plan
// done already: then no model server is asked anything (no preflight,
// no context check), and a server that is down does not matter.
func (s *starting) nothingLeft() bool {
	return s.opts.ResumeDir != "" && int64(len(s.done)) >= s.l.Plan.Len()
}

// preflight checks the backend before anything runs: a server that is
// down or a missing model stops the job.
func (s *starting) preflight() error {
	pf, ok := s.be.(backend.Preflighter)
	if !ok || s.nothingLeft() {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.pre, preflightTimeout)
	var info *backend.Info
	err := s.retried(ctx, func() (err error) { info, err = pf.Preflight(ctx, s.l.Plan.Values(cell.Model)); return err })
	cancel()
	switch {
	case err != nil && s.stopped():
		return errInterrupted
	case err != nil:
		return fmt.Errorf("backend preflight failed, nothing ran: %w", err)
	}
	if err := s.preflightSimulator(); err != nil {
		return err
	}
	if err := s.preflightJudge(); err != nil {
		return err
	}
	s.info = info
	if info != nil && s.opts.Progress != nil {
		for _, w := range info.Warnings {
			fmt.Fprintf(s.opts.Progress, "warning: backend: %s\n", w)
		}
	}
	return nil
}

// preflightSimulator checks that the simulator's backend serves its
// model, when the plan has a simulated user, as preflight checks the
// job's backend (the same Preflight of the same kinds of backend: server
// reachable, model present); its facts go to config.json as Meta.Simulator.
func (s *starting) preflightSimulator() error {
	sim := s.l.Config.Simulator
	if s.sim == nil || !s.planSimulates() {
		return nil
	}
	pf, ok := s.sim.(backend.Preflighter)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.pre, preflightTimeout)
	var info *backend.Info
	err := s.retried(ctx, func() (err error) { info, err = pf.Preflight(backend.ToolFree(ctx), []string{sim.Model}); return err })
	cancel()
	switch {
	case err != nil && s.stopped():
		return errInterrupted
	case err != nil:
		return fmt.Errorf("simulator preflight failed (model %s), nothing ran: %w", sim.Model, err)
	}
	s.simInfo = info
	if info != nil && s.opts.Progress != nil {
		for _, w := range info.Warnings {
			fmt.Fprintf(s.opts.Progress, "warning: simulator backend: %s\n", w)
		}
	}
	return nil
}

// preflightJudge checks that the judge's backend serves its model, when
// the plan has a judged answer, as preflightSimulator does for the
// simulator; its facts go to config.json as Meta.Judge, and its model
// digest onto every verdict.
func (s *starting) preflightJudge() error {
	jc := s.l.Config.Judge
	if s.judge == nil || !s.planJudges() {
		return nil
	}
	pf, ok := s.judge.(backend.Preflighter)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.pre, preflightTimeout)
	info, err := pf.Preflight(ctx, []string{jc.Model})
	cancel()
	switch {
	case err != nil && s.stopped():
		return errInterrupted
	case err != nil:
		return fmt.Errorf("judge preflight failed (model %s), nothing ran: %w", jc.Model, err)
	}
	s.judgeInfo = info
	if info != nil && s.opts.Progress != nil {
		for _, w := range info.Warnings {
			fmt.Fprintf(s.opts.Progress, "warning: judge backend: %s\n", w)
		}
	}
	return nil
}

// planJudges reports whether a case of the plan has a judged answer.
func (s *starting) planJudges() bool {
	for _, c := range s.l.Plan.Cases() {
		if r := s.l.Rules[c.ID]; r != nil && r.HasJudge() {
			return true
		}
	}
	return false
}

// planSimulates reports whether a case of the plan has a simulated user.
func (s *starting) planSimulates() bool {
	for _, c := range s.l.Plan.Cases() {
		if c.User.Simulated() {
			return true
		}
	}
	return false
}

// checkModels refuses to resume with a model (the simulator's too) whose
// digest changed since the job started.
func (s *starting) checkModels() error {
	if s.meta == nil {
		return nil
	}
	for _, b := range []struct {
		what      string
		then, now *backend.Info
	}{{"model", s.meta.Backend, s.info}, {"simulator model", s.meta.Simulator, s.simInfo}, {"judge model", s.meta.Judge, s.judgeInfo}} {
		if b.then == nil || b.now == nil {
			continue
		}
		for _, m := range slices.Sorted(maps.Keys(b.then.Digests)) {
			d := b.then.Digests[m]
			if nd, ok := b.now.Digests[m]; ok && nd != d {
				return fmt.Errorf("cannot resume %s: %s %s is not the one the job started with (digest %.12s, now %.12s); start a new run", s.opts.ResumeDir, b.what, m, d, nd)
			}
		}
	}
	return nil
}

// openDir makes the result directory: Options.OutDir, or
// <output>/<name>/<stamp>; on resume, the one resumed. A new one is
// removed again by close if no run started, with the parents it made
// (results/, results/<name>/) when they are empty; an --out directory
// that existed is emptied instead, and its parents are left alone.
func (s *starting) openDir() error {
	if s.opts.ResumeDir != "" {
		return nil // held by resumeRuns
	}
	var err error
	var made []string // directories above the result directory this job creates
	existed := false  // the result directory is an --out that existed (empty)
	if s.opts.OutDir != "" {
		s.dir = s.opts.OutDir
		_, serr := os.Stat(s.dir)
		existed = serr == nil
		err = results.CreateAt(s.dir)
	} else {
		out := s.l.Config.Output
		if out == "" {
			out = "results"
		}
		made = missingDirs(filepath.Join(out, s.l.Config.Name))
		s.dir, err = results.Create(out, s.l.Config.Name, s.now())
	}
	if err != nil {
		removeEmpty(made)
		return err
	}
	// Locked before the cleanup that empties it is registered: an --out
	// directory another job took at the same moment is left alone.
	if err := s.lockDir(); err != nil {
		return err
	}
	dir := s.dir
	s.cleanups = append(s.cleanups, func() {
		switch {
		case s.started:
		case existed:
			emptyDir(dir)
		default:
			removeUnused(dir)
			removeEmpty(made)
		}
	})
	return nil
}

// lockDir holds the result directory for the whole job (results.Lock),
// released by close after everything else: a second job on it, a
// --resume of the same directory say, refuses at once.
func (s *starting) lockDir() error {
	unlock, err := results.Lock(s.dir)
	if err != nil {
		return err
	}
	s.cleanups = append(s.cleanups, unlock)
	return nil
}

// missingDirs returns dir and those of its ancestors that do not exist
// yet, deepest first: the directories creating dir would make.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return out
		}
		out = append(out, d)
		up := filepath.Dir(d)
		if up == d {
			return out
		}
		d = up
	}
}

// emptyDir removes what this job wrote into dir, an --out directory that
// was empty before it, and keeps dir.
func emptyDir(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// removeEmpty removes dirs in order while they are empty: the parents
// missingDirs found, once the result directory below them is gone. A
// directory that something else wrote to meanwhile stays, and so do the
// ones above it.
func removeEmpty(dirs []string) {
	for _, d := range dirs {
		if os.Remove(d) != nil {
			return
		}
	}
}

// openServer starts the builtin server or connects to the config's one
// and lists its tools; a server that never answers the handshake does not
// hang the job. A command server's stderr goes to the result directory,
// at most MaxStderrBytes of it.
func (s *starting) openServer() error {
	cfg := s.l.Config
	sopts := session.Options{Server: cfg.Server, ClientVersion: Version(), HandshakeTimeout: cfg.Limits.CallTimeout.Duration, Warm: cmp.Or(cfg.Server.Warm, s.workers())}
	if cfg.Server.Builtin != nil {
		srv, err := s.opts.Builtin(*cfg.Server.Builtin)
		if err != nil {
			return fmt.Errorf("starting the builtin MCP server: %w", err)
		}
		sopts.Builtin = srv
	}
	if len(cfg.Server.Command) > 0 {
		f, err := os.OpenFile(filepath.Join(s.dir, results.StderrFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		s.cleanups = append(s.cleanups, func() { f.Close() })
		log := &cappedLog{w: s.redact.Writer(f), limit: MaxStderrBytes}
		if st, err := f.Stat(); err == nil {
			log.written = st.Size() // a resumed job's log already holds this much
		}
		sopts.Stderr = log
	}
	ctx, cancel := context.WithTimeout(s.pre, openTimeout)
	src, err := session.Open(ctx, sopts)
	cancel()
	if err != nil && s.stopped() {
		return errInterrupted
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s: %w", openTimeout, err)
		}
		return fmt.Errorf("connecting to the MCP server, nothing ran: %w", err)
	}
	s.src = src
	s.cleanups = append(s.cleanups, func() { src.Close() })
	return nil
}

func (s *starting) checkTools() error {
	return checkTools(s.src, s.l, s.descs, s.opts.Progress)
}

// bookkeep writes config.json: on resume, with the preflight's facts
// (runs.jsonl was compacted by resumeRuns); for a new job, a new Meta.
func (s *starting) bookkeep() error {
	if s.opts.ResumeDir != "" {
		if s.info != nil {
			s.meta.Backend = s.info
		}
		if s.simInfo != nil {
			s.meta.Simulator = s.simInfo
		}
		if s.judgeInfo != nil {
			s.meta.Judge = s.judgeInfo
		}
	} else {
		m, err := s.newMeta()
		if err != nil {
			return err
		}
		s.meta = m
	}
	s.meta.Cases, s.meta.Rules = caseDigests(s.l)
	recordServer(s.meta, s.src, s.opts.Progress)
	return results.WriteMeta(s.dir, s.meta)
}

// newMeta is a new job's config.json.
func (s *starting) newMeta() (*results.Meta, error) {
	cfg := s.l.Config
	digest, err := results.DigestConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &results.Meta{
		Version: results.MetaVersion, Toolward: Version(), ConfigFile: s.opts.ConfigPath, ConfigDigest: digest, Config: cfg,
		Filters: s.opts.Filters, Shard: s.l.Shard.String(), Planned: s.l.Plan.Len(), Total: s.l.Plan.Total(),
		Backend: s.info, Simulator: s.simInfo, Judge: s.judgeInfo, Created: s.now().UTC(),
	}, nil
}

// workers is the number of runs in flight: Options.Workers, else
// limits.concurrency, at least 1.
func (s *starting) workers() int {
	w := s.opts.Workers
	if w <= 0 {
		w = s.l.Config.Limits.Concurrency
	}
	// More workers than runs, or than MaxWorkers, would only be idle
	// goroutines (-j 100000000 must not start a hundred million).
	return max(min(w, int(min(s.l.Plan.Len(), MaxWorkers))), 1)
}

// MaxWorkers bounds the runs in flight of one job, whatever -j or
// limits.concurrency ask.
const MaxWorkers = 1024

// run starts the runs (step 6 of the package doc) and waits for them.
func (s *starting) run(ctx context.Context) (*Result, error) {
	f, err := results.OpenRuns(s.dir)
	if err != nil {
		return nil, err
	}
	s.cleanups = append(s.cleanups, func() { f.Close() })
	res := &Result{Dir: s.dir, Planned: s.l.Plan.Len()}
	j := &job{
		l: s.l, be: s.be, sim: s.sim, judge: s.judgeAsker(), src: s.src, descs: s.descs, w: record.NewWriter(s.redact.Writer(f)), res: res,
		backoff: s.opts.Backoff, now: s.now, tools: map[toolsKey]*toolsEntry{}, want: map[wantKey]*wantEntry{},
		maxConv: s.opts.MaxConversationBytes,
	}
	if j.backoff == nil {
		j.backoff = defaultBackoff
	}
	// Counted from what was done, never by walking the plan, so the first
	// run starts at once however large the plan.
	res.Skipped = int64(len(s.done))
	workers := s.workers()
	if s.opts.Progress != nil {
		j.meter = s.announce(s.opts.Progress, res, workers)
	}
	s.started = true
	s.endPre()
	j.schedule(ctx, s.opts.Stop, workers, func(i int64) bool { _, ok := s.done[i]; return ok })
	if j.meter != nil {
		j.meter.Finish()
	}
	return res, s.finish(j)
}

// announce prints the job's first line and returns its progress meter.
func (s *starting) announce(w io.Writer, res *Result, workers int) *progress.Meter {
	todo := res.Planned - res.Skipped
	fmt.Fprintf(w, "%s: %d runs to do", s.l.Config.Name, todo)
	if res.Skipped > 0 {
		fmt.Fprintf(w, " (%d of %d already done)", res.Skipped, res.Planned)
	}
	fmt.Fprintf(w, " on %d workers, results in %s\n", workers, s.dir)
	return progress.New(w, todo, progress.Options{TTY: s.opts.ProgressTTY, Now: s.now})
}

// finish flushes the cassettes, reports a failed write of runs.jsonl and
// marks a job that did not do every run as interrupted.
func (s *starting) finish(j *job) error {
	if s.rec != nil {
		if err := s.rec.Close(); err != nil {
			return fmt.Errorf("writing cassettes to %s: %w", s.opts.RecordDir, err)
		}
	}
	if err := j.writeErr.Load(); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(s.dir, results.RunsFile), *err)
	}
	if j.res.Remaining() > 0 {
		j.res.Interrupted = true
	}
	return nil
}

// judgeAsker is the job's judge: the judge backend with the judge model's
// digest from its preflight; nil without a judge.
func (s *starting) judgeAsker() *judge.Judge {
	if s.judge == nil {
		return nil
	}
	j := &judge.Judge{Backend: s.judge}
	if s.judgeInfo != nil {
		j.ModelDigest = s.judgeInfo.Digests[s.l.Config.Judge.Model]
	}
	return j
}
