package report

import (
	"encoding/json"
	"testing"

	"github.com/toolward/toolward/schema/cell"
)

// TestCellKeyJSON: a CellKey's JSON names every axis of the table but
// the seed, numbers as numbers, and reads back as the same key; an axis
// added to schema/cell appears here without an edit. A quiet axis at its
// default (options "default") is left out, as before it existed.
func TestCellKeyJSON(t *testing.T) {
	t.Parallel()
	k := KeyOf(cell.Cell{Model: `q"3`, Seed: 4, Temperature: 0.25, Tools: "n8", ToolCount: 8, Confirm: cell.ConfirmDeny, Descriptions: "terse", Options: "deep"})
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"model":"q\"3","temperature":0.25,"tools":"n8","confirm":"deny","descriptions":"terse","options":"deep"}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, name := range cell.Names() {
		if _, ok := m[name]; ok == (name == cell.Seed) {
			t.Errorf("axis %s: in the JSON = %v", name, ok)
		}
	}
	var back CellKey
	if err := json.Unmarshal(b, &back); err != nil || back != k {
		t.Errorf("read back %+v (%v), want %+v", back, err, k)
	}
	k.Options = ""
	if b, _ := json.Marshal(k); string(b) != `{"model":"q\"3","temperature":0.25,"tools":"n8","confirm":"deny","descriptions":"terse"}` {
		t.Errorf("default options: JSON %s", b)
	}
}
