package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// This file runs a case's state probes (expect.state): after the
// conversation, on the run's own session, and for equals probes on a
// fresh world after the golden's calls (or none), once per job for each
// case, confirm mode and kind.

// wantKey identifies one set of reference results: the probes of a case
// (by their digest) on a fresh world after the golden's calls
// (matchers.EqualsGolden) or none (matchers.EqualsInitial), under one
// confirm mode (a golden call the mode denies is denied there too).
type wantKey struct {
	caseID, digest string
	confirm        cell.ConfirmMode
	equals         string
}

// wantEntry holds the reference results of one wantKey once computed.
type wantEntry struct {
	mu   sync.Mutex
	done bool
	ref  reference
}

// reference is what the probes of one kind see on a fresh world: one
// value per end-state probe and per turn probe (set for those of the
// key's kind), and, for EqualsGolden, the results of the golden's calls
// by user turn.
type reference struct {
	end     []record.ProbeValue
	turns   [][]record.ProbeValue
	results [][]string
}

// probe runs the end-state probes of the run's cell on sess and returns
// what they saw, with the per-turn probes taken during the conversation
// (turns, by user turn) and the reference results of equals probes and
// of contains_golden_results; nil when the cell has none of these. An
// error is an infrastructure failure (the run is retried).
func (j *job) probe(ctx context.Context, sess *session.Session, c *schema.Case, cell record.Cell, turns [][]record.Probe) (*record.State, error) {
	rules := j.l.Rules[c.ID]
	probes := rules.Expect.Probes(cell)
	turnProbes := rules.Expect.TurnProbes(cell)
	results := rules.Expect.GoldenResults(cell)
	if len(probes) == 0 && turnProbes == nil && !results {
		return nil, nil
	}
	timeout := j.l.Config.Limits.CallTimeout.Duration
	st := &record.State{Digest: rules.ProbeDigest(cell), Probes: make([]record.Probe, len(probes))}
	for i, p := range probes {
		v, err := callProbe(ctx, sess, p, timeout)
		if err != nil {
			return nil, err
		}
		st.Probes[i] = record.Probe{Tool: p.Tool, Args: p.Args, Got: v}
	}
	if turnProbes != nil {
		st.Turns = make([][]record.Probe, len(turnProbes))
		copy(st.Turns, turns)
	}
	for _, kind := range []string{matchers.EqualsGolden, matchers.EqualsInitial} {
		ref, ok, err := j.wants(ctx, c, rules, cell, kind)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		for i, p := range probes {
			if p.Equals == kind {
				v := ref.end[i]
				st.Probes[i].Want = &v
			}
		}
		for n, tp := range turnProbes {
			if n >= len(st.Turns) || st.Turns[n] == nil {
				continue // the turn was never answered
			}
			for i, p := range tp {
				if p.Equals == kind {
					v := ref.turns[n][i]
					st.Turns[n][i].Want = &v
				}
			}
		}
		if kind == matchers.EqualsGolden && results {
			st.GoldenResults = ref.results
		}
	}
	return st, nil
}

// turnProber returns the agent's AfterAnswer hook for a run: it takes
// the probes of each user turn that has some on sess, into got (by user
// turn). Nil when the cell has no per-turn probes.
func (j *job) turnProber(sess *session.Session, c *schema.Case, cell record.Cell, got *[][]record.Probe) func(context.Context, int) error {
	turnProbes := j.l.Rules[c.ID].Expect.TurnProbes(cell)
	if turnProbes == nil {
		return nil
	}
	*got = make([][]record.Probe, len(turnProbes))
	timeout := j.l.Config.Limits.CallTimeout.Duration
	return func(ctx context.Context, n int) error {
		if n >= len(turnProbes) || len(turnProbes[n]) == 0 {
			return nil
		}
		ps := make([]record.Probe, len(turnProbes[n]))
		for i, p := range turnProbes[n] {
			v, err := callProbe(ctx, sess, p, timeout)
			if err != nil {
				return err
			}
			ps[i] = record.Probe{Tool: p.Tool, Args: p.Args, Got: v}
		}
		(*got)[n] = ps
		return nil
	}
}

