// Package cell defines the matrix cell of a run and the table of its axes
// (Axes): every stage names, formats, parses and orders axis values through
// this table, and reads from it what it needs of each axis, so that adding
// an axis costs its field in Cell and its entry in Axes, plus its tests
// and what the axis means at run time:
//
//   - schema: a run config's matrix (schema.Matrix) holds the axis under
//     Key; its #Matrix field (Type, Default, Doc), its #Selectors field
//     (the selectors of a case's `when`, for a Scoring axis) and, for a
//     Closed axis, the enum named by its Type are generated from the
//     table into schema/toolward.cue by `go generate ./schema/...`,
//     which also regenerates the case and cassette JSON Schemas.
//   - schema/plan schedules the axes in table order with the case axis
//     after the model, and hashes them into run ids (a Quiet axis at its
//     default is left out, so ids do not change when an axis is added).
//   - schema/runconfig checks repeated values of every axis.
//   - case `when` entries select on the Scoring axes, cassettes and
//     `--filter` on every axis, by Pattern.
//   - reports (labels, cell keys, the cells table, CSV columns), diffs and
//     `toolward plan --list` loop over the table.
//
// TestStagesFollowAxes (in this package's tests) checks that each of those
// stages lists exactly the axes of the table. The fast runs.jsonl reader
// of schema/record decodes the cell's fields by hand for speed and hands
// a record with any other key to encoding/json.
//
// It also holds the one selector language that picks cells (see Pattern):
// `toolward run --filter`, a cassette run's `when` and a case's `when`
// entries all match with it.
//
// The package imports only the standard library, so that analysis
// (report, diff, score) can use it without linking CUE or the runtime.
package cell

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Cell is the matrix cell of a run: one value per axis. Its JSON form is
// the "cell" object of a run record (runs.jsonl); changing it is a format
// change.
type Cell struct {
	Model        string      `json:"model"`
	Seed         int         `json:"seed"`
	Temperature  float64     `json:"temperature"`
	Tools        string      `json:"tools"`      // tool subset name, e.g. "needed", "n16", "all"
	ToolCount    int         `json:"tool_count"` // tools actually offered; not an axis (it follows from the subset)
	Confirm      ConfirmMode `json:"confirm"`
	Descriptions string      `json:"descriptions"`
	// Options names the backend options set; "" is "default" (none), so
	// a record of a default cell is as it was before the axis existed.
	Options string `json:"options,omitempty"`
}

// Axis names.
const (
	Model        = "model"
	Seed         = "seed"
	Temperature  = "temperature"
	Tools        = "tools"
	Confirm      = "confirm"
	Descriptions = "descriptions"
	Options      = "options"
)

// DefaultOptions is the options axis value that sends no options.
const DefaultOptions = "default"

// ConfirmMode is a value of the confirm axis: how the simulated user
// answers the calls a server gates.
type ConfirmMode string

// The confirm modes, in report order: auto (no gate), approve (every
// gated call approved) and deny (every gated call denied).
const (
	ConfirmAuto    ConfirmMode = "auto"
	ConfirmApprove ConfirmMode = "approve"
	ConfirmDeny    ConfirmMode = "deny"
)

// ConfirmModes lists the confirm modes in report order.
var ConfirmModes = []ConfirmMode{ConfirmAuto, ConfirmApprove, ConfirmDeny}

func modeNames() []string {
	out := make([]string, len(ConfirmModes))
	for i, m := range ConfirmModes {
		out[i] = string(m)
	}
	return out
}

// Axis describes one axis of the matrix.
type Axis struct {
	// Name is the axis name in filters, cassettes, case `when` entries,
	// record JSON and reports.
	Name string
	// Key is the field of a run config's matrix that lists the axis's
	// values ("seeds" for the seed).
	Key string
	// Doc says what one value of the axis is, for the schema's comments
	// ("a sampling temperature").
	Doc string
	// Short is the label reports use in compact cell names ("temp").
	Short string
	// Heading is the axis's column heading in report tables; Name when
	// empty.
	Heading string
	// Type is the CUE type of one value in a config's matrix: "string",
	// "int", "number", or a definition of schema/toolward.cue
	// ("#ToolSubset"; for a Closed axis, the enum of its Known values,
	// which the schema's generated part defines under this name).
	Type string
	// Default lists the values, formatted, a config that leaves the axis
	// out gets; none for an axis every config must give (the model).
	Default []string
	// Numeric axes hold numbers: patterns compare by value ("0.70"
	// selects 0.7) and values order numerically.
	Numeric bool
	// Closed axes take only their Known values (the confirm modes).
	Closed bool
	// Scoring is set for the axes a case `when` entry may select on.
	// The seed is not one: a verdict must not depend on which repetition
	// of a cell produced the trace.
	Scoring bool
	// Quiet axes are left out of labels, cell names and run ids while at
	// their first Known value, so cells of a matrix without the axis keep
	// the names and ids they had before it existed.
	Quiet bool
	// Known lists values in their report order ("auto" before "approve"
	// before "deny"); values not listed follow, in lexical order.
	Known []string

	// get and set take and return cells by value, so that setting an axis
	// allocates nothing (a pointer passed to a func value escapes).
	get func(Cell) string
	set func(Cell, string) (Cell, error)
}

