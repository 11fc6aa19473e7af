package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolward/toolward/engine"
	"github.com/toolward/toolward/engine/preflight"
	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/runconfig"
)

// checkOnline checks the tool names of every config among paths against
// its live server. Configs with offline mistakes (in offline) are
// skipped: their cases are not all known.
func checkOnline(paths []string, offline schema.Errors, timeout time.Duration) (errs, warnings schema.Errors) {
	bad := map[string]bool{}
	for _, e := range offline {
		bad[filepath.Clean(e.File)] = true
	}
	for _, f := range configPaths(paths) {
		if bad[f] {
			continue
		}
		e, w := checkConfigOnline(f, timeout)
		errs = append(errs, e...)
		warnings = append(warnings, w...)
	}
	return errs, warnings.Sort()
}

// checkBuiltinProbes checks, offline, the state probe tools of the cases
// of every config among paths whose server is the bundled one, whose
// tools (its catalogs' too) are known without connecting to anything.
// Configs with offline mistakes are skipped, as by checkOnline.
func checkBuiltinProbes(paths []string, offline schema.Errors) schema.Errors {
	bad := map[string]bool{}
	for _, e := range offline {
		bad[filepath.Clean(e.File)] = true
	}
	var errs schema.Errors
	for _, f := range configPaths(paths) {
		cfg, err := runconfig.Load(f)
		if bad[f] || err != nil || cfg.Server.Builtin == nil {
			continue
		}
		cases, err := schema.LoadCases(cfg.Cases)
		if err != nil {
			continue // reported offline
		}
		srv, err := bundledServer(*cfg.Server.Builtin)
		if err != nil {
			continue // its catalogs are reported offline
		}
		errs = append(errs, preflight.Probes(cases, slices.Collect(maps.Keys(srv.ListTools())))...)
	}
	return errs
}

// configPaths returns the configs (*.cue) among paths, walking
// directories as runconfig.Check does.
func configPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && q != p && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			if !d.IsDir() && strings.EqualFold(filepath.Ext(q), ".cue") {
				out = append(out, filepath.Clean(q))
			}
			return nil
		})
	}
	return out
}

// checkConfigOnline connects to one config's server and checks what the
// config's cases, description sets and cassettes name. A config whose
// cases, description sets or cassettes do not load is skipped: the
// offline check reports why.
func checkConfigOnline(file string, timeout time.Duration) (errs, warnings schema.Errors) {
	fail := func(msg string) (schema.Errors, schema.Errors) {
		return schema.Errors{{File: file, Path: "server", Msg: msg}}, nil
	}
	cfg, err := runconfig.Load(file)
	if err != nil {
		return nil, nil // reported offline
	}
	cases, err := schema.LoadCases(cfg.Cases)
	if err != nil {
		return nil, nil
	}
	in := preflight.Input{Cases: cases, Config: cfg, Descriptions: map[string]toolset.Descriptions{}, Files: map[string]string{}}
	for _, name := range cfg.Matrix.Values(cell.Descriptions) {
		path := schema.DescriptionFile(cfg, name)
		if path == "" {
			continue
		}
		d, err := toolset.LoadDescriptions(path)
		if err != nil {
			return nil, nil
		}
		in.Descriptions[name], in.Files[name] = d, path
	}
	if dir := cfg.Backend.Replay; dir != "" {
		cs, cerrs := schema.LoadCassettes(dir)
		if len(cerrs) > 0 {
			return nil, nil
		}
		in.Cassettes = cs
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	src, err := openServer(ctx, cfg.Server, timeout)
	if err != nil {
		return fail(err.Error())
	}
	defer src.Close()
	in.Tools = preflight.Names(src.Tools())
	r := preflight.Check(in)
	errs = append(r.Errors, r.Typos...)
	errs = append(errs, preflight.Probes(cases, engine.ProbeableNames(src))...)
	if len(errs) == 0 {
		errs = goldenStates(ctx, src, cases, cfg.Limits.CallTimeout.Duration)
	}
	return errs, r.Warnings
}

// goldenStates proves each case's state probes (in the golden's cell)
// accept the end state its golden leaves: the golden's calls replayed on
// a fresh server world, then the probes (engine.GoldenState). One error
// per rejection, at the case's expect.state.
func goldenStates(ctx context.Context, src *session.Source, cases []*schema.Case, timeout time.Duration) schema.Errors {
	var errs schema.Errors
	for _, c := range cases {
		if c.Expectation == nil || len(c.Expectation.Probes(schema.GoldenCell)) == 0 {
			continue
		}
		rules, err := score.CaseRules(c)
		if err != nil {
			continue // reported offline
		}
		at := []any{"expect", "state"}
		st, err := engine.GoldenState(ctx, src, rules, schema.GoldenCell, timeout)
		if err != nil {
			errs = append(errs, schema.Locate(c, at, fmt.Sprintf("replaying the golden to check the state probes: %v", err)))
			continue
		}
		for _, r := range c.Expectation.Score(matchers.Trace{State: st.Scored()}, schema.GoldenCell).Reasons {
			if r.Code == matchers.ReasonStateMismatch {
				errs = append(errs, schema.Locate(c, at, "the golden's end state is rejected: "+r.Detail))
			}
		}
	}
	return errs
}

// openServer connects to a server as run does.
func openServer(ctx context.Context, s schema.Server, timeout time.Duration) (*session.Source, error) {
	opts := session.Options{Server: s, ClientVersion: engine.Version()}
	if b := s.Builtin; b != nil {
		var err error
		if opts.Builtin, err = bundledServer(*b); err != nil {
			return nil, fmt.Errorf("starting the builtin MCP server: %v", err)
		}
	}
	src, err := session.Open(ctx, opts)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("connecting to the MCP server: no answer within %s (--timeout)", timeout)
		}
		return nil, fmt.Errorf("connecting to the MCP server: %v", err)
	}
	return src, nil
}
