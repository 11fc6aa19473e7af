package report

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// Estimate is what a job would cost at its config's prices, from the
// token counts of the runs of an earlier result directory: each planned
// run is given the mean tokens of the earlier runs of its case and model,
// else of its case, else of all the earlier runs.
type Estimate struct {
	Total float64 // US dollars
	Runs  int     // planned runs
	// From is the number of earlier runs the means come from; Matched,
	// CaseOnly and Overall count the planned runs given the mean of their
	// case and model, of their case, and of all runs.
	From, Matched, CaseOnly, Overall int
	// Unpriced lists the planned models without a price (costed at 0);
	// Local names a local backend (every run costs 0).
	Unpriced []string
	Local    string
}

// tokenMean accumulates token counts for a mean.
type tokenMean struct {
	n               int
	in, cached, out float64
}

func (m *tokenMean) add(t record.Tokens) {
	m.n++
	m.in += float64(t.In)
	m.cached += float64(t.Cached)
	m.out += float64(t.Out)
}

func (m *tokenMean) cost(p schema.Price) float64 {
	n := float64(m.n)
	cachedPrice := p.Input
	if p.CachedInput != nil {
		cachedPrice = *p.CachedInput
	}
	in, cached, out := m.in/n, min(m.cached/n, m.in/n), m.out/n
	return ((in-cached)*p.Input + cached*cachedPrice + out*p.Output) / 1e6
}

// EstimateCost estimates the cost of the planned runs (case id, model) at
// cfg's prices from the records of dir. It fails when dir has no runs.
func EstimateCost(dir string, cfg *schema.Config, planned iter.Seq2[string, string]) (*Estimate, error) {
	byCaseModel := map[[2]string]*tokenMean{}
	byCase := map[string]*tokenMean{}
	var all tokenMean
	_, err := results.Runs(func(rec *record.Record) error {
		k := [2]string{rec.Case, rec.Cell.Model}
		if byCaseModel[k] == nil {
			byCaseModel[k] = &tokenMean{}
		}
		if byCase[rec.Case] == nil {
			byCase[rec.Case] = &tokenMean{}
		}
		byCaseModel[k].add(rec.Tokens)
		byCase[rec.Case].add(rec.Tokens)
		all.add(rec.Tokens)
		return nil
	}, dir)
	if err != nil {
		return nil, fmt.Errorf("estimating from %s: %w", dir, err)
	}
	if all.n == 0 {
		return nil, fmt.Errorf("estimating from %s: it has no runs", dir)
	}
	e := &Estimate{From: all.n, Local: schema.LocalBackend(cfg.Backend)}
	for caseID, model := range planned {
		e.Runs++
		m := byCaseModel[[2]string{caseID, model}]
		switch {
		case m != nil:
			e.Matched++
		case byCase[caseID] != nil:
			m = byCase[caseID]
			e.CaseOnly++
		default:
			m = &all
			e.Overall++
		}
		p, ok := cfg.Prices[model]
		if !ok {
			if !slices.Contains(e.Unpriced, model) {
				e.Unpriced = append(e.Unpriced, model)
			}
			continue
		}
		if e.Local == "" {
			e.Total += m.cost(p)
		}
	}
	slices.Sort(e.Unpriced)
	return e, nil
}

// String says the estimate in one paragraph.
func (e *Estimate) String() string {
	var b strings.Builder
	if e.Local != "" {
		fmt.Fprintf(&b, "estimated cost: $0 for %d runs: the %s backend runs on your own hardware", e.Runs, e.Local)
		return b.String()
	}
	fmt.Fprintf(&b, "estimated cost: %s for %d runs (%s per run), from the token counts of %d earlier runs", dollars(e.Total), e.Runs, dollars(per(e.Total, e.Runs)), e.From)
	fmt.Fprintf(&b, "; %d runs matched by case and model, %d by case only, %d by the mean of all runs", e.Matched, e.CaseOnly, e.Overall)
	if len(e.Unpriced) > 0 {
		fmt.Fprintf(&b, "; no price for %s (counted as $0)", strings.Join(e.Unpriced, ", "))
	}
	return b.String()
}
