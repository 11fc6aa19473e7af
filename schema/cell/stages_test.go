package cell_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/plan"
	"github.com/toolward/toolward/schema/runconfig"
)

// TestStagesFollowAxes holds the claim of the package doc: every stage
// that lists the axes lists exactly those of the table (cell.Axes), in
// its order, so a stage left out of a new axis fails here. The report's
// cells table and breakdowns and the diff's order are checked in their
// packages (TestCellsTableFollowsAxes, TestBreakdownAxesFollowTable,
// TestOrderFollowsAxes).
func TestStagesFollowAxes(t *testing.T) {
	names, keys, scoring := cell.Names(), []string{}, cell.ScoringNames()
	for _, a := range cell.Axes {
		keys = append(keys, a.Key)
	}

	// The plan: every axis, in table order with the case after the model.
	if want := append([]string{names[0], plan.AxisCase}, names[1:]...); !slices.Equal(plan.AxisNames, want) {
		t.Errorf("plan.AxisNames %v, want %v", plan.AxisNames, want)
	}

	// The CUE schema: #Matrix has a field per axis under its Key, its
	// default the table's; #When selects on the scoring axes.
	root := cuecontext.New().CompileBytes(schema.Source())
	if err := root.Err(); err != nil {
		t.Fatal(err)
	}
	if got := fields(t, root.LookupPath(cue.ParsePath("#Matrix"))); !slices.Equal(got, keys) {
		t.Errorf("#Matrix fields %v, want the axis keys %v", got, keys)
	}
	var when []string
	for _, f := range fields(t, root.LookupPath(cue.ParsePath("#When"))) {
		if f != "golden" && !slices.Contains(matchers.WhenOverrides, f) {
			when = append(when, f)
		}
	}
	if !slices.Equal(when, scoring) || !slices.Equal(matchers.WhenSelectors, scoring) {
		t.Errorf("#When selectors %v, matchers.WhenSelectors %v, want the scoring axes %v", when, matchers.WhenSelectors, scoring)
	}

	// The case JSON Schema, generated from #Case: the same selectors.
	js := schema.CaseJSONSchema()
	var doc struct {
		Definitions map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	var jsWhen []string
	for f := range doc.Definitions["When"].Properties {
		if f != "golden" && !slices.Contains(matchers.WhenOverrides, f) {
			jsWhen = append(jsWhen, f)
		}
	}
	if slices.Sort(jsWhen); !slices.Equal(jsWhen, slices.Sorted(slices.Values(scoring))) {
		t.Errorf("JSON Schema when selectors %v, want %v", jsWhen, scoring)
	}

	// A config: the schema fills in every axis's default, and the matrix
	// holds each axis under its name.
	dir := t.TempDir()
	path := filepath.Join(dir, "c.cue")
	src := "name: \"x\"\ncases: [\"" + filepath.Join(dir, "*.yaml") + "\"]\nserver: builtin: {}\nbackend: replay: \"" + dir + "\"\nmatrix: models: [\"m\"]\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("id: a\nprompt: p\nexpect: {no_calls: true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := runconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cell.Axes {
		want := a.Default
		if a.Name == cell.Model {
			want = []string{"m"}
		}
		if got := cfg.Matrix.Values(a.Name); !slices.Equal(got, want) {
			t.Errorf("matrix.%s = %v, want %v (the table's default)", a.Key, got, want)
		}
	}

	// config.json writes every axis under its key, in table order.
	b, err := json.Marshal(cfg.Matrix)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var written []string
	dec.Token() // {
	for dec.More() {
		k, _ := dec.Token()
		written = append(written, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	if !slices.Equal(written, keys) {
		t.Errorf("config.json matrix keys %v, want %v", written, keys)
	}

	// A plan of two values on every axis has them all, and its runs
	// carry them in their cells.
	m := cfg.Matrix
	two := map[string][]string{}
	for i, a := range cell.Axes {
		vals := []string{"v" + strconv.Itoa(i), "w" + strconv.Itoa(i)}
		switch {
		case a.Numeric:
			vals = []string{"1", "2"}
		case a.Closed:
			vals = a.Known[len(a.Known)-2:]
		}
		two[a.Name] = vals
		m.Set(a.Name, vals...)
	}
	cfg.Matrix = m
	p, err := plan.New(cfg, []*schema.Case{{ID: "a", Prompt: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != 1<<len(cell.Axes) {
		t.Errorf("%d runs, want 2^%d", p.Len(), len(cell.Axes))
	}
	last := p.Run(p.Len() - 1)
	for _, a := range cell.Axes {
		if got := p.Values(a.Name); !slices.Equal(got, two[a.Name]) {
			t.Errorf("plan %s values %v, want %v", a.Name, got, two[a.Name])
		}
		if got := a.Format(last.Cell); got != two[a.Name][1] {
			t.Errorf("last run's %s = %q, want %q", a.Name, got, two[a.Name][1])
		}
	}

	// The CSV export: a column per axis after id, case and tags.
	var out bytes.Buffer
	w, err := report.NewRunCSV(&out)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	head, err := csv.NewReader(&out).Read()
	if err != nil {
		t.Fatal(err)
	}
	if got := head[3 : 3+len(names)]; !reflect.DeepEqual(got, names) || head[3+len(names)] != "tool_count" {
		t.Errorf("CSV header %v, want the axes %v after id, case, tags", head, names)
	}
}

// fields lists the fields of a CUE struct, optional and required ones
// included, in order.
func fields(t *testing.T, v cue.Value) []string {
	t.Helper()
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for it.Next() {
		out = append(out, it.Selector().Unquoted())
	}
	return out
}
