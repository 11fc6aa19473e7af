package engine

import (
	"context"
	"slices"
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
	vals []record.ProbeValue // one per probe of the cell, set for those of the key's kind
}

// probe runs the probes of the run's cell on sess and returns what they
// saw, with the reference results of equals probes; nil when the cell
// has none. An error is an infrastructure failure (the run is retried).
func (j *job) probe(ctx context.Context, sess *session.Session, c *schema.Case, cell record.Cell) (*record.State, error) {
	rules := j.l.Rules[c.ID]
	probes := rules.Expect.Probes(cell)
	if len(probes) == 0 {
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
	for _, kind := range []string{matchers.EqualsGolden, matchers.EqualsInitial} {
		want, err := j.wants(ctx, c, rules, cell, probes, kind)
		if err != nil {
			return nil, err
		}
		for i, p := range probes {
			if p.Equals == kind {
				v := want[i]
				st.Probes[i].Want = &v
			}
		}
	}
	return st, nil
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

// wants returns the reference results of the probes of kind: computed on
// a fresh world (a new session of the job's source) the first time they
// are asked for, then kept for the job. Nil when no probe is of kind.
func (j *job) wants(ctx context.Context, c *schema.Case, rules *score.Rules, cell record.Cell, probes []matchers.Probe, kind string) ([]record.ProbeValue, error) {
	if !slices.ContainsFunc(probes, func(p matchers.Probe) bool { return p.Equals == kind }) {
		return nil, nil
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
		return e.vals, nil
	}
	sess, err := j.src.Session(ctx, cell.Confirm)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	timeout := j.l.Config.Limits.CallTimeout.Duration
	if kind == matchers.EqualsGolden {
		for _, gc := range rules.Golden {
			args := gc.Args
			if args == nil {
				args = map[string]any{}
			}
			// A golden call's own result does not matter, only the state
			// it leaves; a failure to reach the server does.
			if _, err := sess.Call(ctx, gc.Tool, args, timeout); err != nil {
				return nil, err
			}
		}
	}
	vals := make([]record.ProbeValue, len(probes))
	for i, p := range probes {
		if p.Equals != kind {
			continue
		}
		if vals[i], err = callProbe(ctx, sess, p, timeout); err != nil {
			return nil, err
		}
	}
	e.vals, e.done = vals, true
	return vals, nil
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
