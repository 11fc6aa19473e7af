package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// Axis names, outermost first; Filter keys use the same names, plus "tag".
// Every axis but the case is an axis of package schema/cell, which
// formats, parses and orders its values.
const (
	AxisModel        = cell.Model
	AxisCase         = "case"
	AxisSeed         = cell.Seed
	AxisTemperature  = cell.Temperature
	AxisTools        = cell.Tools
	AxisConfirm      = cell.Confirm
	AxisDescriptions = cell.Descriptions
	AxisOptions      = cell.Options
)

// AxisNames lists the axes from outermost to innermost: the scheduling
// order, which fixes run indexes and shards (and so must not change).
var AxisNames = []string{AxisModel, AxisCase, AxisSeed, AxisTemperature, AxisTools, AxisConfirm, AxisDescriptions, AxisOptions}

const nAxes = 8

// Plan is a lazily expanded set of runs. It is immutable and safe for
// concurrent use.
type Plan struct {
	cases   []*schema.Case
	models  []string
	seeds   []int
	temps   []float64
	tools   []schema.ToolSubset
	confirm []cell.ConfirmMode
	descs   []string
	opts    []string // options set names, "default" for none

	// parts[a][v] is the identity-bearing encoding of value v of axis a
	// (the case axis holds case ids and run digests, schema.RunDigest),
	// hashed into run ids.
	parts [nAxes][]string
	size  [nAxes]int64
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
// defaults the schema filled in); an empty axis or an empty case list is an
// error, since the plan would silently be empty.
func New(cfg *schema.Config, cases []*schema.Case) (*Plan, error) {
	m := cfg.Matrix
	p := &Plan{
		cases:   cases,
		models:  m.Models,
		seeds:   m.Seeds,
		temps:   m.Temperatures,
		tools:   m.Tools,
		confirm: m.Confirm,
		descs:   m.Descriptions,
		sim:     SimulatorPart(cfg.Simulator),
		opts:    m.Options,
	}
	// Defaults, should a config arrive without the schema's.
	if len(p.seeds) == 0 {
		p.seeds = []int{1}
	}
	if len(p.temps) == 0 {
		p.temps = []float64{0}
	}
	if len(p.tools) == 0 {
		p.tools = []schema.ToolSubset{{Name: "needed"}}
	}
	if len(p.confirm) == 0 {
		p.confirm = []cell.ConfirmMode{cell.ConfirmAuto}
	}
	if len(p.descs) == 0 {
		p.descs = []string{"default"}
	}
	if len(p.opts) == 0 {
		p.opts = []string{cell.DefaultOptions}
	}
	if len(p.models) == 0 {
		return nil, errors.New("plan: matrix.models is empty")
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
	for _, t := range p.tools {
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

// encode fills parts, size and total and resets the shard window.
func (p *Plan) encode() error {
	// name=value, the value as package schema/cell formats it; the case
	// and the tool subset carry more than their names.
	for a, name := range AxisNames {
		vals := p.formatted(name)
		p.parts[a] = make([]string, len(vals))
		for i, v := range vals {
			p.parts[a][i] = name + "=" + v
		}
	}
	for i, c := range p.cases {
		p.parts[1][i] = "case=" + c.ID + "@" + caseDigest(c, p.sim)
	}
	for i, v := range p.tools {
		b, err := json.Marshal(v) // the whole definition: n8 with another count is another cell
		if err != nil {
			return err
		}
		p.parts[4][i] = "tools=" + string(b)
	}
	total := int64(1)
	for a := range nAxes {
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

// Models returns the model axis.
func (p *Plan) Models() []string { return p.models }

// Subsets returns the tools axis.
func (p *Plan) Subsets() []schema.ToolSubset { return p.tools }

// DescriptionSets returns the description-set axis.
func (p *Plan) DescriptionSets() []string { return p.descs }

// OptionsSets returns the options axis ("default" for none).
func (p *Plan) OptionsSets() []string { return p.opts }

// AxisCount is the number of values an axis has in the plan.
type AxisCount struct {
	Name   string
	Values []string
}

// Axes lists every axis with its values, outermost first.
func (p *Plan) Axes() []AxisCount {
	out := make([]AxisCount, len(AxisNames))
	for i, name := range AxisNames {
		out[i] = AxisCount{name, p.formatted(name)}
	}
	return out
}

// formatted returns the values of the named axis as package schema/cell
// formats them (case ids for the case axis), nil for an unknown name.
func (p *Plan) formatted(name string) []string {
	if name == AxisCase {
		out := make([]string, len(p.cases))
		for i, c := range p.cases {
			out[i] = c.ID
		}
		return out
	}
	a := cell.Lookup(name)
	if a == nil {
		return nil
	}
	n := p.axisLen(name)
	out := make([]string, n)
	for i := range n {
		out[i] = a.Format(p.cellAt(name, i))
	}
	return out
}

// axisLen is the number of values of a cell axis.
func (p *Plan) axisLen(name string) int {
	switch name {
	case AxisModel:
		return len(p.models)
	case AxisSeed:
		return len(p.seeds)
	case AxisTemperature:
		return len(p.temps)
	case AxisTools:
		return len(p.tools)
	case AxisConfirm:
		return len(p.confirm)
	case AxisDescriptions:
		return len(p.descs)
	case AxisOptions:
		return len(p.opts)
	}
	return 0
}

// cellAt returns a cell holding value i of the named axis (the other
// axes zero).
func (p *Plan) cellAt(name string, i int) cell.Cell {
	var c cell.Cell
	switch name {
	case AxisModel:
		c.Model = p.models[i]
	case AxisSeed:
		c.Seed = p.seeds[i]
	case AxisTemperature:
		c.Temperature = p.temps[i]
	case AxisTools:
		c.Tools = p.tools[i].Name
	case AxisConfirm:
		c.Confirm = p.confirm[i]
	case AxisDescriptions:
		c.Descriptions = p.descs[i]
	case AxisOptions:
		_ = cell.Lookup(cell.Options).Parse(&c, p.opts[i])
	}
	return c
}

// Run decodes the i'th run of the plan, 0 <= i < Len(). It allocates only
// the id string.
func (p *Plan) Run(i int64) Run {
	if i < 0 || i >= p.Len() {
		panic(fmt.Sprintf("plan: run index %d out of range [0, %d)", i, p.Len()))
	}
	g := p.start + i
	d := p.digits(g)
	ts := p.tools[d[4]]
	opts := p.opts[d[7]]
	if opts == cell.DefaultOptions {
		opts = "" // the cell's spelling of the default
	}
	return Run{
		Index: g,
		ID:    p.id(&d),
		Case:  p.cases[d[1]],
		Cell: record.Cell{
			Model:        p.models[d[0]],
			Seed:         p.seeds[d[2]],
			Temperature:  p.temps[d[3]],
			Tools:        ts.Name,
			Confirm:      p.confirm[d[5]],
			Descriptions: p.descs[d[6]],
			Options:      opts,
		},
		Subset: ts,
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
func (p *Plan) digits(g int64) [nAxes]int {
	var d [nAxes]int
	for a := nAxes - 1; a >= 0; a-- {
		d[a] = int(g % p.size[a])
		g /= p.size[a]
	}
	return d
}

// id hashes the identity parts of the digits in a fixed order (the case
// first), independent of the axis order used for scheduling. The options
// axis is hashed only when not "default", so that a cell without options
// keeps the id it had before the axis existed.
func (p *Plan) id(d *[nAxes]int) string {
	var buf [1024]byte
	b := buf[:0]
	b = append(b, p.parts[1][d[1]]...)
	for _, a := range [...]int{0, 2, 3, 4, 5, 6} {
		b = append(b, 0)
		b = append(b, p.parts[a][d[a]]...)
	}
	if p.opts[d[7]] != cell.DefaultOptions {
		b = append(b, 0)
		b = append(b, p.parts[7][d[7]]...)
	}
	sum := sha256.Sum256(b)
	var h [16]byte
	hex.Encode(h[:], sum[:8])
	return string(h[:])
}
