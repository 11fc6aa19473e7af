package runconfig

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/plan"
)

// simulatorReplay is the cassette directory that answers cfg's simulated
// user: simulator.backend's replay directory, or the config's own when
// the simulator has no backend of its own; "" when a live backend plays
// the user (nothing to check statically).
func simulatorReplay(cfg *schema.Config) string {
	sim := cfg.Simulator
	switch {
	case sim == nil:
		return ""
	case sim.Backend == nil:
		return cfg.Backend.Replay
	}
	return sim.Backend.Replay
}

// userCassettes checks that replaying cfg's cases with a simulated user
// finds the simulator's turns (role: user) it asks for, in cs, the
// cassettes of the simulator's replay directory dir. cases are the
// config's cases (filtered by its own filter, as a run is).
//
// When the model and the simulated user replay from the same directory,
// a cell's run answers both sides, so the conversation of each run is
// replayed (schema.CassetteRun.UserTurnGap) and a run whose user turns
// run out is an error at the run. When the simulator has a directory of
// its own, which of its runs meets which model run depends on the cell
// and the model's turns come from elsewhere: then only what holds for
// every conversation is checked, that each simulated case has a
// cassette there and each of its runs at least one user turn (the
// simulator is asked after the model's first answer).
//
// Runs that no cell of the config selects (a when naming values the
// matrix does not have) are not checked: another config may use them.
func userCassettes(cfg *schema.Config, cases []*schema.Case, cs []*schema.Cassette, dir string) schema.Errors {
	same := samePath(dir, cfg.Backend.Replay)
	byCase := make(map[string]*schema.Cassette, len(cs))
	for _, c := range cs {
		byCase[c.Case] = c
	}
	used := runSelector(cfg, cases)
	var errs schema.Errors
	for _, c := range cases {
		if !c.User.Simulated() {
			continue
		}
		cas := byCase[c.ID]
		if cas == nil {
			if !same { // the model's directory is checked for coverage already
				errs = append(errs, &schema.Error{File: cfg.File, Path: "simulator.backend.replay",
					Msg: fmt.Sprintf("case %s (%s:%d) has a simulated user and no cassette in %s, the simulator's replay directory: "+
						"its first reply would fail as cassette_miss; write one (case: %s) with its turns as role: user", c.ID, c.File, c.Line, dir, c.ID)})
			}
			continue
		}
		for i := range cas.Runs {
			r := &cas.Runs[i]
			if !used(r) {
				continue
			}
			at := &schema.Error{File: cas.File, Line: r.Line, Col: r.Col, Path: fmt.Sprintf("runs[%d]", i)}
			if !same {
				if users := countUsers(r); users == 0 {
					at.Msg = fmt.Sprintf("case %s has a simulated user, and this run of the simulator's cassettes has no turn with role: user: "+
						"after the model's first answer a replay of %s fails as cassette_miss; add the user's replies as turns with role: user", c.ID, cfg.File)
					errs = append(errs, at)
				}
				continue
			}
			gap, short := r.UserTurnGap(cfg.Simulator.Stop, cfg.Limits.MaxIterations, c.User.Turns())
			if !short {
				continue
			}
			what := "has no turn with role: user"
			if gap.Have > 0 {
				what = fmt.Sprintf("has %s with role: user, none with the stop marker %q", matchers.Plural(gap.Have, "turn"), cfg.Simulator.Stop)
			}
			at.Msg = fmt.Sprintf("case %s has a simulated user, and this run %s: after the model's answer at line %d a replay of %s asks the simulated user for turn %d "+
				"and fails as cassette_miss; add a turn with role: user after line %d (its content ends the conversation when it holds %q)",
				c.ID, what, r.Turns[gap.After].Line, cfg.File, gap.Have+1, r.Turns[gap.After].Line, cfg.Simulator.Stop)
			errs = append(errs, at)
		}
	}
	return errs
}

// countUsers counts a run's turns with role user.
func countUsers(r *schema.CassetteRun) int {
	n := 0
	for _, t := range r.Turns {
		if t.Role == schema.CassetteRoleUser {
			n++
		}
	}
	return n
}

// runSelector reports whether some cell of cfg's plan over cases can
// select a cassette run: each of its when selectors accepts a value the
// plan has on that axis (the matrix is a product, so the axes choose
// independently). When the plan does not build, every run counts as
// selected.
func runSelector(cfg *schema.Config, cases []*schema.Case) func(*schema.CassetteRun) bool {
	p, _, err := plan.Build(cfg, cases, nil, "")
	if err != nil {
		return func(*schema.CassetteRun) bool { return true }
	}
	return func(r *schema.CassetteRun) bool {
		for _, w := range r.When {
			sel, err := cell.NewSelector(w.Axis, w.Patterns...)
			if err != nil {
				return true // the cassette check reports it
			}
			matched := false
			for _, v := range p.Values(w.Axis) {
				if sel.Match(v) {
					matched = true
					break
				}
			}
			if !matched {
				return false
			}
		}
		return true
	}
}

// samePath reports whether a and b name the same directory.
func samePath(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, ea := os.Stat(a)
	fb, eb := os.Stat(b)
	return ea == nil && eb == nil && os.SameFile(fa, fb)
}

// judgeCassettes checks that replaying cfg's cases from cs, the
// cassettes of dir, finds the judge's turns (role: judge) each judged
// case asks for, when the judge replays from dir too (judge.backend
// unset, or the same replay directory): a run of a case with n judged
// answers in the default cell is asked n × judge.samples verdicts, and a
// run with fewer turns with role judge fails as an error of kind judge.
func judgeCassettes(cfg *schema.Config, cases []*schema.Case, cs []*schema.Cassette, dir string) schema.Errors {
	j := cfg.Judge
	if j == nil || (j.Backend != nil && !samePath(j.Backend.Replay, dir)) {
		return nil
	}
	byCase := make(map[string]*schema.Cassette, len(cs))
	for _, c := range cs {
		byCase[c.Case] = c
	}
	used := runSelector(cfg, cases)
	var errs schema.Errors
	for _, c := range cases {
		cas := byCase[c.ID]
		if cas == nil || c.Expectation == nil {
			continue
		}
		judged := c.Expectation.Judged(schema.GoldenCell)
		want := len(judged) * max(j.Samples, 1)
		if want == 0 {
			continue
		}
		for i := range cas.Runs {
			r := &cas.Runs[i]
			have := 0
			for _, t := range r.Turns {
				if t.Role == schema.CassetteRoleJudge {
					have++
				}
			}
			if have >= want || !used(r) {
				continue
			}
			errs = append(errs, &schema.Error{File: cas.File, Line: r.Line, Col: r.Col, Path: fmt.Sprintf("runs[%d]", i),
				Msg: fmt.Sprintf("case %s has %s and judge.samples %d, so a replay of %s asks the judge for %s, and this run has %s with role: judge: "+
					"verdict %d would fail as an error of kind judge; add the judge's replies as turns with role: judge "+
					`(content: '{"verdict": "pass", "reason": "…"}'), or record them with toolward run --record DIR against a live judge`,
					c.ID, matchers.Plural(len(judged), "judged answer"), max(j.Samples, 1), cfg.File, matchers.Plural(want, "verdict"), matchers.Plural(have, "turn"), have+1)})
		}
	}
	return errs
}
