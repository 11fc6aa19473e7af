package diff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// Why a paired run's verdict changed.
const (
	// WhyRules: the same execution (same run id and start), judged by
	// other scoring rules, as `toolward score` or a resume after a
	// scoring edit leaves it.
	WhyRules = "scoring rules changed"
	// WhyPrompt: the case changed what the model sees (the run ids
	// differ), so the run is another run.
	WhyPrompt = "the case changed what the model sees"
	// WhyRanAgain: the same run (same id) executed again; the model's
	// behaviour differs.
	WhyRanAgain = "ran again"
	// WhyJudgedAgain: the same execution judged again, by rules one side
	// does not name (a format 1 record).
	WhyJudgedAgain = "judged again"
)

// VerdictChange is one paired run, scored on both sides, whose verdict
// (outcome, or failure reasons) differs, with the cause.
type VerdictChange struct {
	Case      string
	Cell      record.Cell
	Base, New Recorded
	Why       string // WhyRules, WhyPrompt, WhyRanAgain or WhyJudgedAgain
}

// Recorded is the verdict one side recorded for a run: its outcome, reason
// codes and rules digest (record.Record keeps the whole reasons).
type Recorded struct {
	Outcome record.Outcome
	Reasons []string // reason codes
	Rules   string   // digest of the rules that judged it; "" for format 1
}

// finishVerdicts sorts r.Verdicts, which Compare fills as it pairs runs.
// When the two directories hash run ids differently (one was written
// before run ids left out the scoring rules, config.json format 1), ids
// cannot tell an edited case apart, so r.Changed is cleared and a
// warning says why.
func (r *Result) finishVerdicts(sameIDs bool) {
	if !sameIDs {
		r.Changed = nil
		r.Warnings = append(r.Warnings, "one directory was written by an older toolward (config.json format 1) whose run ids also hashed the scoring rules: run ids cannot be compared, so cases whose prompt changed are not detected")
	}
	slices.SortFunc(r.Verdicts, func(a, b VerdictChange) int { return compareKeys(key{a.Case, a.Cell}, key{b.Case, b.Cell}) })
}

// sameIDFormat reports whether two result directories' run ids are
// comparable: both config.json files are of format 2 or later, or both
// older. A directory without a readable config.json (runs.jsonl alone)
// is taken to match.
func sameIDFormat(baseDir, newDir string) bool {
	b, okB := metaVersion(baseDir)
	n, okN := metaVersion(newDir)
	return !okB || !okN || (b >= 2) == (n >= 2)
}

func metaVersion(dir string) (int, bool) {
	b, err := results.ReadMetaBytes(dir) // a regular file within results.MaxMetaBytes
	if err != nil {
		return 0, false
	}
	var m struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, false
	}
	return m.Version, true
}

// why says why a paired run's verdict changed.
func why(t *table, b, n *run, sameIDs bool) string {
	switch {
	case sameIDs && !sameID(b, n):
		return WhyPrompt
	case b.started != n.started:
		return WhyRanAgain
	case t.strs[b.rules] != "" && t.strs[n.rules] != "" && b.rules != n.rules:
		return WhyRules
	}
	return WhyJudgedAgain
}

// whyCounts counts the changes by cause, in a fixed order of causes.
func whyCounts(vs []VerdictChange) string {
	n := map[string]int{}
	for _, v := range vs {
		n[v.Why]++
	}
	var parts []string
	for _, w := range []string{WhyRules, WhyPrompt, WhyRanAgain, WhyJudgedAgain} {
		if n[w] > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", w, n[w]))
		}
	}
	return strings.Join(parts, "; ")
}

// verdictGroup counts the flipped verdicts of one case with one cause.
type verdictGroup struct {
	Case, Why              string
	PassToFail, FailToPass int
}

func (g verdictGroup) String() string {
	var parts []string
	for _, x := range []struct {
		n    int
		what string
	}{{g.FailToPass, "fail → pass"}, {g.PassToFail, "pass → fail"}} {
		if x.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", x.n, x.what))
		}
	}
	return strings.Join(parts, ", ")
}

// groupVerdicts splits vs (sorted by case) into the flipped verdicts,
// counted per case and cause, and the changes whose outcome stayed (a
// failing run that fails with other reasons), which are no verdict change
// and which the regressions and fixes lists do not show.
func groupVerdicts(vs []VerdictChange) (flips []VerdictChange, groups []verdictGroup, reasonsOnly []VerdictChange) {
	for _, v := range vs {
		pf := v.Base.Outcome == record.Pass && v.New.Outcome == record.Fail
		if !pf && !(v.Base.Outcome == record.Fail && v.New.Outcome == record.Pass) {
			reasonsOnly = append(reasonsOnly, v)
			continue
		}
		flips = append(flips, v)
		if n := len(groups); n == 0 || groups[n-1].Case != v.Case || groups[n-1].Why != v.Why {
			groups = append(groups, verdictGroup{Case: v.Case, Why: v.Why})
		}
		if g := &groups[len(groups)-1]; pf {
			g.PassToFail++
		} else {
			g.FailToPass++
		}
	}
	return flips, groups, reasonsOnly
}

// writeVerdictsText says, for WriteText, which runs' verdicts changed and
// why: counts per case and cause, then, apart, each failing run whose
// reasons alone changed (flipped outcomes are listed as regressions and
// fixes).
func writeVerdictsText(p func(string, ...any), vs []VerdictChange) {
	flips, groups, reasonsOnly := groupVerdicts(vs)
	if len(flips) > 0 {
		p("\nchanged verdicts: %d (%s)\n", len(flips), whyCounts(flips))
		for _, g := range groups {
			p("  %s: %s (%s)\n", g.Case, g, g.Why)
		}
	}
	if len(reasonsOnly) == 0 {
		return
	}
	p("\nsame verdict, other reasons (failing runs that fail with other reasons): %d (%s)\n", len(reasonsOnly), whyCounts(reasonsOnly))
	for i, v := range reasonsOnly {
		if i == maxListed {
			p("  … and %d more\n", len(reasonsOnly)-i)
			break
		}
		p("  %s  %s  [%s] → [%s]  (%s)\n", v.Case, cellString(v.Cell), strings.Join(v.Base.Reasons, ", "), strings.Join(v.New.Reasons, ", "), v.Why)
	}
}

// writeVerdictsMarkdown is writeVerdictsText for WriteMarkdown.
func writeVerdictsMarkdown(p func(string, ...any), vs []VerdictChange) {
	flips, groups, reasonsOnly := groupVerdicts(vs)
	if len(flips) > 0 {
		p("### Changed verdicts (%d)\n\n%s.\n\n| case | changed | why |\n|---|---|---|\n", len(flips), esc(whyCounts(flips)))
		for _, g := range groups {
			p("| `%s` | %s | %s |\n", code(g.Case), esc(g.String()), g.Why)
		}
		p("\n")
	}
	if len(reasonsOnly) == 0 {
		return
	}
	p("### Same verdict, other reasons (%d)\n\nFailing runs that fail with other reasons; %s.\n\n| case | cell | base reasons | new reasons | why |\n|---|---|---|---|---|\n", len(reasonsOnly), esc(whyCounts(reasonsOnly)))
	for i, v := range reasonsOnly {
		if i == maxListed {
			p("\n…and %d more.\n", len(reasonsOnly)-i)
			break
		}
		p("| `%s` | %s | %s | %s | %s |\n", code(v.Case), esc(cellString(v.Cell)), esc(strings.Join(v.Base.Reasons, ", ")), esc(strings.Join(v.New.Reasons, ", ")), v.Why)
	}
	p("\n")
}
