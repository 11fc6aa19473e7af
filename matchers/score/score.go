package score

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/matchers/textcall"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

// Version is the scorer's version, hashed into every rules digest. Bump
// it when a change to scoring (here or in package matchers) can give a
// stored trace another verdict under the same case, so that records
// judged before and after are told apart.
const Version = 1

// Rules are one case's scoring rules, compiled once.
type Rules struct {
	// Expect is the case's compiled expectation (with its when entries).
	Expect *matchers.Expectation
	// Digest is the first 16 hex digits of a SHA-256 of Version, the
	// text-call families and the case's expect block; see
	// record.Record.Rules.
	Digest string
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
	return &Rules{Expect: exp, Digest: d}, nil
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

// Verdict is the judgement of one trace.
type Verdict struct {
	Outcome string // record.Pass or record.Fail
	Reasons []matchers.Reason
	// TextCalls are the tool calls the model wrote as text, whatever the
	// outcome (stored as record.Trace.TextCalls).
	TextCalls []matchers.TextCall
}

// Judge scores trace t of a run in cell. Running out of turns fails the
// run whatever its calls: max_iterations comes first, then (when the
// matchers had no objection) unparsed_call for calls written as text,
// then the matchers' own reasons.
func (r *Rules) Judge(cell record.Cell, t record.Trace) Verdict {
	v := r.Expect.Score(t.Scored(), cell)
	out := Verdict{Outcome: record.Pass, TextCalls: v.TextCalls}
	if v.Pass && !t.OutOfTurns {
		return out
	}
	out.Outcome = record.Fail
	if t.OutOfTurns {
		out.Reasons = append(out.Reasons, matchers.Reason{
			Code:   matchers.ReasonMaxIterations,
			Detail: fmt.Sprintf("no final answer after %d model turns", len(t.Turns)),
		})
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
func (r *Rules) Score(rec *record.Record) {
	if rec.Outcome == record.Error {
		return
	}
	v := r.Judge(rec.Cell, rec.Trace)
	rec.Outcome, rec.Reasons, rec.Trace.TextCalls = v.Outcome, v.Reasons, v.TextCalls
	rec.Rules = r.Digest
}
