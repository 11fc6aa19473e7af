// Package preflight checks the tool names a job uses against the tools
// the live MCP server lists, before anything runs: `toolward run` stops a
// job whose cases need a tool the server does not offer (instead of
// recording an infrastructure error for every run of it), and `toolward
// validate --online` reports every such name with a did-you-mean.
//
// Check is pure: it takes the server's tool names and what the job uses
// (cases, description sets, cassettes) and returns positioned errors and
// warnings. Digest identifies a tool list, for config.json
// (results.Server).
package preflight

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
)

// Input is what Check compares with the server's tools.
type Input struct {
	Tools []string       // the names the server lists
	Cases []*schema.Case // as loaded (positions come from their files)
	// Descriptions are the description sets used, by name; File names
	// each set's file, for messages.
	Descriptions map[string]toolset.Descriptions
	Files        map[string]string
	Cassettes    []*schema.Cassette
	// Config, when set, has its tool subsets' include lists checked.
	Config *schema.Config
}

// Report is what Check found.
type Report struct {
	// Errors are names no run can get right: a needed tool, an
	// expected call or a tool subset's include the server does not
	// offer. Run stops on any.
	Errors schema.Errors
	// Typos are names that match no tool but do not stop a run: avoid,
	// forbid and golden calls. A forbid entry naming no tool never
	// fires, so validate --online reports them as errors too.
	Typos schema.Errors
	// Warnings are description-set keys and cassette tool calls that
	// name no tool: a set may cover several servers, and a scripted
	// model may call a tool that does not exist on purpose.
	Warnings schema.Errors
}

// Check compares in's tool names with the server's.
func Check(in Input) Report {
	known := make(map[string]bool, len(in.Tools))
	for _, t := range in.Tools {
		known[t] = true
	}
	var r Report
	unknown := func(name string) string {
		msg := fmt.Sprintf("the server offers no tool %q", name)
		if s := matchers.Suggest(name, in.Tools); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return msg
	}
	for _, c := range in.Cases {
		for _, u := range schema.ToolUses(c) {
			if known[u.Tool] {
				continue
			}
			e := schema.Locate(c, u.Elems, unknown(u.Tool))
			switch u.Role {
			case "needs", "call":
				r.Errors = append(r.Errors, e)
			default:
				r.Typos = append(r.Typos, e)
			}
		}
	}
	if cfg := in.Config; cfg != nil {
		for i, sub := range cfg.Matrix.Tools {
			for j, name := range sub.Include {
				if !known[name] {
					r.Errors = append(r.Errors, &schema.Error{File: cfg.File, Path: fmt.Sprintf("matrix.tools[%d].include[%d]", i, j), Msg: unknown(name)})
				}
			}
		}
	}
	for _, set := range slices.Sorted(maps.Keys(in.Descriptions)) {
		for _, name := range slices.Sorted(maps.Keys(in.Descriptions[set])) {
			if !known[name] {
				r.Warnings = append(r.Warnings, &schema.Error{File: in.Files[set], Path: name,
					Msg: fmt.Sprintf("description set %s: %s; the description is never shown", set, unknown(name))})
			}
		}
	}
	for _, cs := range in.Cassettes {
		for _, call := range cs.Tools() {
			if call.Name != "" && !known[call.Name] {
				r.Warnings = append(r.Warnings, &schema.Error{File: cs.File, Line: call.Line, Col: call.Col,
					Msg: fmt.Sprintf("cassette for case %q calls a tool the server does not offer: %s", cs.Case, unknown(call.Name))})
			}
		}
	}
	r.Errors, r.Typos, r.Warnings = r.Errors.Sort(), r.Typos.Sort(), r.Warnings.Sort()
	return r
}

// Probes checks the tools the state probes of cases call against tools,
// the names the server lists (offered to the model or kept for probes),
// with a did-you-mean: a misspelt probe tool otherwise reaches the
// server, whose error ("MCP error -32602") says nothing of the case.
func Probes(cases []*schema.Case, tools []string) schema.Errors {
	known := make(map[string]bool, len(tools))
	for _, t := range tools {
		known[t] = true
	}
	var errs schema.Errors
	for _, c := range cases {
		if c.Expectation == nil {
			continue
		}
		for _, p := range c.Expectation.ProbeRefs() {
			if !known[p.Tool] {
				errs = append(errs, schema.Locate(c, p.Elems, ProbeMissing(p.Tool, tools)))
			}
		}
	}
	return errs.Sort()
}

// ProbeMissing says that the server lists no tool name for a state
// probe, suggesting the closest of tools.
func ProbeMissing(name string, tools []string) string {
	msg := fmt.Sprintf("the server lists no tool %q for this state probe", name)
	if s := matchers.Suggest(name, tools); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

// Digest is the hex SHA-256 of a tool list: each tool's name,
// description, input schema and confirm gate, sorted by name, so that
// listing order does not matter.
func Digest(tools []toolset.Tool) string {
	type entry struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema,omitempty"`
		Gated       bool            `json:"gated"`
	}
	es := make([]entry, len(tools))
	for i, t := range tools {
		es[i] = entry{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Gated: t.Gated}
	}
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.Name, b.Name) })
	b, err := json.Marshal(es)
	if err != nil {
		// A raw schema that is not JSON: digest the names and texts alone.
		for i := range es {
			es[i].InputSchema = json.RawMessage(fmt.Sprintf("%q", es[i].InputSchema))
		}
		b, _ = json.Marshal(es)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Names returns the names of tools, in order.
func Names(tools []toolset.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}