// Axes is the table of axes, in record order (model, seed, temperature,
// tools, confirm, descriptions, options). The model comes first: the plan
// schedules in this order with the case axis after the model (see
// schema/plan), so moving an entry, or adding one anywhere but at the end,
// renumbers every plan's runs and shards.
var Axes = []*Axis{
	{Name: Model, Key: "models", Doc: "a model, as the backend names it",
		Short: "model", Type: "string", Scoring: true,
		get: func(c Cell) string { return c.Model },
		set: func(c Cell, s string) (Cell, error) { c.Model = s; return c, nil }},
	{Name: Seed, Key: "seeds", Doc: "a seed: every other cell runs once per seed",
		Short: "seed", Type: "int", Default: []string{"1"}, Numeric: true,
		get: func(c Cell) string { return strconv.Itoa(c.Seed) },
		set: func(c Cell, s string) (_ Cell, err error) { c.Seed, err = strconv.Atoi(s); return c, err }},
	{Name: Temperature, Key: "temperatures", Doc: "a sampling temperature",
		Short: "temp", Heading: "temp", Type: "number", Default: []string{"0"}, Numeric: true, Scoring: true,
		get: func(c Cell) string { return FormatFloat(c.Temperature) },
		set: func(c Cell, s string) (_ Cell, err error) {
			c.Temperature, err = strconv.ParseFloat(s, 64)
			return c, err
		}},
	{Name: Tools, Key: "tools", Doc: "a tool subset: which tools a run offers",
		Short: "tools", Type: "#ToolSubset", Default: []string{"needed"}, Scoring: true,
		get: func(c Cell) string { return c.Tools },
		set: func(c Cell, s string) (Cell, error) { c.Tools = s; return c, nil }},
	{Name: Confirm, Key: "confirm", Doc: "a confirm mode: auto (calls run), approve (the user approves each call), deny (the user denies each call)",
		Short: "confirm", Type: "#Confirm", Default: []string{string(ConfirmAuto)}, Closed: true, Scoring: true, Known: modeNames(),
		get: func(c Cell) string { return string(c.Confirm) },
		set: func(c Cell, s string) (Cell, error) { c.Confirm = ConfirmMode(s); return c, nil }},
	{Name: Descriptions, Key: "descriptions", Doc: "a description set: a description_sets name, or \"default\" (the server's own descriptions)",
		Short: "desc", Type: "string", Default: []string{"default"}, Scoring: true, Known: []string{"default"},
		get: func(c Cell) string { return c.Descriptions },
		set: func(c Cell, s string) (Cell, error) { c.Descriptions = s; return c, nil }},
	{Name: Options, Key: "options", Doc: "an options set: an options_sets name, or \"default\" (no options)",
		Short: "opts", Type: "string", Default: []string{DefaultOptions}, Scoring: true, Quiet: true, Known: []string{DefaultOptions},
		get: func(c Cell) string { return cmp.Or(c.Options, DefaultOptions) },
		set: func(c Cell, s string) (Cell, error) {
			c.Options = cmp.Or(s, DefaultOptions)
			normalize(&c)
			return c, nil
		}},
}

// normalize spells the default options set as "", the form cells and
// records hold.
func normalize(c *Cell) {
	if c.Options == DefaultOptions {
		c.Options = ""
	}
}

// Hides reports whether v is a value of a that labels, cell names and
// report keys leave out (a Quiet axis at its default).
func (a *Axis) Hides(v string) bool { return a.Quiet && v == a.Known[0] }

// ColumnHeading is the axis's column heading in report tables.
func (a *Axis) ColumnHeading() string { return cmp.Or(a.Heading, a.Name) }

