package score

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/matchers/textcall"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

// Version is the scorer's version, hashed into every rules digest. Bump
// it when a change to scoring (here or in package matchers) can give a
// stored trace another verdict under the same case, so that records
// judged before and after are told apart.
const Version = 2

// Rules are one case's scoring rules, compiled once.
type Rules struct {
	// Expect is the case's compiled expectation (with its when entries).
	Expect *matchers.Expectation
	// Digest is the first 16 hex digits of a SHA-256 of Version, the
	// text-call families and the case's expect block; see
	// record.Record.Rules.
	Digest string
	// Golden holds the calls of the case's golden (every turn's, for a
	// conversation), which equals: golden
	// probes replay on a fresh server; nil without a golden.
	Golden []schema.GoldenCall
	// JudgeConfig is the run config's judge, which decides the case's
	// judged answers ({$judge: RUBRIC}); the caller sets it. nil with no
	// judge: a run with a judged answer is then an error of kind judge.
	JudgeConfig *schema.Judge
	// Opening is the user's messages of the case's opening (its prompt,
	// or the user messages of its messages), which the judge sees for a
	// single request (a conversation's record holds its own).
	Opening []string
	// GoldenTurns holds the golden's calls by user turn (one entry for a
	// single request's golden): per-turn probes and golden results are
	// taken after each. Nil without a golden.
	GoldenTurns [][]schema.GoldenCall
	// Setup holds the case's setup calls, made on every fresh session a
	// probe's reference results come from, before the golden's calls.
	Setup []schema.GoldenCall
}

// CaseRules returns the scoring rules of c, compiling c.Expect unless the
// loader already did.
func CaseRules(c *schema.Case) (*Rules, error) {
	exp := c.Expectation
	if exp == nil {
		var err error
		if exp, err = matchers.CompileExpect(c.Expect); err != nil {
			return nil, fmt.Errorf("%s: case %s: %w", c.File, c.ID, err)
		}
	}
	d, err := rulesDigest(c.Expect)
	if err != nil {
		return nil, fmt.Errorf("%s: case %s: %w", c.File, c.ID, err)
	}
	r := &Rules{Expect: exp, Digest: d}
	if c.Prompt != "" {
		r.Opening = []string{c.Prompt}
	}
	for _, m := range c.Messages {
		if m.Role == "user" {
			r.Opening = append(r.Opening, m.Content)
		}
	}
	r.Setup = c.Setup
	if c.Golden != nil {
		r.Golden = c.Golden.AllCalls() // a conversation's: every turn's, in order
		if len(c.Golden.Turns) == 0 {
			r.GoldenTurns = [][]schema.GoldenCall{c.Golden.Calls}
		}
		for _, t := range c.Golden.Turns {
			r.GoldenTurns = append(r.GoldenTurns, t.Calls)
		}
	}
	return r, nil
}

// probeDigestFormat names what ProbeDigest hashes.
const probeDigestFormat = "toolward probes 1"

