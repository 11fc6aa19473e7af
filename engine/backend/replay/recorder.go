package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

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
	turns []*Turn
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
// req.Key. A reply for turn 0 starts the run's recording afresh, so a run
// retried after an infrastructure error keeps only its last attempt.
// Errors are passed through and not recorded.
func (r *Recorder) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	resp, err := r.inner.Chat(ctx, req)
	if err != nil {
		return resp, err
	}
	t := &Turn{
		Content: resp.Message.Content, Thinking: resp.Message.Thinking,
		TokensIn: resp.TokensIn, TokensOut: resp.TokensOut, Latency: resp.Latency, DoneReason: resp.DoneReason,
	}
	for _, c := range resp.Message.ToolCalls {
		t.ToolCalls = append(t.ToolCalls, backend.ToolCall{Name: c.Name, Arguments: append(json.RawMessage(nil), c.Arguments...)})
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
	if req.Key.Turn == 0 {
		run.turns = run.turns[:0]
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
// (a turn never recorded) is cut at the gap.
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
		c := &Cassette{Case: id}
		runs := r.cases[id]
		for _, k := range slices.Sorted(maps.Keys(runs)) {
			run := runs[k]
			out := Run{When: exactSelectors(run.cell)}
			for _, t := range run.turns {
				if t == nil {
					break
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
		if err := Write(&buf, c); err != nil {
			errs = append(errs, err)
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
func exactSelectors(values map[string]string) []Selector {
	sel := make([]Selector, 0, len(values))
	for _, k := range slices.Sorted(maps.Keys(values)) {
		sel = append(sel, Selector{Axis: k, Patterns: []string{cell.Quote(values[k])}})
	}
	return sel
}

// Write encodes a cassette in the format Parse reads.
func Write(w io.Writer, c *Cassette) error {
	runs := seq(blockStyle)
	for _, run := range c.Runs {
		rn := mapping(blockStyle)
		if len(run.When) > 0 {
			when := mapping(yaml.FlowStyle)
			for _, s := range run.When {
				var v *yaml.Node
				if len(s.Patterns) == 1 {
					v = scalarValue(s.Patterns[0])
				} else {
					v = seq(yaml.FlowStyle)
					for _, p := range s.Patterns {
						v.Content = append(v.Content, scalarValue(p))
					}
				}
				when.Content = append(when.Content, str(s.Axis), v)
			}
			rn.Content = append(rn.Content, str("when"), when)
		}
		turns := seq(blockStyle)
		for _, t := range run.Turns {
			tn := mapping(blockStyle)
			if t.Thinking != "" {
				tn.Content = append(tn.Content, str("thinking"), text(t.Thinking))
			}
			if t.Content != "" || len(t.ToolCalls) == 0 {
				tn.Content = append(tn.Content, str("content"), text(t.Content))
			}
			if len(t.ToolCalls) > 0 {
				calls := seq(blockStyle)
				for _, tc := range t.ToolCalls {
					cn := mapping(yaml.FlowStyle)
					cn.Content = append(cn.Content, str("name"), str(tc.Name))
					if args, ok := jsonToNode(tc.Arguments); ok {
						cn.Content = append(cn.Content, str("arguments"), args)
					} else {
						cn.Content = append(cn.Content, str("raw_arguments"), str(string(tc.Arguments)))
					}
					calls.Content = append(calls.Content, cn)
				}
				tn.Content = append(tn.Content, str("tool_calls"), calls)
			}
			if t.TokensIn != 0 || t.TokensOut != 0 {
				tok := mapping(yaml.FlowStyle)
				tok.Content = append(tok.Content, str("in"), numberNode(strconv.Itoa(t.TokensIn)), str("out"), numberNode(strconv.Itoa(t.TokensOut)))
				tn.Content = append(tn.Content, str("tokens"), tok)
			}
			if t.Latency != 0 {
				ms := strconv.FormatFloat(float64(t.Latency)/1e6, 'f', -1, 64)
				tn.Content = append(tn.Content, str("latency_ms"), numberNode(ms))
			}
			if t.DoneReason != "" {
				tn.Content = append(tn.Content, str("done_reason"), str(t.DoneReason))
			}
			turns.Content = append(turns.Content, tn)
		}
		rn.Content = append(rn.Content, str("turns"), turns)
		runs.Content = append(runs.Content, rn)
	}
	doc := mapping(blockStyle)
	doc.Content = append(doc.Content, str("case"), str(c.Case), str("runs"), runs)
	doc.HeadComment = "Recorded by toolward. Each run's `when` names its full cell; edit freely (see engine/backend/replay)."
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("replay: writing cassette for %q: %w", c.Case, err)
	}
	return enc.Close()
}

func mapping(style yaml.Style) *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Style: style} }
func seq(style yaml.Style) *yaml.Node     { return &yaml.Node{Kind: yaml.SequenceNode, Style: style} }
func str(s string) *yaml.Node             { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func numberNode(s string) *yaml.Node {
	tag := "!!int"
	if strings.ContainsAny(s, ".eE") {
		tag = "!!float"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: s}
}

// scalarValue writes a selector value, unquoted when it is a number.
func scalarValue(s string) *yaml.Node {
	if schema.IsJSONNumber(s) {
		return numberNode(s)
	}
	return str(s)
}

// text is a string node, in literal block style when it spans lines.
func text(s string) *yaml.Node {
	n := str(s)
	if strings.Contains(strings.TrimRight(s, "\n"), "\n") {
		n.Style = yaml.LiteralStyle
	}
	return n
}

// jsonToNode converts JSON to a YAML node, keeping object key order and
// number text. It reports false for bytes that are not one JSON value.
func jsonToNode(raw json.RawMessage) (*yaml.Node, bool) {
	if len(bytes.TrimSpace(raw)) == 0 || !json.Valid(raw) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := decodeNode(dec)
	if err != nil {
		return nil, false
	}
	return n, true
}

func decodeNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			m := mapping(yaml.FlowStyle)
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				val, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				m.Content = append(m.Content, str(kt.(string)), val)
			}
			_, err := dec.Token()
			return m, err
		}
		s := seq(yaml.FlowStyle)
		for dec.More() {
			val, err := decodeNode(dec)
			if err != nil {
				return nil, err
			}
			s.Content = append(s.Content, val)
		}
		_, err := dec.Token()
		return s, err
	case json.Number:
		return numberNode(v.String()), nil
	case string:
		return str(v), nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// blockStyle is yaml.v3's default (zero) style.
const blockStyle yaml.Style = 0