// callProbe makes one probe call for the harness.
func callProbe(ctx context.Context, sess *session.Session, p matchers.Probe, timeout time.Duration) (record.ProbeValue, error) {
	args := p.Args
	if args == nil {
		args = map[string]any{}
	}
	res, err := sess.Probe(ctx, p.Tool, args, timeout)
	if err != nil {
		return record.ProbeValue{}, err
	}
	return record.ProbeValue{Value: session.ProbeValue(res), IsError: res.IsError}, nil
}

// errSetup is a setup call whose result was an error: the world the
// model would act on was not loaded.
type errSetup struct{ msg string }

func (e *errSetup) Error() string { return e.msg }

// setupCalls makes the case's setup calls on sess (Case.Setup), for a run or a
// golden replay, and returns them with their results. A call that
// returns an error result is an *errSetup.
func setupCalls(ctx context.Context, sess *session.Session, calls []schema.GoldenCall, timeout time.Duration) ([]record.SetupCall, error) {
	out := make([]record.SetupCall, 0, len(calls))
	for i, sc := range calls {
		args := sc.Args
		if args == nil {
			args = map[string]any{}
		}
		res, err := sess.Probe(ctx, sc.Tool, args, timeout)
		if err != nil {
			return out, err
		}
		out = append(out, record.SetupCall{Tool: sc.Tool, Args: sc.Args, Result: res.Text, IsError: res.IsError})
		if res.IsError {
			return out, &errSetup{fmt.Sprintf("setup[%d] (%s) returned an error: %s", i, sc.Tool, truncateText(res.Text, 500))}
		}
	}
	return out, nil
}

// truncateText cuts s to about n bytes for a message.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// wants returns the reference results of kind: computed on a fresh
// world (a new session of the job's source, the case's setup made) the
// first time they are asked for, then kept for the job. ok is false
// when nothing of the cell needs kind.
func (j *job) wants(ctx context.Context, c *schema.Case, rules *score.Rules, cell record.Cell, kind string) (reference, bool, error) {
	if !needsKind(rules, cell, kind) {
		return reference{}, false, nil
	}
	k := wantKey{c.ID, rules.ProbeDigest(cell), cell.Confirm, kind}
	j.mu.Lock()
	e, ok := j.want[k]
	if !ok {
		e = &wantEntry{}
		j.want[k] = e
	}
	j.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return e.ref, true, nil
	}
	ref, err := replayReference(ctx, j.src, rules, cell, cell.Confirm, kind, j.l.Config.Limits.CallTimeout.Duration)
	if err != nil {
		return reference{}, false, err
	}
	e.ref, e.done = ref, true
	return ref, true, nil
}

// needsKind reports whether the cell's rules need the reference results
// of kind: an end-state or turn probe equal to it, or, for EqualsGolden,
// contains_golden_results.
func needsKind(rules *score.Rules, cell record.Cell, kind string) bool {
	is := func(p matchers.Probe) bool { return p.Equals == kind }
	if slices.ContainsFunc(rules.Expect.Probes(cell), is) {
		return true
	}
	for _, t := range rules.Expect.TurnProbes(cell) {
		if slices.ContainsFunc(t, is) {
			return true
		}
	}
	return kind == matchers.EqualsGolden && rules.Expect.GoldenResults(cell)
}

