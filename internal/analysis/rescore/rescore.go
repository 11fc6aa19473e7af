package rescore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/matchers/score"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// DirOptions configure Dir.
type DirOptions struct {
	// Cases are the case file patterns to judge with; nil means the
	// patterns of the directory's own config (config.json).
	Cases []string
	// Out is the new result directory (it must not exist, or be empty);
	// "" means a new stamped directory beside the one re-scored
	// (results.CreateIn of its parent), as a new run of the config
	// would get.
	Out string
	// Now returns the time; nil means time.Now.
	Now func() time.Time
	// Each, when not nil, is called with every record written to the
	// new runs.jsonl, in order: the line as written, decoded (see
	// results.RunsSummary), for a reader that would otherwise read the
	// file back, such as the reports (report.Stream).
	Each func(rec *record.Record, whole func() (*record.Record, error))
	// Judge opens the judge of the directory's config (config.json's
	// judge), for judged answers ({$judge: RUBRIC}) whose stored verdict
	// is not for the input the cases now give (an edited rubric). It is
	// called at most once, and only when such an answer is met, so a
	// directory whose verdicts all stand needs no judge server. nil
	// means no judge: such a run becomes an error of kind judge.
	Judge func(cfg *schema.Config) (score.Asker, error)
	// Context bounds the judge's requests; nil means
	// context.Background().
	Context context.Context
}

// DirResult says what Dir did.
type DirResult struct {
	Out string // the new result directory

	// Cases holds, for each case with re-scored runs, how many verdicts
	// changed, by case id order.
	Cases []CaseResult
	// Rescored counts the pass and fail records judged again; Errors the
	// error records copied as they were (an infrastructure failure has no
	// verdict to give).
	Rescored, Errors int
	// JudgeAsked counts the judged answers the judge was asked about
	// (their input changed, or a run-time judge failed); JudgeReused
	// those whose stored verdict stood.
	JudgeAsked, JudgeReused int
	// JudgeFailed counts the runs whose judge failed (after retries):
	// error records of kind judge, never failures of the model.
	JudgeFailed int
	// Changed maps a case whose run-relevant part changed (prompt,
	// system, messages, needs, avoid, user: its run ids are not the
	// records') to the number of its records kept out: they were run
	// with what the case no longer says.
	Changed map[string]int
	// Reprobe maps a case to its records kept out because their state
	// probe results were measured by other probe calls than the case's
	// now (Rules.StaleState): judging them would use stale results.
	Reprobe map[string]int
	// Partial maps a case to its records kept out because they were
	// judged by other rules and hold only in part a value scoring reads
	// (record size limits), so judging them again is not possible.
	Partial map[string]int
	// Gone maps a case no longer in the case files to its records,
	// dropped.
	Gone map[string]int
	// NotPlanned counts records of cells the config's matrix does not
	// hold; Duplicates records of a run already kept; Bad unreadable
	// lines; Unknown records with an outcome other than pass, fail or
	// error. All are dropped.
	NotPlanned, Duplicates, Bad, Unknown int
}

// KeptOut is the number of records of runs that must run again to be
// judged under the cases as they are now (Changed, Reprobe and Partial).
func (r *DirResult) KeptOut() int { return total(r.Changed) + total(r.Partial) + total(r.Reprobe) }

// CaseResult counts one case's re-scored runs and changed verdicts.
type CaseResult struct {
	Case string
	Runs int // pass and fail records re-scored
	// PassToFail and FailToPass count flipped outcomes; Reasons counts
	// failing runs that still fail, with other reasons.
	PassToFail, FailToPass, Reasons int
}

// Changed is the number of the case's runs whose verdict or reasons
// changed (a flip, or a failing run failing with other reasons).
func (c CaseResult) Changed() int { return c.PassToFail + c.FailToPass + c.Reasons }

