package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

// Cost is what the runs cost at the prices of the config (config.json's
// prices; without them there is no Cost), in US dollars: in all, per run and per passing run, per model
// and per case. A run's cost is its tokens at its model's price (input
// read from the prompt cache at cached_input); runs that ended in an
// error cost what their turns used.
type Cost struct {
	Currency string  `json:"currency"` // "USD"
	Total    float64 `json:"total"`
	PerRun   float64 `json:"per_run"`
	// PerPass is Total over the passing runs: what one pass cost; 0
	// with none.
	PerPass float64     `json:"per_pass,omitempty"`
	Models  []ModelCost `json:"models"`
	Cases   []CaseCost  `json:"cases"`
	// Unpriced lists the models that ran without a price; their runs
	// count as costing nothing.
	Unpriced []string `json:"unpriced,omitempty"`
	// Local names the backend when it runs on the user's own hardware
	// (schema.LocalBackend): every run cost nothing, whatever the prices
	// say.
	Local string `json:"local,omitempty"`
}

// ModelCost is one model's share of Cost.
type ModelCost struct {
	Model        string  `json:"model"`
	Runs         int     `json:"runs"`
	Passes       int     `json:"passes"`
	TokensIn     int64   `json:"tokens_in"`
	TokensCached int64   `json:"tokens_cached,omitempty"`
	TokensOut    int64   `json:"tokens_out"`
	Cost         float64 `json:"cost"`
	PerRun       float64 `json:"per_run"`
	PerPass      float64 `json:"per_pass,omitempty"`
	Priced       bool    `json:"priced"`
}

// CaseCost is one case's share of Cost.
type CaseCost struct {
	Case    string  `json:"case"`
	Runs    int     `json:"runs"`
	Passes  int     `json:"passes"`
	Cost    float64 `json:"cost"`
	PerRun  float64 `json:"per_run"`
	PerPass float64 `json:"per_pass,omitempty"`
}

// costAgg adds up tokens and cost by model and by case.
type costAgg struct {
	prices map[string]schema.Price
	local  string
	models map[string]*ModelCost
	cases  map[string]*CaseCost
}

func (c *costAgg) add(rec *record.Record, outcome record.Outcome) {
	if c.prices == nil {
		return
	}
	if c.models == nil {
		c.models, c.cases = map[string]*ModelCost{}, map[string]*CaseCost{}
	}
	m := entry(c.models, rec.Cell.Model, func() *ModelCost {
		_, priced := c.prices[rec.Cell.Model]
		return &ModelCost{Model: rec.Cell.Model, Priced: priced && c.local == ""}
	})
	k := entry(c.cases, rec.Case, func() *CaseCost { return &CaseCost{Case: rec.Case} })
	t := rec.Tokens
	cost := 0.0
	if m.Priced {
		cost = c.prices[rec.Cell.Model].Cost(t.In, t.Cached, t.Out)
	}
	pass := 0
	if outcome == record.Pass {
		pass = 1
	}
	m.Runs++
	m.Passes += pass
	m.TokensIn += int64(t.In)
	m.TokensCached += int64(t.Cached)
	m.TokensOut += int64(t.Out)
	m.Cost += cost
	k.Runs++
	k.Passes += pass
	k.Cost += cost
}

// summary is the Cost, nil when the config set no prices.
func (c *costAgg) summary() *Cost {
	if c.prices == nil {
		return nil
	}
	out := &Cost{Currency: "USD", Local: c.local, Models: []ModelCost{}, Cases: []CaseCost{}}
	runs, passes := 0, 0
	for _, name := range sortedKeys(c.models) {
		m := *c.models[name]
		m.PerRun, m.PerPass = per(m.Cost, m.Runs), per(m.Cost, m.Passes)
		if !m.Priced && c.local == "" {
			out.Unpriced = append(out.Unpriced, m.Model)
		}
		out.Total += m.Cost
		runs, passes = runs+m.Runs, passes+m.Passes
		out.Models = append(out.Models, m)
	}
	for _, name := range sortedKeys(c.cases) {
		k := *c.cases[name]
		k.PerRun, k.PerPass = per(k.Cost, k.Runs), per(k.Cost, k.Passes)
		out.Cases = append(out.Cases, k)
	}
	// Dearest cases first, then by id.
	slices.SortStableFunc(out.Cases, func(a, b CaseCost) int {
		switch {
		case a.Cost > b.Cost:
			return -1
		case a.Cost < b.Cost:
			return 1
		}
		return 0
	})
	out.PerRun, out.PerPass = per(out.Total, runs), per(out.Total, passes)
	return out
}

func per(cost float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return cost / float64(n)
}

// dollars formats a cost: whole dollars from $100, cents from $1, and
// three significant digits for the small amounts a run costs.
func dollars(v float64) string {
	switch {
	case v <= 0:
		return "$0"
	case v >= 100:
		return fmt.Sprintf("$%.0f", v)
	case v >= 1:
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("$%.*f", 2-int(math.Floor(math.Log10(v))), v)
}

// Note is the explanation above the cost tables.
func (c *Cost) Note() string {
	if c.Local != "" {
		return fmt.Sprintf("The %s backend runs on your own hardware: its tokens have no price, so every run cost nothing.", c.Local)
	}
	s := fmt.Sprintf("At the config's prices (US dollars per million tokens; input read from the prompt cache at cached_input): %s in all, %s per run", dollars(c.Total), dollars(c.PerRun))
	if c.PerPass > 0 {
		s += fmt.Sprintf(", %s per passing run", dollars(c.PerPass))
	}
	s += ". Runs that ended in an error cost the turns they used."
	if len(c.Unpriced) > 0 {
		s += fmt.Sprintf(" No price for %v: counted as costing nothing.", c.Unpriced)
	}
	return s
}

// maxCostCases bounds the rows of the cost-by-case table.
const maxCostCases = 20

func (s *Summary) costTables() (models, cases *Table) {
	c := s.Cost
	if c == nil || c.Local != "" {
		return nil, nil
	}
	models = &Table{ID: "cost-models-table", Columns: []Column{
		col("model"), numCol("runs"), numCol("tokens in"), numCol("cached in"), numCol("tokens out"), numCol("cost"), numCol("per run"), numCol("per pass"),
	}}
	for _, m := range c.Models {
		cost := textCell(dollars(m.Cost))
		if !m.Priced {
			cost = textCell("no price")
		}
		models.Rows = append(models.Rows, []Cell{nameCell(m.Model), numCell(m.Runs), textCell(fmt.Sprint(m.TokensIn)), textCell(fmt.Sprint(m.TokensCached)),
			textCell(fmt.Sprint(m.TokensOut)), cost, textCell(dollars(m.PerRun)), textCell(perPassText(m.PerPass, m.Passes))})
	}
	cases = &Table{ID: "cost-cases-table", Columns: []Column{col("case"), numCol("runs"), numCol("pass"), numCol("cost"), numCol("per run"), numCol("per pass")}}
	for i, k := range c.Cases {
		if i == maxCostCases {
			cases.Notes = append(cases.Notes, textCell(fmt.Sprintf("%d cheaper cases are in summary.json.", len(c.Cases)-maxCostCases)))
			break
		}
		cases.Rows = append(cases.Rows, []Cell{nameCell(k.Case), numCell(k.Runs), numCell(k.Passes), textCell(dollars(k.Cost)), textCell(dollars(k.PerRun)), textCell(perPassText(k.PerPass, k.Passes))})
	}
	return models, cases
}

func perPassText(v float64, passes int) string {
	if passes == 0 {
		return "no pass"
	}
	return dollars(v)
}
