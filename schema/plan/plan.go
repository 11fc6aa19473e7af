package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// AxisCase is the name of the case axis, the one axis of a plan that is
// not an axis of package schema/cell. Filter keys use the axis names, plus
// "tag".
const AxisCase = "case"

// AxisNames lists the axes from outermost to innermost: the axes of
// package schema/cell in table order, with the case axis after the model
// (the table's first axis). It is the scheduling order, which fixes run
// indexes and shards.
var AxisNames = slices.Insert(cell.Names(), 1, AxisCase)

// maxAxes bounds the number of axes, so that decoding a run index needs
// no allocation.
const maxAxes = 16

var (
	caseAxis  = slices.Index(AxisNames, AxisCase)
	toolsAxis = slices.Index(AxisNames, cell.Tools)
	// axes[a] is the cell axis AxisNames[a] (nil for the case axis).
	axes = func() []*cell.Axis {
		if len(AxisNames) > maxAxes || AxisNames[0] != cell.Model {
			panic("plan: the axis table must start with the model and have at most 16 axes")
		}
		out := make([]*cell.Axis, len(AxisNames))
		for a, name := range AxisNames {
			out[a] = cell.Lookup(name)
		}
		return out
	}()
)

// Plan is a lazily expanded set of runs. It is immutable and safe for
// concurrent use.
type Plan struct {
	cases []*schema.Case
	// vals[a] are the values of axis AxisNames[a] as package schema/cell
	// formats them (the case axis: case ids). The tools axis is the one
	// whose values are more than names: its subsets are in subsets, its
	// names in vals.
	vals    [][]string
	subsets []schema.ToolSubset

	// parts[a][v] is the identity-bearing encoding of value v of axis a
	// (the case axis holds case ids and run digests, schema.RunDigest),
	// hashed into run ids.
	parts [][]string
	size  []int64
	total int64 // product of size, before sharding

	start, end int64 // shard window of [0, total)

	// sim is the identity of the config's simulator (SimulatorPart),
	// hashed into the ids of the runs of cases with a simulated user.
	sim string
}

// RunDigest is what the run ids of case c hash of it under cfg, as
// config.json keeps it (results.Meta.Cases): its run digest
// (schema.RunDigest), and for a case with a simulated user, "+simulator="
// and the config's SimulatorPart. A plan rebuilt from config.json alone,
// from cases that carry only this digest, has the same run ids.
func RunDigest(cfg *schema.Config, c *schema.Case) string {
	return caseDigest(c, SimulatorPart(cfg.Simulator))
}

func caseDigest(c *schema.Case, sim string) string {
	d := c.RunDigest
	if d == "" {
		d = schema.RunDigest(c) // a case built without the loader
	}
	if c.User.Simulated() {
		d += "+simulator=" + sim
	}
	return d
}

