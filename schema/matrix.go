package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"github.com/toolward/toolward/schema/cell"
)

// Matrix is the set of axes whose cross product, times the cases, is the
// plan: for every axis of package schema/cell, the values a run config
// lists under the axis's Key ("models", "seeds", …), read and written
// through the axis table, so that a new axis needs no field here. An axis
// the file leaves out gets its default from #Config.
//
// Values are kept as package schema/cell formats them ("0.7", "1"). The
// tools axis is the one whose values are more than their names: its
// subsets are in Tools, and its formatted values are their names.
//
// A Matrix is a value: Set and With copy what they change, so copies of a
// config never share their axes.
type Matrix struct {
	// Tools are the values of the tools axis.
	Tools []ToolSubset
	vals  map[string][]string // axis name -> formatted values; every axis but tools
}

// Values returns the values of the named axis, formatted (the tools axis:
// its subsets' names); nil for an axis the matrix leaves out.
func (m Matrix) Values(axis string) []string {
	if axis == cell.Tools {
		if m.Tools == nil {
			return nil
		}
		out := make([]string, len(m.Tools))
		for i, t := range m.Tools {
			out[i] = t.Name
		}
		return out
	}
	return m.vals[axis]
}

// Set sets the values of the named axis, each formatted as package
// schema/cell formats it or in any spelling its Parse reads ("0.70"); the
// tools axis gets subsets of those names. It panics for an unknown axis
// or a value the axis cannot parse: Set is for values written in Go, a
// config's come through its decoder.
func (m *Matrix) Set(axis string, vals ...string) {
	a := cell.Lookup(axis)
	if a == nil {
		panic(fmt.Sprintf("schema: Matrix.Set: unknown axis %q", axis))
	}
	if axis == cell.Tools {
		m.Tools = nil
		for _, v := range vals {
			m.Tools = append(m.Tools, ToolSubset{Name: v})
		}
		return
	}
	out, err := formatValues(a, vals)
	if err != nil {
		panic("schema: Matrix.Set: " + err.Error())
	}
	m.vals = maps.Clone(m.vals)
	if m.vals == nil {
		m.vals = map[string][]string{}
	}
	m.vals[axis] = out
}

// With returns m with the named axis set to vals, as Set does.
func (m Matrix) With(axis string, vals ...string) Matrix {
	m.Set(axis, vals...)
	return m
}

// formatValues returns vals as a formats them.
func formatValues(a *cell.Axis, vals []string) ([]string, error) {
	if vals == nil {
		return nil, nil
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		var c cell.Cell
		if err := a.Parse(&c, v); err != nil {
			return nil, err
		}
		out[i] = a.Format(c)
	}
	return out, nil
}

// MarshalJSON writes the matrix as a config's matrix object: each axis
// under its Key in table order, numbers as numbers, an axis left out as
// null (a Quiet axis left out is omitted, so that a config without it
// keeps its bytes and digest).
func (m Matrix) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the encoder around this one escapes as it is told
	b.WriteByte('{')
	for _, a := range cell.Axes {
		vals := m.Values(a.Name)
		if len(vals) == 0 && a.Quiet {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		if err := enc.Encode(a.Key); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		var v any = vals
		switch {
		case a.Name == cell.Tools:
			v = m.Tools
		case a.Numeric && vals != nil:
			nums := make([]json.RawMessage, len(vals))
			for i, s := range vals {
				if nums[i] = numberJSON(s); nums[i] == nil {
					return nil, fmt.Errorf("schema: matrix.%s[%d]: %q is not a number", a.Key, i, s)
				}
			}
			v = nums
		}
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// numberJSON spells a formatted number as encoding/json spells an int or
// a float64 of its value (1e-05 as 0.00001); nil for no number.
func numberJSON(s string) json.RawMessage {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return json.RawMessage(s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	out, err := json.Marshal(f)
	if err != nil {
		return nil // NaN or an infinity
	}
	return out
}

// UnmarshalJSON reads a config's matrix object. Keys that name no axis
// are ignored, as encoding/json ignores unknown fields: the CUE schema,
// generated from the same table, rejects them in a config file.
func (m *Matrix) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	out := Matrix{}
	for _, a := range cell.Axes {
		r, ok := raw[a.Key]
		if !ok {
			continue
		}
		if a.Name == cell.Tools {
			if err := json.Unmarshal(r, &out.Tools); err != nil {
				return fmt.Errorf("matrix.%s: %w", a.Key, err)
			}
			continue
		}
		var vals []string
		if a.Numeric {
			var nums []json.Number
			if err := json.Unmarshal(r, &nums); err != nil {
				return fmt.Errorf("matrix.%s: %w", a.Key, err)
			}
			if nums != nil {
				vals = make([]string, len(nums))
				for i, n := range nums {
					vals[i] = string(n)
				}
			}
		} else if err := json.Unmarshal(r, &vals); err != nil {
			return fmt.Errorf("matrix.%s: %w", a.Key, err)
		}
		f, err := formatValues(a, vals)
		if err != nil {
			return fmt.Errorf("matrix.%s: %w", a.Key, err)
		}
		if out.vals == nil {
			out.vals = map[string][]string{}
		}
		out.vals[a.Name] = f
	}
	*m = out
	return nil
}
