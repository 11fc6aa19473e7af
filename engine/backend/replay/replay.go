package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/schema"
)

// Replay answers chat requests from cassettes. It is read-only after New
// and safe for concurrent use.
type Replay struct {
	dir   string
	cases map[string]*entry
}

type entry struct {
	cassette *schema.Cassette
	runs     []run
	// replies[i][j] is run i's reply for model turn j, built once at
	// load; users[i][j] its simulated user's reply for user turn j (the
	// turns with role user).
	replies, users [][]*backend.Response
	judges         [][]*backend.Response // the turns with role judge
	// judgeTurns[i][j] is the cassette turn of judges[i][j], for the
	// judge input it was recorded for.
	judgeTurns [][]*schema.CassetteTurn
}

var (
	_ backend.Backend     = (*Replay)(nil)
	_ backend.Preflighter = (*Replay)(nil)
)

// New loads every *.yaml and *.yml file under dir (recursively), each
// read through schema.ReadFile with schema.MaxCassetteFileSize. Each file
// holds one or more cassettes; a case id may appear in one cassette
// only. Any mistake in any file, and a directory with no cassettes, is an
// error listing every mistake at file:line:col (see schema.LoadCassettes).
func New(dir string) (*Replay, error) {
	cs, errs := schema.LoadCassettes(dir)
	if len(errs) > 0 {
		return nil, fmt.Errorf("replay: cassettes %s: %w", dir, errs)
	}
	r := &Replay{dir: dir, cases: make(map[string]*entry, len(cs))}
	for _, c := range cs {
		r.cases[c.Case] = build(c)
	}
	return r, nil
}

func build(c *schema.Cassette) *entry {
	e := &entry{cassette: c, replies: make([][]*backend.Response, len(c.Runs)), users: make([][]*backend.Response, len(c.Runs)), judges: make([][]*backend.Response, len(c.Runs)), judgeTurns: make([][]*schema.CassetteTurn, len(c.Runs))}
	for i := range c.Runs {
		e.runs = append(e.runs, compile(&c.Runs[i]))
		for j := range c.Runs[i].Turns {
			t := &c.Runs[i].Turns[j]
			var calls []backend.ToolCall
			for _, tc := range t.ToolCalls {
				calls = append(calls, backend.ToolCall{Name: tc.Name, Arguments: tc.Arguments})
			}
			resp := &backend.Response{
				Message: backend.Message{
					Role: "assistant", Content: t.Content, Thinking: t.Thinking, ToolCalls: calls,
				},
				TokensIn: t.TokensIn, TokensOut: t.TokensOut, Latency: t.Latency, DoneReason: t.DoneReason,
			}
			switch t.Role {
			case schema.CassetteRoleUser:
				e.users[i] = append(e.users[i], resp)
			case schema.CassetteRoleJudge:
				e.judges[i] = append(e.judges[i], resp)
				e.judgeTurns[i] = append(e.judgeTurns[i], t)
			default:
				e.replies[i] = append(e.replies[i], resp)
			}
		}
	}
	return e
}

// Dir returns the cassette directory.
func (r *Replay) Dir() string { return r.dir }

// Cases returns how many cases have cassettes.
func (r *Replay) Cases() int { return len(r.cases) }

// Chat returns the cassette's reply for req.Key: the first run whose
// `when` matches the cell, at index Key.Turn among its model turns, or
// for Key.Side backend.SideUser among its turns with role user (for
// backend.SideJudge, role judge). The returned Response is a
// fresh copy, but its ToolCalls slice and argument bytes are shared with
// the cassette and must not be modified. Anything without a reply is a
// non-retryable *backend.Error of kind KindCassetteMiss naming the key.
func (r *Replay) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	if err := ctx.Err(); err != nil {
		kind := backend.KindUnavailable
		if errors.Is(err, context.DeadlineExceeded) {
			kind = backend.KindTimeout
		}
		return nil, &backend.Error{Kind: kind, Msg: "replay: request abandoned", Err: err}
	}
	k := &req.Key
	e, ok := r.cases[k.Case]
	if !ok {
		return nil, r.miss(k, fmt.Sprintf("no cassette for case %q", k.Case))
	}
	for i := range e.runs {
		run := &e.runs[i]
		if !run.matches(k.Cell) {
			continue
		}
		replies, what := e.replies[i], "turns"
		switch k.Side {
		case backend.SideUser:
			replies, what = e.users[i], "turns with role user (the simulated user's)"
		case backend.SideJudge:
			replies, what = e.judges[i], "turns with role judge (the judge's)"
		}
		if k.Turn < 0 || k.Turn >= len(replies) {
			return nil, r.miss(k, fmt.Sprintf("the matching run (%s:%d, when %s) has %d %s", e.cassette.File, run.Line, formatWhen(run.When), len(replies), what))
		}
		if k.Side == backend.SideJudge {
			if t := e.judgeTurns[i][k.Turn]; t.Input != "" && k.Input != "" && t.Input != k.Input {
				return nil, r.miss(k, fmt.Sprintf("the judge's turn at %s:%d answered judge input %s, and this request's input is %s "+
					"(the rubric, the judge's settings or what it sees changed): record the judge again with --record against a live judge, "+
					"or delete the turn's input to replay its verdict for any input", e.cassette.File, t.Line, t.Input, k.Input))
			}
		}
		resp := *replies[k.Turn]
		return &resp, nil
	}
	var whens []string
	for _, run := range e.cassette.Runs {
		whens = append(whens, fmt.Sprintf("line %d when %s", run.Line, formatWhen(run.When)))
	}
	return nil, r.miss(k, fmt.Sprintf("no run in %s matches the cell (runs: %s)", e.cassette.File, strings.Join(whens, "; ")))
}

func (r *Replay) miss(k *backend.Key, why string) error {
	turn := fmt.Sprintf("turn %d", k.Turn)
	switch k.Side {
	case backend.SideUser:
		turn = fmt.Sprintf("simulated user turn %d", k.Turn)
	case backend.SideJudge:
		turn = fmt.Sprintf("judge request %d", k.Turn)
	}
	return &backend.Error{
		Kind: backend.KindCassetteMiss,
		Msg:  fmt.Sprintf("replay: no reply for case %q cell %s %s in cassettes %s: %s", k.Case, formatCell(k.Cell), turn, r.dir, why),
	}
}

// Preflight reports the cassette directory; every model is "present".
func (r *Replay) Preflight(ctx context.Context, models []string) (*backend.Info, error) {
	return &backend.Info{Server: fmt.Sprintf("replay from %s (%d cassettes)", r.dir, len(r.cases))}, nil
}
