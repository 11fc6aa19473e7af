package rescore

import (
	"bytes"
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

// Changed is the number of the case's runs whose verdict changed.
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
			before := judgement{rec.Outcome, rec.Reasons, rec.Rules, rec.Trace.TextCalls}
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
}

// same reports whether rec holds the judgement j.
func (j judgement) same(rec *record.Record) bool {
	return j.outcome == rec.Outcome && j.rules == rec.Rules &&
		reflect.DeepEqual(j.reasons, rec.Reasons) && reflect.DeepEqual(j.textCalls, rec.Trace.TextCalls)
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
	if rec.Outcome == record.Error {
		res.Errors++
		return true, nil
	}
	r, err := j.caseRules(rec.Case)
	if err != nil {
		return false, err
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
	r.Score(rec)
	res.Rescored++
	j.count(&before, rec)
	return true, nil
}

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