// Dir judges every record of the result directory dir again with the
// cases as they are now, and writes the result to a new directory with
// config.json (noting ScoredFrom) and runs.jsonl; dir is only read. It
// contacts no model and no MCP server; building the reports is the
// caller's (package report). A record is re-scored only when its run is
// the run the current case would give (the same id); see DirResult for
// what is kept out or dropped, and why.
func Dir(dir string, opts DirOptions) (*DirResult, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	meta, err := results.ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	if meta.Legacy() {
		return nil, fmt.Errorf("cannot re-score %s: %w", dir, results.ErrLegacy)
	}
	if err := results.CheckRuns(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s has no %s: nothing to re-score", dir, results.RunsFile)
		}
		return nil, err
	}
	j, err := newRejudge(meta, opts.Cases)
	if err != nil {
		return nil, err
	}
	j.ctx, j.openJudge = opts.Context, opts.Judge
	if j.ctx == nil {
		j.ctx = context.Background()
	}
	out, err := createOut(dir, opts)
	if err != nil {
		return nil, err
	}
	res := &DirResult{Out: out, Changed: map[string]int{}, Partial: map[string]int{}, Reprobe: map[string]int{}, Gone: map[string]int{}}
	if err := j.write(dir, out, res, opts.Each); err != nil {
		os.RemoveAll(out)
		return nil, err
	}
	if err := results.WriteMeta(out, j.meta(meta, dir, opts)); err != nil {
		os.RemoveAll(out)
		return nil, err
	}
	res.Cases = j.caseResults()
	return res, nil
}

// createOut makes the new result directory.
func createOut(dir string, opts DirOptions) (string, error) {
	if opts.Out != "" {
		if inside(dir, opts.Out) {
			return "", fmt.Errorf("--out %s is in the directory being re-scored, %s; score never modifies it: choose a directory outside it", opts.Out, dir)
		}
		return opts.Out, results.CreateAt(opts.Out)
	}
	now := opts.Now
	parent, err := parentDir(dir)
	if err != nil {
		return "", err
	}
	return results.CreateIn(parent, now())
}

// parentDir returns the directory holding dir, relative when dir is
// ("." and "results/x/.." have parents too).
func parentDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	parent := filepath.Dir(abs)
	if filepath.IsAbs(dir) {
		return parent, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return parent, nil
	}
	if rel, err := filepath.Rel(wd, parent); err == nil {
		return rel, nil
	}
	return parent, nil
}