// replayReference opens a fresh session of src in confirm mode, makes
// the case's setup calls and, for EqualsGolden, the golden's calls turn
// by turn, taking the probes of kind of each user turn after that
// turn's calls and the end-state probes of kind after the last; for
// EqualsInitial every probe of kind sees the world as the setup left it.
func replayReference(ctx context.Context, src *session.Source, rules *score.Rules, cell record.Cell, confirm cell.ConfirmMode, kind string, timeout time.Duration) (reference, error) {
	var ref reference
	sess, err := src.Session(ctx, confirm)
	if err != nil {
		return ref, err
	}
	defer sess.Close()
	if _, err := setupCalls(ctx, sess, rules.Setup, timeout); err != nil {
		return ref, err
	}
	probeKind := func(ps []matchers.Probe) ([]record.ProbeValue, error) {
		vals := make([]record.ProbeValue, len(ps))
		for i, p := range ps {
			if p.Equals != kind {
				continue
			}
			v, err := callProbe(ctx, sess, p, timeout)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		return vals, nil
	}
	turnProbes := rules.Expect.TurnProbes(cell)
	ref.turns = make([][]record.ProbeValue, len(turnProbes))
	if kind == matchers.EqualsGolden {
		ref.results = make([][]string, len(rules.GoldenTurns))
		for n, calls := range rules.GoldenTurns {
			ref.results[n] = []string{}
			for _, gc := range calls {
				args := gc.Args
				if args == nil {
					args = map[string]any{}
				}
				// A failure to reach the server is an error; a tool's
				// error result is a result like any other.
				res, err := sess.Call(ctx, gc.Tool, args, timeout)
				if err != nil {
					return ref, err
				}
				ref.results[n] = append(ref.results[n], res.Text)
			}
			if n < len(turnProbes) {
				if ref.turns[n], err = probeKind(turnProbes[n]); err != nil {
					return ref, err
				}
			}
		}
	} else {
		for n, tp := range turnProbes {
			if ref.turns[n], err = probeKind(tp); err != nil {
				return ref, err
			}
		}
	}
	// Turn probes past the golden's turns see its end state.
	for n := len(rules.GoldenTurns); kind == matchers.EqualsGolden && n < len(turnProbes); n++ {
		if ref.turns[n], err = probeKind(turnProbes[n]); err != nil {
			return ref, err
		}
	}
	ref.end, err = probeKind(rules.Expect.Probes(cell))
	return ref, err
}

// GoldenState replays c's golden calls on a fresh session of src (confirm
// mode auto) and returns what c's probes of cell see there, equals
// probes with their reference results (an equals: golden probe compares
// the golden's state with itself; equals: initial with a fresh session
// after no calls). validate --online judges it, so that a case's probes
// are proved to accept its own golden. Nil when cell has no probes.
func GoldenState(ctx context.Context, src *session.Source, rules *score.Rules, cell record.Cell, timeout time.Duration) (*record.State, error) {
	probes := rules.Expect.Probes(cell)
	if len(probes) == 0 {
		return nil, nil
	}
	replay := func(calls []schema.GoldenCall) ([]record.ProbeValue, error) {
		sess, err := src.Session(ctx, session.ConfirmAuto)
		if err != nil {
			return nil, err
		}
		defer sess.Close()
		if _, err := setupCalls(ctx, sess, rules.Setup, timeout); err != nil {
			return nil, err
		}
		for _, gc := range calls {
			args := gc.Args
			if args == nil {
				args = map[string]any{}
			}
			if _, err := sess.Call(ctx, gc.Tool, args, timeout); err != nil {
				return nil, err
			}
		}
		vals := make([]record.ProbeValue, len(probes))
		for i, p := range probes {
			if vals[i], err = callProbe(ctx, sess, p, timeout); err != nil {
				return nil, err
			}
		}
		return vals, nil
	}
	got, err := replay(rules.Golden)
	if err != nil {
		return nil, err
	}
	var initial []record.ProbeValue
	st := &record.State{Digest: rules.ProbeDigest(cell), Probes: make([]record.Probe, len(probes))}
	for i, p := range probes {
		st.Probes[i] = record.Probe{Tool: p.Tool, Args: p.Args, Got: got[i]}
		switch p.Equals {
		case matchers.EqualsGolden:
			w := got[i]
			st.Probes[i].Want = &w
		case matchers.EqualsInitial:
			if initial == nil {
				if initial, err = replay(nil); err != nil {
					return nil, err
				}
			}
			w := initial[i]
			st.Probes[i].Want = &w
		}
	}
	return st, nil
}
