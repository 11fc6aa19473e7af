package engine

import (
	"fmt"
	"io"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolward/toolward/engine/preflight"
	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/results"
)

// MaxToolErrors is how many missing-tool errors the run preflight lists
// before it counts the rest.
const MaxToolErrors = 20

// checkTools is the run's tool preflight: once the server has listed its
// tools, a planned case that needs (or expects a call of) a tool the
// server does not offer stops the job before any run, with a
// did-you-mean; names that cannot stop a run (avoid, forbid, golden
// calls, description-set keys) are warnings on progress.
func checkTools(src *session.Source, l *Loaded, descs map[string]toolset.Descriptions, progress io.Writer) error {
	files := map[string]string{}
	for name := range descs {
		files[name] = schema.DescriptionFile(l.Config, name)
	}
	r := preflight.Check(preflight.Input{
		Tools: preflight.Names(src.Tools()), Cases: l.Plan.Cases(), Descriptions: descs, Files: files, Config: l.Config,
	})
	if progress != nil {
		if d := src.Duplicates(); len(d) > 0 {
			fmt.Fprintf(progress, "warning: the MCP server (%s) lists more than one tool named %s; only the first of each is offered\n",
				serverName(src), strings.Join(d, ", "))
		}
		for _, w := range append(r.Typos, r.Warnings...) {
			fmt.Fprintf(progress, "warning: %s\n", w)
		}
	}
	r.Errors = append(r.Errors, checkProbes(src, l, progress)...)
	if len(r.Errors) == 0 {
		return nil
	}
	lines := r.Errors.Lines()
	if n := len(lines); n > MaxToolErrors {
		lines = append(lines[:MaxToolErrors], fmt.Sprintf("… and %d more", n-MaxToolErrors))
	}
	return fmt.Errorf("the MCP server (%s) lacks tools the cases need, nothing ran (`toolward tools CONFIG` lists what it offers):\n%s",
		serverName(src), strings.Join(lines, "\n"))
}

// recordServer records the server's identity in meta. A resumed job
// keeps the identity it started with; when the tool list has changed
// since, progress says so (runs before and after saw different tools).
func recordServer(meta *results.Meta, src *session.Source, progress io.Writer) {
	info := src.Info()
	now := &results.Server{Name: info.Name, Version: info.Version, ToolsDigest: preflight.Digest(src.Tools()), Tools: len(src.Tools())}
	if meta.Server == nil {
		meta.Server = now
		return
	}
	if meta.Server.ToolsDigest != now.ToolsDigest && progress != nil {
		fmt.Fprintf(progress, "warning: the MCP server's tool list has changed since the job started (%d tools, digest %.12s; now %d, %.12s): earlier and later runs saw different tools\n",
			meta.Server.Tools, meta.Server.ToolsDigest, now.Tools, now.ToolsDigest)
	}
}

// serverName names the server for messages: "name version".
func serverName(src *session.Source) string {
	info := src.Info()
	s := strings.TrimSpace(info.Name + " " + info.Version)
	if s == "" {
		return "unnamed"
	}
	return s
}

// ProbeableNames lists the tools a state probe may call on src: those
// it offers to the model and those it keeps for probes.
func ProbeableNames(src *session.Source) []string {
	var names []string
	for _, list := range [][]mcp.Tool{src.Listed(), src.ProbeOnly()} {
		for _, t := range list {
			names = append(names, t.Name)
		}
	}
	return names
}

// checkProbes checks the tools the planned cases' state probes call: the
// server must list each (offered to the model or kept for probes); one
// not marked read-only is a warning, since a probe should only look. A
// case that needs, or expects a call of, a tool kept from the model can
// never pass: an error.
func checkProbes(src *session.Source, l *Loaded, progress io.Writer) schema.Errors {
	var errs schema.Errors
	hidden := map[string]bool{}
	for _, t := range src.ProbeOnly() {
		hidden[t.Name] = true
	}
	probeable := ProbeableNames(src)
	warned := map[string]bool{}
	for _, c := range l.Plan.Cases() {
		if c.Expectation == nil {
			continue
		}
		for _, p := range c.Expectation.ProbeRefs() {
			ok, ro := src.Probeable(p.Tool)
			switch {
			case !ok:
				errs = append(errs, schema.Locate(c, p.Elems, preflight.ProbeMissing(p.Tool, probeable)))
			case !ro && !warned[p.Tool] && progress != nil:
				warned[p.Tool] = true
				fmt.Fprintf(progress, "warning: state probes call %s, which the server does not mark read-only (readOnlyHint); a probe should only look at the state\n", p.Tool)
			}
		}
		for i, sc := range c.Setup {
			if ok, _ := src.Probeable(sc.Tool); !ok {
				errs = append(errs, schema.Locate(c, []any{"setup", i, "tool"}, fmt.Sprintf("the server lists no tool %q for this setup call", sc.Tool)))
			}
		}
		if c.User != nil {
			for i, a := range c.User.AddTools {
				for j, tn := range a.Tools {
					if hidden[tn] {
						errs = append(errs, schema.Locate(c, []any{"user", "add_tools", i, "tools", j}, fmt.Sprintf("tool %q is kept from the model for state probes: it cannot be offered", tn)))
					} else if ok, _ := src.Probeable(tn); !ok {
						errs = append(errs, schema.Locate(c, []any{"user", "add_tools", i, "tools", j}, fmt.Sprintf("the server lists no tool %q to add", tn)))
					}
				}
			}
		}
		for _, u := range schema.ToolUses(c) {
			if hidden[u.Tool] && (u.Role == "needs" || u.Role == "call") {
				errs = append(errs, schema.Locate(c, u.Elems, fmt.Sprintf("tool %q is kept from the model for state probes (server.probe_only, or marked so by the server): no run can call it", u.Tool)))
			}
		}
	}
	return errs
}
