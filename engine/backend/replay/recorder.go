package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

// Recorder passes chat requests through to another backend and records
// every reply by its Key, to be written as cassettes by Close. It is safe
// for concurrent use.
type Recorder struct {
	inner backend.Backend
	dir   string

	mu    sync.Mutex
	cases map[string]map[string]*recRun // case id -> cell key -> run
}

type recRun struct {
	cell  map[string]string
	turns []*schema.CassetteTurn // the model's, by Key.Turn
	users []*schema.CassetteTurn // the simulated user's, by Key.Turn
	// after[i] is how many model turns were recorded before users[i],
	// where Close puts it among the turns.
	after []int
	// judges are the judge's turns, by Key.Turn; Close writes them after
	// the run's other turns.
	judges []*schema.CassetteTurn
}

var (
	_ backend.Backend        = (*Recorder)(nil)
	_ backend.Preflighter    = (*Recorder)(nil)
	_ backend.PromptMeasurer = (*Recorder)(nil)
)

// NewRecorder returns a recorder that writes its cassettes into dir.
func NewRecorder(inner backend.Backend, dir string) *Recorder {
	return &Recorder{inner: inner, dir: dir, cases: make(map[string]map[string]*recRun)}
}

// Chat asks the inner backend and records a successful reply under
// req.Key. A reply for model turn 0 starts the run's recording afresh,
// so a run retried after an infrastructure error keeps only its last
// attempt. Errors are passed through and not recorded.
func (r *Recorder) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	return r.chat(ctx, r.inner, req)
}

// Wrap returns a backend that asks inner and records its replies into
// the same cassettes as r: the simulated user's backend, whose requests
// (Key.Side backend.SideUser) become turns with role user.
func (r *Recorder) Wrap(inner backend.Backend) backend.Backend {
	return &wrapped{r: r, inner: inner}
}

type wrapped struct {
	r     *Recorder
	inner backend.Backend
}

func (w *wrapped) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	return w.r.chat(ctx, w.inner, req)
}

// Preflight delegates to the wrapped backend when it has a preflight.
func (w *wrapped) Preflight(ctx context.Context, models []string) (*backend.Info, error) {
	if p, ok := w.inner.(backend.Preflighter); ok {
		return p.Preflight(ctx, models)
	}
	return &backend.Info{Server: "recording"}, nil
}

// MeasurePrompt delegates to the wrapped backend; nothing is recorded.
func (w *wrapped) MeasurePrompt(ctx context.Context, req *backend.Request) (*backend.PromptFit, error) {
	return backend.Measure(ctx, w.inner, req)
}

func (r *Recorder) chat(ctx context.Context, inner backend.Backend, req *backend.Request) (*backend.Response, error) {
	resp, err := inner.Chat(ctx, req)
	if err != nil {
		return resp, err
	}
	t := &schema.CassetteTurn{
		Content: resp.Message.Content, Thinking: resp.Message.Thinking,
		TokensIn: resp.TokensIn, TokensOut: resp.TokensOut, Latency: resp.Latency, DoneReason: resp.DoneReason,
	}
	for _, c := range resp.Message.ToolCalls {
		t.ToolCalls = append(t.ToolCalls, schema.CassetteCall{Name: c.Name, Arguments: append(json.RawMessage(nil), c.Arguments...)})
	}
	key := cellKey(req.Key.Cell)
	r.mu.Lock()
	defer r.mu.Unlock()
	runs := r.cases[req.Key.Case]
	if runs == nil {
		runs = make(map[string]*recRun)
		r.cases[req.Key.Case] = runs
	}
	run := runs[key]
	if run == nil {
		run = &recRun{cell: maps.Clone(req.Key.Cell)}
		runs[key] = run
	}
	if req.Key.Side == backend.SideJudge {
		t.Role, t.ToolCalls, t.Input = schema.CassetteRoleJudge, nil, req.Key.Input
		for len(run.judges) <= req.Key.Turn {
			run.judges = append(run.judges, nil)
		}
		run.judges[req.Key.Turn] = t
		return resp, nil
	}
	if req.Key.Side == backend.SideUser {
		t.Role, t.ToolCalls = schema.CassetteRoleUser, nil
		for len(run.users) <= req.Key.Turn {
			run.users = append(run.users, nil)
			run.after = append(run.after, 0)
		}
		run.users[req.Key.Turn] = t
		run.after[req.Key.Turn] = len(run.turns)
		return resp, nil
	}
	if req.Key.Turn == 0 {
		run.turns, run.users, run.after, run.judges = run.turns[:0], run.users[:0], run.after[:0], run.judges[:0]
	}
	for len(run.turns) <= req.Key.Turn {
		run.turns = append(run.turns, nil)
	}
	run.turns[req.Key.Turn] = t
	return resp, nil
}

