package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolward/toolward/engine/agent"
	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/judge"
	"github.com/toolward/toolward/engine/progress"
	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/engine/user"
	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
)

// job is one Run in progress.
type job struct {
	l       *Loaded
	be      backend.Backend
	sim     backend.Backend // the simulated user's; nil without a simulator
	judge   *judge.Judge    // asks the config's judge; nil without a judge
	src     *session.Source
	descs   map[string]toolset.Descriptions
	w       *record.Writer
	res     *Result
	meter   *progress.Meter
	backoff func(int) time.Duration
	now     func() time.Time
	maxConv int // Options.MaxConversationBytes

	writeErr atomic.Pointer[error]

	mu    sync.Mutex
	tools map[toolsKey]*toolsEntry
	want  map[wantKey]*wantEntry // reference results of equals probes (state.go)
}

// toolsKey identifies one offered tool list: it depends only on the case,
// the subset and the description set.
type toolsKey struct{ caseID, subset, descs string }

type toolsEntry struct {
	once  sync.Once
	tools []backend.Tool
	err   error
}

// schedule feeds the plan's runs, but those done reports (by plan index),
// to workers until the plan ends, stop is closed or ctx is cancelled. It
// checks stop and ctx before every index, skipped ones included, so even
// a stretch of a billion done runs reacts at once.
func (j *job) schedule(ctx context.Context, stop <-chan struct{}, workers int, done func(i int64) bool) {
	runs := make(chan plan.Run)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range runs {
				j.execute(ctx, r)
			}
		}()
	}
	p := j.l.Plan
feed:
	for i := range p.Len() {
		// Stop wins over a ready worker (select picks at random).
		select {
		case <-stop:
			break feed
		case <-ctx.Done():
			break feed
		default:
		}
		if done(i) {
			continue
		}
		r := p.Run(i)
		select {
		case runs <- r:
		case <-stop:
			break feed
		case <-ctx.Done():
			break feed
		}
	}
	close(runs)
	wg.Wait()
}

// offered returns the run's tools, computed once per (case, subset,
// description set), however many workers ask at once.
func (j *job) offered(r plan.Run) ([]backend.Tool, error) {
	k := toolsKey{r.Case.ID, r.Subset.Name, r.Cell.Descriptions}
	j.mu.Lock()
	e, ok := j.tools[k]
	if !ok {
		e = &toolsEntry{}
		j.tools[k] = e
	}
	j.mu.Unlock()
	e.once.Do(func() {
		avoid := r.Case.Avoid
		if u := r.Case.User; u != nil && len(u.AddTools) > 0 {
			// A tool offered from a later turn is no distractor before it.
			avoid = slices.Clone(avoid)
			for _, a := range u.AddTools {
				avoid = append(avoid, a.Tools...)
			}
		}
		ts, err := toolset.Select(j.src.Tools(), r.Case.ID, r.Case.Needs, avoid, r.Subset)
		if err != nil {
			e.err = err
			return
		}
		ts = j.descs[r.Cell.Descriptions].Apply(ts)
		e.tools = make([]backend.Tool, len(ts))
		for i, t := range ts {
			e.tools[i] = backend.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
		}
	})
	return e.tools, e.err
}