// ProbeDigest identifies what the state probes of cell measure: each
// probe's tool, arguments and equals kind, and, when a probe equals the
// golden's state, the golden's calls (what is replayed to give it). It is
// "" when the cell has no probes. Probe results stored under another
// digest are stale: they were measured by other calls.
func (r *Rules) ProbeDigest(cell record.Cell) string {
	probes := r.Expect.Probes(cell)
	turns := r.Expect.TurnProbes(cell)
	results := r.Expect.GoldenResults(cell)
	if len(probes) == 0 && turns == nil && !results {
		return ""
	}
	type probe struct {
		Tool   string         `json:"tool"`
		Args   map[string]any `json:"args,omitempty"`
		Equals string         `json:"equals,omitempty"`
	}
	// The fields after Golden are absent for a case that uses none of
	// the per-turn checks and has no setup, so such a case's digests
	// are those of before they existed.
	v := struct {
		Format string              `json:"format"`
		Probes []probe             `json:"probes"`
		Golden []schema.GoldenCall `json:"golden,omitempty"`
		// Turns are the per-turn probes; GoldenTurns how many of the
		// golden's calls each user turn has (where the probes and the
		// results are taken).
		Turns       [][]probe           `json:"turns,omitempty"`
		GoldenTurns []int               `json:"golden_turns,omitempty"`
		Results     bool                `json:"golden_results,omitempty"`
		Setup       []schema.GoldenCall `json:"setup,omitempty"`
	}{Format: probeDigestFormat, Probes: []probe{}, Results: results, Setup: r.Setup}
	golden := results
	for _, p := range probes {
		v.Probes = append(v.Probes, probe{p.Tool, p.Args, p.Equals})
		golden = golden || p.Equals == matchers.EqualsGolden
	}
	if turns != nil {
		v.Turns = make([][]probe, len(turns))
		for i, t := range turns {
			for _, p := range t {
				v.Turns[i] = append(v.Turns[i], probe{p.Tool, p.Args, p.Equals})
				golden = golden || p.Equals == matchers.EqualsGolden
			}
		}
	}
	if golden {
		v.Golden = append([]schema.GoldenCall{}, r.Golden...)
		if turns != nil || results {
			for _, t := range r.GoldenTurns {
				v.GoldenTurns = append(v.GoldenTurns, len(t))
			}
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("score: encoding probes: " + err.Error()) // values decoded from YAML
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// StaleState reports whether rec's stored probe results cannot be judged
// by these rules: its cell has probes, and rec holds no results for them
// or results measured by other probe calls (see ProbeDigest). Such a run
// must run again; judging it would use results of another measurement.
func (r *Rules) StaleState(rec *record.Record) bool {
	d := r.ProbeDigest(rec.Cell)
	if d == "" {
		return false
	}
	return rec.State == nil || rec.State.Digest != d
}

// rulesDigest hashes what scoring reads of a case: its expect block (the
// goldens of when entries are not in it; they judge no run), the
// families of calls written as text (textcall.Digest) and Version.
// encoding/json writes map keys sorted, so the digest follows content,
// not key order or formatting.
func rulesDigest(expect map[string]any) (string, error) {
	b, err := json.Marshal(expect)
	if err != nil {
		return "", fmt.Errorf("encoding expect: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "toolward scorer %d\x00%s\x00", Version, textcall.Digest())
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// Judge scores trace t of a run in cell. Running out of turns fails the
// run whatever its calls: max_iterations (no final answer within
// limits.max_iterations model turns) or max_turns (a simulated user
// still going after user.max_turns messages) comes first, then (when the
// matchers had no objection) unparsed_call for calls written as text,
// then the matchers' own reasons.
//
// State holds the run's probe results; it is judged when cell has
// probes (see StaleState for results that must not be).
//
// Verdicts holds the judge's verdicts on the cell's judged answers (by
// matchers.Judged.Where); one without a verdict is listed in the
// verdict's Unjudged.
func (r *Rules) Judge(cell record.Cell, t record.Trace, state *record.State, verdicts map[string]matchers.JudgeVerdict) matchers.Verdict {
	tr := t.Scored()
	tr.Verdicts = verdicts
	if len(r.Expect.Probes(cell)) > 0 {
		tr.State = state.Scored()
		if tr.State == nil {
			tr.State = []matchers.ProbeResult{}
		}
	}
	if turns := r.Expect.TurnProbes(cell); turns != nil {
		tr.TurnState = state.ScoredTurns()
		if tr.TurnState == nil { // not measured: each turn with probes fails
			tr.TurnState = make([][]matchers.ProbeResult, len(turns))
			for i, p := range turns {
				if p != nil {
					tr.TurnState[i] = []matchers.ProbeResult{}
				}
			}
		}
	}
	if r.Expect.GoldenResults(cell) && state != nil {
		tr.GoldenResults = state.GoldenResults
	}
	v := r.Expect.Score(tr, cell)
	out := matchers.Verdict{Pass: true, TextCalls: v.TextCalls, Unjudged: v.Unjudged}
	if v.Pass && !t.OutOfTurns && !t.OutOfUserTurns {
		return out
	}
	out.Pass = false
	if t.OutOfTurns {
		out.Reasons = append(out.Reasons, matchers.Reason{
			Code:   matchers.ReasonMaxIterations,
			Detail: fmt.Sprintf("no final answer after %d model turns", len(t.Turns)),
		})
	}
	if t.OutOfUserTurns {
		sent := 0
		for _, u := range t.Users {
			if !u.Unsent {
				sent++
			}
		}
		out.Reasons = append(out.Reasons, matchers.Reason{
			Code:   matchers.ReasonMaxTurns,
			Detail: fmt.Sprintf("the simulated user had not ended the conversation after %d user messages (user.max_turns)", sent),
		})
	}
	if t.OutOfTurns || t.OutOfUserTurns {
		if re, ok := matchers.UnparsedCallReason(v); ok {
			out.Reasons = append(out.Reasons, re)
		}
	}
	out.Reasons = append(out.Reasons, v.Reasons...)
	return out
}

// Score judges rec's trace and stores the verdict on rec: outcome,
// reasons, text calls and the rules digest. An error record (an
// infrastructure failure) is left as it is: it has no verdict to give.
//
// The judge's verdicts are read from rec.Judged (see Rejudge), each only
// while its input digest is the one these rules give. A judged answer
// without one makes rec an error of kind judge: the run has no verdict
// until the judge is asked, and the model is not blamed for it.
func (r *Rules) Score(rec *record.Record) {
	if rec.Outcome == record.Error {
		return
	}
	v := r.Judge(rec.Cell, rec.Trace, rec.State, r.verdicts(rec))
	if len(v.Unjudged) > 0 {
		why := "the judge was not asked"
		if r.JudgeConfig == nil {
			why = "the config names no judge"
		}
		rec.Outcome, rec.Reasons = record.Error, nil
		rec.Error = &record.InfraError{Kind: KindJudge, Message: fmt.Sprintf("no verdict of the judge for %s (%s)", strings.Join(v.Unjudged, ", "), why)}
		rec.Trace.TextCalls, rec.Rules = v.TextCalls, r.Digest
		return
	}
	rec.Outcome, rec.Reasons, rec.Trace.TextCalls = record.OutcomeOf(v.Pass), v.Reasons, v.TextCalls
	rec.Rules = r.Digest
}