// inside reports whether path is dir or lies within it (by absolute
// path, or the same file when both exist).
func inside(dir, path string) bool {
	if a, b := stat(dir), stat(path); a != nil && b != nil && os.SameFile(a, b) {
		return true
	}
	ad, err1 := filepath.Abs(dir)
	ap, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(ad, ap)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func stat(p string) os.FileInfo {
	fi, err := os.Stat(p)
	if err != nil {
		return nil
	}
	return fi
}

// rejudge holds what judging a directory's records needs: the cases as
// they are now, their rules, and the directory's config's plan over them
// to check each record's identity.
type rejudge struct {
	cfg   *schema.Config
	cases map[string]*schema.Case
	rules map[string]*score.Rules
	loc   *plan.Locator
	per   map[string]*CaseResult

	planned, total int64 // the directory's plan over the cases now

	ctx       context.Context
	openJudge func(*schema.Config) (score.Asker, error) // DirOptions.Judge
	asking    score.Asker                               // the judge, opened at the first judged answer to ask about
	judgeErr  error
}

// asker returns the judge, opening it the first time.
func (j *rejudge) asker() (score.Asker, error) {
	if j.asking == nil && j.judgeErr == nil && j.openJudge != nil {
		j.asking, j.judgeErr = j.openJudge(j.cfg)
		if j.judgeErr != nil {
			j.judgeErr = fmt.Errorf("the judge is needed for judged answers whose input changed: %w", j.judgeErr)
		}
	}
	return j.asking, j.judgeErr
}

func newRejudge(meta *results.Meta, patterns []string) (*rejudge, error) {
	cfg := *meta.Config
	if patterns != nil {
		cfg.Cases = patterns
	}
	cases, err := schema.LoadCases(cfg.Cases)
	if err != nil {
		return nil, err
	}
	j := &rejudge{cfg: &cfg, cases: make(map[string]*schema.Case, len(cases)), rules: make(map[string]*score.Rules, len(cases)), per: map[string]*CaseResult{}}
	for _, c := range cases {
		j.cases[c.ID] = c
	}
	// The whole matrix over the cases: a record is located by its case
	// and cell, whatever the directory's filters and shard were.
	p, err := plan.New(&cfg, cases)
	if err != nil {
		return nil, err
	}
	j.loc = plan.NewLocator(p)
	// The directory's own plan over the cases now, for config.json's
	// counts; a filter that now selects nothing leaves them as they were.
	if dp, _, err := plan.Build(&cfg, cases, meta.Filters, meta.Shard); err == nil {
		j.planned, j.total = dp.Len(), dp.Total()
	} else {
		j.planned, j.total = meta.Planned, meta.Total
	}
	return j, nil
}

// caseRules returns the rules of case id, compiled on first use.
func (j *rejudge) caseRules(id string) (*score.Rules, error) {
	if r, ok := j.rules[id]; ok {
		return r, nil
	}
	r, err := score.CaseRules(j.cases[id])
	if err != nil {
		return nil, err
	}
	r.JudgeConfig = j.cfg.Judge
	j.rules[id] = r
	return r, nil
}

// write copies dir's records to out, judged again: one record per run,
// by the rule of results.Runs (its first pass or fail record, else its
// first error record); a record of unknown outcome is counted and left
// out. A record the new rules judge as it was judged is copied as the
// line it was read from; a changed one is encoded again. each, when not
// nil, sees every record as written.
func (j *rejudge) write(dir, out string, res *DirResult, each func(*record.Record, func() (*record.Record, error))) error {
	return results.WriteRunLines(out, func(put func(results.Line) ([]byte, error)) error {
		st, err := results.RunsLines(func(rec *record.Record, line []byte) error {
			if !record.KnownOutcome(rec.Outcome) {
				res.Unknown++
				return nil
			}
			before := judgement{rec.Outcome, rec.Reasons, rec.Rules, rec.Trace.TextCalls, rec.Judged, rec.Error}
			keep, err := j.judge(rec, res)
			if err != nil || !keep {
				return err
			}
			l := results.Line{Raw: line}
			same := before.same(rec) && len(line) <= record.MaxRecordBytes
			if !same {
				l = results.Line{Rec: rec}
			}
			written, err := put(l)
			if err != nil || each == nil {
				return err
			}
			if same {
				each(rec, nil) // rec is whole, and the line as written
				return nil
			}
			// The record as written may hold its values only in part
			// (record.Marshal): read it back.
			r := record.NewReader(bytes.NewReader(written), results.RunsFile)
			if r.Scan() {
				if back, err := r.Record(); err == nil {
					each(back, r.Record)
				}
			}
			return nil
		}, dir)
		if st != nil {
			res.Bad += st.BadLines
			res.Duplicates += st.Duplicates
		}
		return err
	})
}

// judgement is what scoring sets in a record (score.Rules.Score).
type judgement struct {
	outcome   record.Outcome
	reasons   []matchers.Reason
	rules     string
	textCalls []matchers.TextCall
	judged    []record.Judgement
	err       *record.InfraError
}

// same reports whether rec holds the judgement j.
func (j judgement) same(rec *record.Record) bool {
	return j.outcome == rec.Outcome && j.rules == rec.Rules &&
		reflect.DeepEqual(j.reasons, rec.Reasons) && reflect.DeepEqual(j.textCalls, rec.Trace.TextCalls) &&
		reflect.DeepEqual(j.judged, rec.Judged) && reflect.DeepEqual(j.err, rec.Error)
}

// judge re-scores rec in place and reports whether it belongs in the new
// directory, counting it in res.
func (j *rejudge) judge(rec *record.Record, res *DirResult) (bool, error) {
	if j.cases[rec.Case] == nil {
		res.Gone[rec.Case]++
		return false, nil
	}
	switch _, m := j.loc.Find(rec); m {
	case plan.Absent:
		res.NotPlanned++
		return false, nil
	case plan.Changed:
		res.Changed[rec.Case]++
		return false, nil
	}
	r, err := j.caseRules(rec.Case)
	if err != nil {
		return false, err
	}
	if rec.Outcome == record.Error && !judgeFailed(rec, r) {
		res.Errors++
		return true, nil
	}
	if r.StaleState(rec) {
		res.Reprobe[rec.Case]++
		return false, nil
	}
	if ok, _ := score.Rescorable(rec); !ok {
		if rec.Rules != r.Digest {
			res.Partial[rec.Case]++
			return false, nil
		}
		return true, nil // judged by these very rules, on the whole trace
	}
	before := *rec
	if err := j.rejudgeAnswers(rec, r, res); err != nil {
		return false, err
	}
	r.Score(rec)
	res.Rescored++
	j.count(&before, rec)
	return true, nil
}

// judgeFailed reports whether rec is an error record only because its
// judged answers had no verdict (kind judge) with its whole trace: the
// judge, not the run, is asked again.
func judgeFailed(rec *record.Record, r *score.Rules) bool {
	return rec.Error != nil && rec.Error.Kind == score.KindJudge && r.HasJudge() && len(rec.Trace.Turns) > 0
}

// rejudgeAnswers gives rec a verdict for each judged answer of its cell:
// the stored ones whose input stands, the judge's for the others.
func (j *rejudge) rejudgeAnswers(rec *record.Record, r *score.Rules, res *DirResult) error {
	if !r.HasJudge() {
		return nil
	}
	if rec.Outcome == record.Error {
		rec.Outcome, rec.Error = "", nil // judged afresh below
	}
	stale := r.StaleJudged(rec)
	res.JudgeReused += len(r.Expect.Judged(rec.Cell)) - stale
	var a score.Asker
	if stale > 0 {
		var err error
		if a, err = j.asker(); err != nil {
			return err
		}
	}
	var err error
	for range judgeAttempts {
		var asked int
		asked, err = r.Rejudge(j.ctx, rec, a)
		res.JudgeAsked += asked
		if err == nil || j.ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		// Score leaves an error record as it is: the run has no verdict.
		rec.Outcome, rec.Reasons = record.Error, nil
		rec.Error = &record.InfraError{Kind: score.KindJudge, Message: err.Error()}
		res.JudgeFailed++
	}
	return j.ctx.Err()
}

// judgeAttempts is how many times score asks the judge about one run
// before making it an error of kind judge.
const judgeAttempts = 3

// count adds one re-scored record to its case's tally.
func (j *rejudge) count(before, after *record.Record) {
	c := j.per[after.Case]
	if c == nil {
		c = &CaseResult{Case: after.Case}
		j.per[after.Case] = c
	}
	c.Runs++
	switch {
	case before.Outcome == record.Pass && after.Outcome == record.Fail:
		c.PassToFail++
	case before.Outcome == record.Fail && after.Outcome == record.Pass:
		c.FailToPass++
	case !reflect.DeepEqual(before.Reasons, after.Reasons):
		c.Reasons++
	}
}

func (j *rejudge) caseResults() []CaseResult {
	out := make([]CaseResult, 0, len(j.per))
	for _, id := range slices.Sorted(maps.Keys(j.per)) {
		out = append(out, *j.per[id])
	}
	return out
}

// meta is the new directory's config.json: the old one's, with the cases
// (and case patterns) now judging, and where it was re-scored from.
func (j *rejudge) meta(old *results.Meta, dir string, opts DirOptions) *results.Meta {
	m := *old
	m.Version = results.MetaVersion
	m.Config = j.cfg
	if opts.Cases != nil {
		if d, err := results.DigestConfig(j.cfg); err == nil {
			m.ConfigDigest = d
		}
	}
	m.Cases = make(map[string]string, len(j.cases))
	m.Rules = make(map[string]string, len(j.cases))
	for id, c := range j.cases {
		m.Cases[id] = plan.RunDigest(j.cfg, c)
		if r, err := j.caseRules(id); err == nil {
			m.Rules[id] = r.Digest
		}
	}
	now := opts.Now
	m.Created = now().UTC()
	m.Planned, m.Total = j.planned, j.total
	m.ScoredFrom = dir
	m.MergedFrom = nil
	return &m
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
