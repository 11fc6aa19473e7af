package schema

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema/cell"
)

// typedMatrix is the matrix as a struct with one field per axis, the Go
// type config.json and config digests were written with before the matrix
// was read through the axis table: Matrix must write the same bytes.
type typedMatrix struct {
	Models       []string           `json:"models"`
	Seeds        []int              `json:"seeds"`
	Temperatures []float64          `json:"temperatures"`
	Tools        []ToolSubset       `json:"tools"`
	Confirm      []cell.ConfirmMode `json:"confirm"`
	Descriptions []string           `json:"descriptions"`
	Options      []string           `json:"options,omitempty"`
}

func TestMatrixJSONAsTyped(t *testing.T) {
	t.Parallel()
	for _, typed := range []typedMatrix{
		{},
		{Models: []string{"qwen3:0.6b", "a<b>&c\u2028"}, Seeds: []int{1, 2, -3, 1 << 40}, Temperatures: []float64{0, 0.7, 1e-5, 1e21, 123456789.125},
			Tools:   []ToolSubset{{Name: "needed"}, {Name: "n8", Count: 8}, {Name: "w", Include: []string{"x"}, Order: "given"}},
			Confirm: []cell.ConfirmMode{"auto", "deny"}, Descriptions: []string{"default", "terse"}, Options: []string{"default", "deep"}},
		{Models: []string{}, Seeds: []int{}, Temperatures: []float64{}, Tools: []ToolSubset{}, Confirm: []cell.ConfirmMode{}, Descriptions: []string{}, Options: []string{}},
	} {
		want, err := json.Marshal(typed)
		if err != nil {
			t.Fatal(err)
		}
		var m Matrix
		if err := json.Unmarshal(want, &m); err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("Matrix writes\n %s\nthe typed struct\n %s", got, want)
		}
		// An indenting encoder that does not escape HTML, as config.json's.
		var a, b strings.Builder
		for _, x := range []struct {
			w *strings.Builder
			v any
		}{{&a, typed}, {&b, m}} {
			enc := json.NewEncoder(x.w)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(x.v); err != nil {
				t.Fatal(err)
			}
		}
		if a.String() != b.String() {
			t.Errorf("indented without HTML escapes: Matrix\n%s\ntyped\n%s", b.String(), a.String())
		}
		if got := m.Values(cell.Seed); len(typed.Seeds) > 0 && got[3] != "1099511627776" {
			t.Errorf("seeds %v", got)
		}
	}
}

func TestMatrixSetAndWith(t *testing.T) {
	t.Parallel()
	a := Matrix{}.With(cell.Model, "m").With(cell.Temperature, "0.70", "1e-5")
	b := a.With(cell.Model, "n") // a copy: a keeps its model
	if got := a.Values(cell.Model); !slices.Equal(got, []string{"m"}) {
		t.Errorf("a models %v after setting b's", got)
	}
	if got := b.Values(cell.Temperature); !slices.Equal(got, []string{"0.7", "1e-05"}) {
		t.Errorf("temperatures %v, want the axis's formatting", got)
	}
	b.Set(cell.Tools, "needed", "all")
	if !reflect.DeepEqual(b.Tools, []ToolSubset{{Name: "needed"}, {Name: "all"}}) || !slices.Equal(b.Values(cell.Tools), []string{"needed", "all"}) {
		t.Errorf("tools %+v %v", b.Tools, b.Values(cell.Tools))
	}
	for _, bad := range [][2]string{{"colour", "red"}, {cell.Seed, "one"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Set(%q, %q) did not panic", bad[0], bad[1])
				}
			}()
			b.Set(bad[0], bad[1])
		}()
	}
	var m Matrix
	if err := json.Unmarshal([]byte(`{"seeds": [1.5]}`), &m); err == nil || !strings.Contains(err.Error(), "matrix.seeds") {
		t.Errorf("seed 1.5: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"models": [1]}`), &m); err == nil {
		t.Error("model 1: no error")
	}
}