// execute runs one run to a record, retrying infrastructure errors. A run
// cut short by ctx is not recorded.
func (j *job) execute(ctx context.Context, r plan.Run) {
	cfg := j.l.Config
	started := j.now()
	rec := &record.Record{ID: r.ID, Case: r.Case.ID, Tags: r.Case.Tags, Cell: r.Cell, Started: started.UTC()}
	tools, err := j.offered(r)
	if err != nil {
		rec.Outcome = record.Error
		rec.Attempts = 1
		rec.Error = &record.InfraError{Kind: "mcp", Message: err.Error()}
		atomic.AddInt64(&j.res.Unretryable, 1) // the server's tools do not change on a retry
		j.finish(rec, started)
		return
	}
	rec.Cell.ToolCount = len(tools)
	in := agent.Input{
		Case: r.Case, Cell: rec.Cell, Tools: tools,
		MaxIterations: cfg.Limits.MaxIterations, CallTimeout: cfg.Limits.CallTimeout.Duration,
		Options: cellOptions(cfg, rec.Cell.Options), MaxConversationBytes: j.maxConv,
	}
	in.User, in.MaxUserTurns = j.user(r, rec.Cell)
	if in.Added, err = j.added(r); err != nil {
		rec.Outcome = record.Error
		rec.Attempts = 1
		rec.Error = &record.InfraError{Kind: "mcp", Message: err.Error()}
		atomic.AddInt64(&j.res.Unretryable, 1)
		j.finish(rec, started)
		return
	}
	if r.Case.ExecuteUnoffered {
		in.Unoffered = make(map[string]bool, len(j.src.Tools()))
		for _, t := range j.src.Tools() {
			in.Unoffered[t.Name] = true
		}
	}
	maxAttempts := max(cfg.Limits.Retries, 0) + 1
	// run_timeout bounds the whole run: every attempt and every wait
	// between them (a backend's own waits, such as a 429's, see the
	// deadline too).
	rctx := ctx
	if d := cfg.Limits.RunTimeout.Duration; d > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeoutCause(ctx, d, errRunTimeout)
		defer cancel()
	}
	// One throttle budget for the whole run, whatever its attempts.
	tlog := &backend.ThrottleLog{Budget: cfg.Limits.ThrottleWait.Duration}
	if j.meter != nil {
		tlog.Note = j.meter.Throttled
	}
	rctx = backend.WithThrottleLog(rctx, tlog)
	for attempt := 1; ; attempt++ {
		rec.Attempts = attempt
		out, st, err := j.attempt(rctx, in)
		if err == nil {
			rec.Trace, rec.Tokens = out.Trace, out.Tokens
			rec.Trace.OutOfTurns, rec.Trace.OutOfUserTurns = out.OutOfTurns, out.OutOfUserTurns
			rec.State = st
			rules := j.l.Rules[rec.Case]
			if !j.judged(ctx, rctx, rec, rules, maxAttempts) {
				return // aborted: lost in flight, run again on resume
			}
			rules.Score(rec)
			break
		}
		if ctx.Err() != nil {
			return // aborted: lost in flight, run again on resume
		}
		ie, retry := classify(err)
		wait := max(j.backoff(attempt), retryAfter(err))
		if dl, ok := rctx.Deadline(); ok && retry && attempt < maxAttempts && time.Until(dl) <= wait {
			// The wait would use up the run's time: stop now.
			ie.Message += fmt.Sprintf(" (not retried: the %s wait before the next attempt would pass limits.run_timeout)", wait.Round(time.Millisecond))
			attempt = maxAttempts
		}
		if !retry || attempt >= maxAttempts || rctx.Err() != nil {
			rec.Outcome = record.Error
			rec.Error = ie
			if !retry {
				atomic.AddInt64(&j.res.Unretryable, 1)
			}
			if out != nil {
				rec.Trace, rec.Tokens = out.Trace, out.Tokens
			}
			break
		}
		if backend.Sleep(rctx, wait) != nil {
			if ctx.Err() != nil {
				return
			}
			rec.Outcome = record.Error
			rec.Error, _ = classify(timeoutCause(rctx, rctx.Err()))
		}
		if rec.Error != nil {
			break
		}
	}
	for _, h := range tlog.Hosts() {
		rec.Throttled = append(rec.Throttled, record.Throttle{Host: h.Host, Requests: h.Requests, Wait: record.FromDuration(h.Wait)})
	}
	j.finish(rec, started)
}

// judged asks the judge about rec's judged answers (none when its cell
// has none), retrying a failure of the judge alone, not the run, with the
// run's backoff up to maxAttempts times. A judge that still fails makes
// rec an error record of its kind (judge), its trace kept. It returns
// false when ctx ended: the run is lost in flight.
func (j *job) judged(ctx, rctx context.Context, rec *record.Record, rules *score.Rules, maxAttempts int) bool {
	var asker score.Asker
	if j.judge != nil {
		asker = j.judge
	}
	for attempt := 1; ; attempt++ {
		_, err := rules.Rejudge(rctx, rec, asker)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		ie, retry := classify(err)
		if !retry || attempt >= maxAttempts || rctx.Err() != nil {
			if attempt > 1 {
				ie.Message += fmt.Sprintf(" (after %d judge attempts)", attempt)
			}
			rec.Outcome, rec.Error = record.Error, ie
			if !retry {
				atomic.AddInt64(&j.res.Unretryable, 1)
			}
			return true
		}
		_ = backend.Sleep(rctx, max(j.backoff(attempt), retryAfter(err)))
	}
}

// user returns the user side of run r's conversation and its turn
// limit: the case's scripted replies, or the config's simulator playing
// the case's instructions with the run's seed; nil for a single request.
func (j *job) user(r plan.Run, c record.Cell) (user.User, int) {
	u := r.Case.User
	switch {
	case u == nil:
		return nil, 0
	case !u.Simulated():
		return &user.Script{Replies: u.Replies}, u.Turns()
	}
	// Load refused a simulated case without a simulator.
	return simulator(j.l.Config.Simulator, j.sim, r.Case, c), u.Turns()
}

// simulator is the simulated user of case c in cell: the config's
// simulator sim on backend be, playing the case's instructions with the
// cell's seed. Runs and the context check (checkSimulatorContext) both
// build it here.
func simulator(sim *schema.Simulator, be backend.Backend, c *schema.Case, cell record.Cell) *user.Simulator {
	return &user.Simulator{
		Backend: be, Model: sim.Model, Temperature: sim.Temperature, Seed: cell.Seed,
		System: user.Prompt(sim.System, c.User.Instructions, sim.Stop), Stop: sim.Stop,
		Key: backend.Key{Case: c.ID, Cell: cell.Values()},
	}
}

