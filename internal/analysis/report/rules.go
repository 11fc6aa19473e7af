package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolward/toolward/schema/record"
)

// maxRulesWarnings bounds the per-case warnings about mixed scoring
// rules; beyond it one warning counts the cases.
const maxRulesWarnings = 5

// rulesAgg notes which scoring rules judged each case's runs
// (record.Record.Rules), so that a report never mixes verdicts of two
// versions of a case without saying so. Records without a rules digest
// (errors, format version 1) are not counted.
type rulesAgg map[string]map[string]int // case -> rules digest -> runs

func (a *rulesAgg) add(rec *record.Record) {
	if rec.Rules == "" || rec.Outcome == record.Error {
		return
	}
	if *a == nil {
		*a = rulesAgg{}
	}
	byDigest := (*a)[rec.Case]
	if byDigest == nil {
		byDigest = map[string]int{}
		(*a)[rec.Case] = byDigest
	}
	byDigest[rec.Rules]++
}

// warnings names each case whose runs were judged by more than one
// version of its scoring rules, e.g. "case calc: its 8 runs were judged
// by 2 versions of its scoring rules (5 by rules 1a2b3c4d, 3 by rules
// 5e6f7a8b); …".
func (a rulesAgg) warnings() []string {
	var mixed []string
	for _, id := range slices.Sorted(maps.Keys(a)) {
		if len(a[id]) > 1 {
			mixed = append(mixed, id)
		}
	}
	const advice = "re-score the directory with toolward score to judge every run by the cases as they are now"
	if len(mixed) > maxRulesWarnings {
		return []string{fmt.Sprintf("%d cases have runs judged by different versions of their scoring rules (%s, …); %s",
			len(mixed), strings.Join(mixed[:maxRulesWarnings], ", "), advice)}
	}
	var out []string
	for _, id := range mixed {
		byDigest := a[id]
		digests := slices.Sorted(maps.Keys(byDigest))
		// Most runs first; ties by digest, so the text is stable.
		slices.SortStableFunc(digests, func(x, y string) int { return byDigest[y] - byDigest[x] })
		n := 0
		parts := make([]string, len(digests))
		for i, d := range digests {
			n += byDigest[d]
			parts[i] = fmt.Sprintf("%d by rules %.8s", byDigest[d], d)
		}
		out = append(out, fmt.Sprintf("case %s: its %d runs were judged by %d versions of its scoring rules (%s); %s",
			id, n, len(digests), strings.Join(parts, ", "), advice))
	}
	return out
}
