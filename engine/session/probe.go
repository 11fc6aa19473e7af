package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolward/toolward/schema"
)

// splitProbeOnly separates the tools kept from the model (named in names,
// or marked schema.ProbeOnlyMeta by the server) from the others, keeping
// the listing order of each.
func splitProbeOnly(tools []mcp.Tool, names []string) (offered, probeOnly []mcp.Tool) {
	for _, t := range tools {
		if slices.Contains(names, t.Name) || markedProbeOnly(t) {
			probeOnly = append(probeOnly, t)
			continue
		}
		offered = append(offered, t)
	}
	return offered, probeOnly
}

func markedProbeOnly(t mcp.Tool) bool {
	if t.Meta == nil {
		return false
	}
	v, _ := t.Meta.AdditionalFields[schema.ProbeOnlyMeta].(bool)
	return v
}

// ProbeOnly returns the tools kept from the model for state probes, as
// listed. Callers must not modify the slice.
func (s *Source) ProbeOnly() []mcp.Tool { return s.probeOnly }

// Probeable reports whether a state probe may call tool name: the server
// lists it (offered to the model or not). readOnly says whether its
// annotations mark it read-only.
func (s *Source) Probeable(name string) (ok, readOnly bool) {
	for _, list := range [][]mcp.Tool{s.listed, s.probeOnly} {
		for _, t := range list {
			if t.Name == name {
				ro := t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
				return true, ro
			}
		}
	}
	return false, false
}

// Probe calls tool name for the harness itself (a state probe, a golden
// replay's probe): no confirm gate, and any elicitation the server makes
// is cancelled, since no user is asked. Errors are as for Call.
//
// What the probes of one session return is bounded in all
// (Limits.ProbeBytes): a case may have any number of probes, and the run
// holds each result until it is judged. Going over is an *Error that a
// retry would not change.
func (s *Session) Probe(ctx context.Context, name string, args map[string]any, timeout time.Duration) (*Result, error) {
	mode := s.mode
	s.mode = ConfirmAuto
	defer func() { s.mode = mode }()
	res, err := s.call(ctx, name, args, timeout, false)
	if err != nil {
		return res, err
	}
	s.probed += max(res.held, len(res.Text))
	if lim := s.src.opts.Limits.withDefaults().ProbeBytes; s.probed > lim {
		return nil, &Error{Kind: "mcp", Msg: fmt.Sprintf("the setup calls and state probes of this run got %d bytes of results (text and structured content) from %s, over toolward's limit of %s for one run (session.MaxProbeBytes; see docs/limits.md)", s.probed, s.src.describe(), amount(int64(lim), "one message"))}
	}
	return res, nil
}

// ProbeValue is the value a state probe's result is judged on: its
// structured content, else its text decoded as JSON when it is one JSON
// value, else the text.
func ProbeValue(r *Result) any {
	if r.Structured != nil {
		return r.Structured
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(r.Text)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		if _, err := dec.Token(); err != nil { // nothing after the value
			return v
		}
	}
	return r.Text
}