// SimulatorPart is what a run id hashes of the config's simulator for a
// case with a simulated user: its model, temperature, stop marker and
// system prompt, all of which shape what the user says and so what the
// model sees. Its backend (where it runs) is not, as the model backend's
// host is not. "" for no simulator.
func SimulatorPart(sim *schema.Simulator) string {
	if sim == nil {
		return ""
	}
	b, err := json.Marshal(struct {
		Model       string  `json:"model"`
		Temperature float64 `json:"temperature"`
		Stop        string  `json:"stop"`
		System      string  `json:"system"`
	}{sim.Model, sim.Temperature, sim.Stop, sim.System})
	if err != nil {
		panic("plan: encoding the simulator: " + err.Error()) // strings and a float
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Run is one decoded run of a plan.
type Run struct {
	// Index is the run's position in the filtered, unsharded plan.
	Index int64
	// ID is the first 16 hex digits of a SHA-256 over the case id, its
	// run digest (schema.RunDigest: what the model sees, not how the run
	// is judged), for a case with a simulated user the simulator
	// (SimulatorPart), and the cell, stable across processes and
	// machines.
	ID     string
	Case   *schema.Case
	Cell   record.Cell // ToolCount is left 0: it is known once tools are listed
	Subset schema.ToolSubset
}

// ErrTooLarge is returned when a matrix has more runs than an int64 holds.
var ErrTooLarge = errors.New("plan: matrix has more than 2^63-1 runs")

// New builds the plan of cfg over cases. Axes come from the config (whose
// defaults the schema filled in; an axis it leaves out gets the axis
// table's default); an empty model axis or an empty case list is an error,
// since the plan would silently be empty.
func New(cfg *schema.Config, cases []*schema.Case) (*Plan, error) {
	m := cfg.Matrix
	p := &Plan{
		cases:   cases,
		vals:    make([][]string, len(AxisNames)),
		subsets: m.Tools,
		sim:     SimulatorPart(cfg.Simulator),
	}
	for a, ax := range axes {
		if ax == nil {
			continue
		}
		if p.vals[a] = m.Values(ax.Name); len(p.vals[a]) == 0 {
			if len(ax.Default) == 0 {
				return nil, fmt.Errorf("plan: matrix.%s is empty", ax.Key)
			}
			p.vals[a] = ax.Default
		}
	}
	if len(p.subsets) == 0 {
		p.subsets = nil
		for _, name := range p.vals[toolsAxis] {
			p.subsets = append(p.subsets, schema.ToolSubset{Name: name})
		}
	}
	if len(cases) == 0 {
		return nil, errors.New("plan: no cases matched the config's case patterns")
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.ID] {
			return nil, fmt.Errorf("plan: case id %q appears twice", c.ID)
		}
		seen[c.ID] = true
	}
	names := map[string]bool{}
	for _, t := range p.subsets {
		if names[t.Name] {
			return nil, fmt.Errorf("plan: tool subset name %q appears twice", t.Name)
		}
		names[t.Name] = true
	}
	if err := p.encode(); err != nil {
		return nil, err
	}
	return p, nil
}

// encode fills the case axis's values, parts, size and total and resets
// the shard window.
func (p *Plan) encode() error {
	ids := make([]string, len(p.cases))
	for i, c := range p.cases {
		ids[i] = c.ID
	}
	p.vals[caseAxis] = ids
	// name=value, the value as package schema/cell formats it; the case
	// and the tool subset carry more than their names.
	p.parts = make([][]string, len(AxisNames))
	p.size = make([]int64, len(AxisNames))
	for a, name := range AxisNames {
		p.parts[a] = make([]string, len(p.vals[a]))
		for i, v := range p.vals[a] {
			p.parts[a][i] = name + "=" + v
		}
	}
	for i, c := range p.cases {
		p.parts[caseAxis][i] = "case=" + c.ID + "@" + caseDigest(c, p.sim)
	}
	p.vals[toolsAxis] = make([]string, len(p.subsets))
	p.parts[toolsAxis] = make([]string, len(p.subsets))
	for i, v := range p.subsets {
		b, err := json.Marshal(v) // the whole definition: n8 with another count is another cell
		if err != nil {
			return err
		}
		p.vals[toolsAxis][i] = v.Name
		p.parts[toolsAxis][i] = "tools=" + string(b)
	}
	total := int64(1)
	for a := range p.parts {
		n := int64(len(p.parts[a]))
		p.size[a] = n
		if n == 0 {
			total = 0
			continue
		}
		hi, lo := bits.Mul64(uint64(total), uint64(n))
		if hi != 0 || lo > math.MaxInt64 {
			return ErrTooLarge
		}
		total = int64(lo)
	}
	p.total = total
	p.start, p.end = 0, total
	return nil
}

// Len is the number of runs in the plan (after filtering and sharding).
func (p *Plan) Len() int64 { return p.end - p.start }

// Total is the number of runs before sharding.
func (p *Plan) Total() int64 { return p.total }

// Cases returns the plan's cases in case-axis order.
func (p *Plan) Cases() []*schema.Case { return p.cases }

// Values returns the values of the named axis as package schema/cell
// formats them (case ids for the case axis), nil for an unknown name.
func (p *Plan) Values(name string) []string {
	if a := slices.Index(AxisNames, name); a >= 0 {
		return p.vals[a]
	}
	return nil
}

// Subsets returns the tools axis.
func (p *Plan) Subsets() []schema.ToolSubset { return p.subsets }

// AxisCount is the number of values an axis has in the plan.
type AxisCount struct {
	Name   string
	Values []string
}

// Axes lists every axis with its values, outermost first.
func (p *Plan) Axes() []AxisCount {
	out := make([]AxisCount, len(AxisNames))
	for a, name := range AxisNames {
		out[a] = AxisCount{name, p.vals[a]}
	}
	return out
}

// Run decodes the i'th run of the plan, 0 <= i < Len(). It allocates only
// the id string.
func (p *Plan) Run(i int64) Run {
	if i < 0 || i >= p.Len() {
		panic(fmt.Sprintf("plan: run index %d out of range [0, %d)", i, p.Len()))
	}
	g := p.start + i
	d := p.digits(g)
	var c record.Cell
	for a, ax := range axes {
		if ax != nil {
			_ = ax.Parse(&c, p.vals[a][d[a]]) // formatted by the axis: it parses
		}
	}
	return Run{
		Index:  g,
		ID:     p.id(&d),
		Case:   p.cases[d[caseAxis]],
		Cell:   c,
		Subset: p.subsets[d[toolsAxis]],
	}
}

// ID returns the id of the i'th run without decoding the rest.
func (p *Plan) ID(i int64) string {
	if i < 0 || i >= p.Len() {
		panic(fmt.Sprintf("plan: run index %d out of range [0, %d)", i, p.Len()))
	}
	d := p.digits(p.start + i)
	return p.id(&d)
}

// digits decodes a position in the unsharded plan into one value index
// per axis.
func (p *Plan) digits(g int64) [maxAxes]int {
	var d [maxAxes]int
	for a := len(p.size) - 1; a >= 0; a-- {
		d[a] = int(g % p.size[a])
		g /= p.size[a]
	}
	return d
}

// id hashes the identity parts of the digits in a fixed order, the case
// first and then the cell's axes in table order, independent of the axis
// order used for scheduling. A Quiet axis at its default is left out, so
// that a cell of a matrix without the axis keeps the id it had before the
// axis existed.
func (p *Plan) id(d *[maxAxes]int) string {
	var buf [1024]byte
	b := buf[:0]
	b = append(b, p.parts[caseAxis][d[caseAxis]]...)
	for a, ax := range axes {
		if ax == nil || ax.Hides(p.vals[a][d[a]]) {
			continue
		}
		b = append(b, 0)
		b = append(b, p.parts[a][d[a]]...)
	}
	sum := sha256.Sum256(b)
	var h [16]byte
	hex.Encode(h[:], sum[:8])
	return string(h[:])
}