// MeasurePrompt delegates to the inner backend; nothing is recorded.
func (r *Recorder) MeasurePrompt(ctx context.Context, req *backend.Request) (*backend.PromptFit, error) {
	return backend.Measure(ctx, r.inner, req)
}

// Preflight delegates to the inner backend when it has a preflight.
func (r *Recorder) Preflight(ctx context.Context, models []string) (*backend.Info, error) {
	if p, ok := r.inner.(backend.Preflighter); ok {
		return p.Preflight(ctx, models)
	}
	return &backend.Info{Server: "recording"}, nil
}

func cellKey(cell map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(cell)) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(cell[k])
		b.WriteByte(0)
	}
	return b.String()
}

// Close writes one cassette file per recorded case, <dir>/<case id>.yaml
// (characters other than letters, digits, '.', '_' and '-' become '_'),
// replacing any file of that name. Each run's `when` names every axis of
// its cell exactly. Runs are sorted by cell; a run whose turns have a gap
// (a turn never recorded) is cut at the gap. The simulated user's turns
// (role user) are written among the model's where they came, the
// judge's (role judge) after them.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cases) == 0 {
		return nil
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return fmt.Errorf("replay: recording: %w", err)
	}
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(r.cases)) {
		c := &schema.Cassette{Case: id}
		runs := r.cases[id]
		for _, k := range slices.Sorted(maps.Keys(runs)) {
			run := runs[k]
			out := schema.CassetteRun{When: exactSelectors(run.cell)}
			n := 0 // model turns up to the first gap
			for n < len(run.turns) && run.turns[n] != nil {
				n++
			}
			u := 0 // the next user turn to place
			placeUsers := func(before int) {
				for ; u < len(run.users) && run.users[u] != nil && run.after[u] <= before; u++ {
					out.Turns = append(out.Turns, *run.users[u])
				}
			}
			for j := range n {
				placeUsers(j)
				out.Turns = append(out.Turns, *run.turns[j])
			}
			placeUsers(n)
			for _, t := range run.judges {
				if t == nil {
					break // a gap: the judge requests after it were not recorded
				}
				out.Turns = append(out.Turns, *t)
			}
			if len(out.Turns) > 0 {
				c.Runs = append(c.Runs, out)
			}
		}
		if len(c.Runs) == 0 {
			continue
		}
		var buf bytes.Buffer
		if err := schema.EncodeCassette(&buf, c, header); err != nil {
			errs = append(errs, fmt.Errorf("replay: %w", err))
			continue
		}
		path := filepath.Join(r.dir, FileName(id))
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("replay: recording: %w", err))
		}
	}
	return errors.Join(errs...)
}

// FileName is the cassette file name the recorder uses for a case id.
func FileName(caseID string) string {
	b := []byte(caseID)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b) + ".yaml"
}

// exactSelectors selects exactly the cell given as formatted values.
func exactSelectors(values map[string]string) []schema.CassetteSelector {
	sel := make([]schema.CassetteSelector, 0, len(values))
	for _, k := range slices.Sorted(maps.Keys(values)) {
		sel = append(sel, schema.CassetteSelector{Axis: k, Patterns: []string{cell.Quote(values[k])}})
	}
	return sel
}

// header is the comment above every recorded cassette.
const header = "Recorded by toolward. Each run's `when` names its full cell; edit freely (see engine/backend/replay)."