// Lookup returns the axis named name, or nil.
func Lookup(name string) *Axis {
	for _, a := range Axes {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Names returns the axis names in table order.
func Names() []string {
	out := make([]string, len(Axes))
	for i, a := range Axes {
		out[i] = a.Name
	}
	return out
}

// ScoringNames returns the names of the axes a case `when` entry may
// select on, in table order.
func ScoringNames() []string {
	var out []string
	for _, a := range Axes {
		if a.Scoring {
			out = append(out, a.Name)
		}
	}
	return out
}

// Format returns the value of the axis in c as every stage spells it.
func (a *Axis) Format(c Cell) string { return a.get(c) }

// Parse sets the axis in c from its formatted value s; it fails only for
// a numeric axis whose s is not a number of its kind.
func (a *Axis) Parse(c *Cell, s string) error {
	v, err := a.set(*c, s)
	if err != nil {
		return fmt.Errorf("cell: %s %q: want a number", a.Name, s)
	}
	*c = v
	return nil
}

// Compare orders two formatted values of the axis: numerically on a
// numeric axis, by Known then lexically otherwise.
func (a *Axis) Compare(x, y string) int {
	if a.Numeric {
		fx, errx := strconv.ParseFloat(x, 64)
		fy, erry := strconv.ParseFloat(y, 64)
		if errx == nil && erry == nil {
			return cmp.Or(cmp.Compare(fx, fy), cmp.Compare(x, y))
		}
	}
	return cmp.Or(cmp.Compare(a.rank(x), a.rank(y)), cmp.Compare(x, y))
}

// rank is the position of v in Known ("" counts as the first known
// value, the schema's default), len(Known) for any other value.
func (a *Axis) rank(v string) int {
	if v == "" && len(a.Known) > 0 {
		return 0
	}
	for i, k := range a.Known {
		if k == v {
			return i
		}
	}
	return len(a.Known)
}

// Value returns the formatted value of the named axis, "" for an unknown
// name.
func (c Cell) Value(axis string) string {
	if a := Lookup(axis); a != nil {
		return a.Format(c)
	}
	return ""
}

// Values returns every axis of c by name, formatted: the replay key of a
// model request (engine/backend.Key).
func (c Cell) Values() map[string]string {
	m := make(map[string]string, len(Axes))
	for _, a := range Axes {
		m[a.Name] = a.Format(c)
	}
	return m
}

// With returns c with the named axis set from its formatted value.
func (c Cell) With(axis, v string) (Cell, error) {
	a := Lookup(axis)
	if a == nil {
		return c, fmt.Errorf("cell: unknown axis %q (want one of %s)", axis, strings.Join(Names(), ", "))
	}
	err := a.Parse(&c, v)
	return c, err
}

// Pool returns c with the named axes and the tool count set to their zero
// values, so that cells differing only there compare equal (a report
// pools seeds).
func (c Cell) Pool(axes ...string) Cell {
	var zero Cell
	for _, name := range axes {
		if a := Lookup(name); a != nil {
			c, _ = a.set(c, a.get(zero))
		}
	}
	c.ToolCount = 0
	return c
}

// Project returns c with only the named axes kept, every other axis (and
// the tool count) at its zero value: the key of a breakdown by those axes
// (benchproc's projection), so that a report groups by a projection of
// the cell rather than by a key of its own.
func (c Cell) Project(axes ...string) Cell {
	var pooled []string
	for _, a := range Axes {
		if !slices.Contains(axes, a.Name) {
			pooled = append(pooled, a.Name)
		}
	}
	return c.Pool(pooled...)
}

// String names the cell on one line, every axis in table order as
// name=value, e.g. "model=qwen3:0.6b seed=1 temperature=0 tools=n16
// confirm=deny descriptions=default".
func (c Cell) String() string { return Join(c, " ", "=", false, Names()...) }

// Join formats the named axes of c as name<eq>value separated by sep,
// with each axis's Short label when short is set. An axis whose value is
// "" is left out.
func Join(c Cell, sep, eq string, short bool, axes ...string) string {
	var b strings.Builder
	for _, name := range axes {
		a := Lookup(name)
		if a == nil {
			continue
		}
		v := a.Format(c)
		if v == "" || a.Hides(v) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		if short {
			b.WriteString(a.Short)
		} else {
			b.WriteString(a.Name)
		}
		b.WriteString(eq)
		b.WriteString(v)
	}
	return b.String()
}

// Compare orders cells axis by axis in the given order (every axis in
// table order when none is given), each by Axis.Compare.
func Compare(x, y Cell, axes ...string) int {
	list := Axes
	if len(axes) > 0 {
		list = make([]*Axis, 0, len(axes))
		for _, n := range axes {
			if a := Lookup(n); a != nil {
				list = append(list, a)
			}
		}
	}
	for _, a := range list {
		if c := a.Compare(a.Format(x), a.Format(y)); c != 0 {
			return c
		}
	}
	return 0
}

// FormatFloat formats a number the way ids, filters, cassettes and
// reports spell it: the shortest representation that round-trips ("0",
// "0.7").
func FormatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Label is the one-line name reports give a cell: the model, then every
// other axis in table order as Short=value ("-" for none), the seed last;
// the axes named in pooled are left out.
func Label(c Cell, pooled ...string) string {
	parts := []string{c.Model}
	for _, a := range Axes {
		if a.Name == Model || a.Name == Seed || slices.Contains(pooled, a.Name) {
			continue
		}
		v := a.Format(c)
		if a.Hides(v) {
			continue
		}
		if v == "" {
			v = "-"
		}
		parts = append(parts, a.Short+"="+v)
	}
	if !slices.Contains(pooled, Seed) {
		parts = append(parts, "seed="+strconv.Itoa(c.Seed))
	}
	return strings.Join(parts, " ")
}