// attempt runs the loop once within ctx, which carries the run timeout,
// then the state probes of the run's cell on the same session.
func (j *job) attempt(ctx context.Context, in agent.Input) (*agent.Output, *record.State, error) {
	sess, err := j.src.Session(ctx, in.Cell.Confirm)
	if err != nil {
		return nil, nil, timeoutCause(ctx, err)
	}
	defer sess.Close()
	done, err := setupCalls(ctx, sess, in.Case.Setup, j.l.Config.Limits.CallTimeout.Duration)
	if err != nil {
		return &agent.Output{Trace: record.Trace{Setup: done}}, nil, timeoutCause(ctx, err)
	}
	var turns [][]record.Probe
	in.AfterAnswer = j.turnProber(sess, in.Case, in.Cell, &turns)
	out, err := agent.Run(ctx, j.be, sess, in)
	if out != nil {
		out.Trace.Setup = done
	}
	var st *record.State
	if err == nil {
		st, err = j.probe(ctx, sess, in.Case, in.Cell, turns)
	}
	return out, st, timeoutCause(ctx, err)
}

// added returns the tools run r's conversation offers from a later user
// turn on (user.add_tools), by user turn: the server's tools with the
// cell's description set applied, then the case's own descriptions.
func (j *job) added(r plan.Run) (map[int][]backend.Tool, error) {
	if r.Case.User == nil || len(r.Case.User.AddTools) == 0 {
		return nil, nil
	}
	byName := map[string]toolset.Tool{}
	for _, t := range j.src.Tools() {
		byName[t.Name] = t
	}
	out := map[int][]backend.Tool{}
	for _, a := range r.Case.User.AddTools {
		if _, ok := out[a.Turn]; ok {
			continue // AddedAt gathers every entry of the turn
		}
		names, descs := r.Case.User.AddedAt(a.Turn)
		ts := make([]toolset.Tool, 0, len(names))
		for _, n := range names {
			t, ok := byName[n]
			if !ok {
				return nil, fmt.Errorf("case %s: user.add_tools names tool %q, which the server does not offer", r.Case.ID, n)
			}
			ts = append(ts, t)
		}
		ts = j.descs[r.Cell.Descriptions].Apply(ts)
		tools := make([]backend.Tool, len(ts))
		for i, t := range ts {
			d, ok := descs[t.Name]
			if !ok {
				d = t.Description
			}
			tools[i] = backend.Tool{Name: t.Name, Description: d, InputSchema: t.InputSchema}
		}
		out[a.Turn] = tools
	}
	return out, nil
}

var errRunTimeout = errors.New("run timeout")

// timeoutCause turns an error caused by the run timeout into one saying
// so, unless the session already said which wait ran out (a warm pool
// start that never finished its handshake).
func timeoutCause(ctx context.Context, err error) error {
	var se *session.Error
	if errors.As(err, &se) && se.Kind == "timeout" {
		return err
	}
	if err != nil && errors.Is(context.Cause(ctx), errRunTimeout) {
		return &backend.Error{Kind: backend.KindTimeout, Msg: "run exceeded limits.run_timeout", Retryable: true, Err: err}
	}
	return err
}

func (j *job) finish(rec *record.Record, started time.Time) {
	rec.Duration = record.FromDuration(j.now().Sub(started))
	if err := j.w.Write(rec); err != nil {
		j.writeErr.CompareAndSwap(nil, &err)
	}
	atomic.AddInt64(&j.res.Ran, 1)
	switch rec.Outcome {
	case record.Pass:
		atomic.AddInt64(&j.res.Pass, 1)
	case record.Fail:
		atomic.AddInt64(&j.res.Fail, 1)
	default:
		atomic.AddInt64(&j.res.Errors, 1)
	}
	if j.meter != nil {
		j.meter.Done(rec.Outcome)
	}
}

// retryAfter is the wait a backend error asked for (429 Retry-After), or 0.
func retryAfter(err error) time.Duration {
	var be *backend.Error
	if errors.As(err, &be) {
		return be.RetryAfter
	}
	return 0
}

// classify maps an infrastructure error to its record and whether a retry
// may help.
func classify(err error) (*record.InfraError, bool) {
	var be *backend.Error
	var se *session.Error
	var su *errSetup
	switch {
	case errors.As(err, &su):
		return &record.InfraError{Kind: "setup", Message: err.Error()}, false
	case errors.As(err, &be):
		return &record.InfraError{Kind: be.Kind, Message: err.Error()}, be.Retryable
	case errors.As(err, &se):
		return &record.InfraError{Kind: se.Kind, Message: err.Error()}, se.Retryable
	case errors.Is(err, context.DeadlineExceeded):
		return &record.InfraError{Kind: "timeout", Message: err.Error()}, true
	}
	return &record.InfraError{Kind: "internal", Message: err.Error()}, false
}

// cellOptions returns the options set a cell names, nil for "default"
// (held as "") and for a name the config does not define (validate
// refuses those).
func cellOptions(cfg *schema.Config, name string) *schema.OptionsSet {
	if set, ok := cfg.OptionsSets[name]; ok && name != "" {
		return &set
	}
	return nil
}
