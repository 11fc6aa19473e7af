package runconfig

import (
	"fmt"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
)

// modelCassettes checks that replaying cfg's cases from cs, the cassettes
// of the config's replay directory dir, finds the model turns each
// conversation asks for: every run that some cell selects is replayed
// (schema.CassetteRun.TurnGap) against its case's user (none, the
// scripted replies, or the simulated user's turns with role: user when
// the simulator replays from dir too), and a run whose model turns run
// out first, which a replay fails with cassette_miss, is an error at the
// run naming the user message left without a model turn. When the
// simulated user answers from elsewhere (a live model, a replay directory
// of its own) its replies are not known here, so only the model's turns
// up to its first answer are checked. Runs whose user turns run out
// first are userCassettes' to report.
func modelCassettes(cfg *schema.Config, cases []*schema.Case, cs []*schema.Cassette, dir string) schema.Errors {
	byCase := make(map[string]*schema.Cassette, len(cs))
	for _, c := range cs {
		byCase[c.Case] = c
	}
	simHere := samePath(simulatorReplay(cfg), dir)
	used := runSelector(cfg, cases)
	var errs schema.Errors
	for _, c := range cases {
		cas := byCase[c.ID]
		if cas == nil {
			continue // UncoveredCases reports it
		}
		var u schema.ReplayUser
		switch {
		case c.User.Simulated() && simHere:
			u = schema.ReplayUser{Simulated: true, Stop: cfg.Simulator.Stop, MaxTurns: c.User.Turns()}
		case c.User != nil && !c.User.Simulated():
			u = schema.ReplayUser{Replies: c.User.Replies, MaxTurns: c.User.Turns()}
		}
		for i := range cas.Runs {
			r := &cas.Runs[i]
			if !used(r) {
				continue
			}
			g, gap := r.TurnGap(u, cfg.Limits.MaxIterations)
			if !gap || g.User {
				continue
			}
			errs = append(errs, &schema.Error{File: cas.File, Line: r.Line, Col: r.Col, Path: fmt.Sprintf("runs[%d]", i),
				Msg: modelGapMsg(cfg, c, r, g)})
		}
	}
	return errs
}

// modelGapMsg says which user message run r leaves without a model turn
// (g), and where to add one.
func modelGapMsg(cfg *schema.Config, c *schema.Case, r *schema.CassetteRun, g schema.TurnGap) string {
	var msg string
	switch {
	case g.Message == 0:
		msg = fmt.Sprintf("the opening prompt (%q)", clip(c.Opening()))
	case g.Reply >= 0:
		msg = fmt.Sprintf("the simulated user's message %d (line %d: %q)", g.Message, r.Turns[g.Reply].Line, clip(r.Turns[g.Reply].Content))
	default:
		msg = fmt.Sprintf("user.replies[%d] (%q)", g.Message-1, clip(c.User.Replies[g.Message-1]))
	}
	line := r.Line
	switch {
	case g.After >= 0:
		line = r.Turns[g.After].Line
		msg = fmt.Sprintf("the results of the tool calls at line %d, made answering %s", line, msg)
	case g.Reply >= 0:
		line = r.Turns[g.Reply].Line
	case len(r.Turns) > 0:
		line = r.Turns[len(r.Turns)-1].Line
	}
	return fmt.Sprintf("case %s: this run has %s and none answers %s: a replay of %s asks the model for turn %d and fails as cassette_miss; "+
		"add the model's turn after line %d", c.ID, matchers.Plural(g.Have, "model turn"), msg, cfg.File, g.Have+1, line)
}

// clip shortens s for a message.
func clip(s string) string {
	const n = 60
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
