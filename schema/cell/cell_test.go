package cell

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var sample = Cell{Model: "qwen3:0.6b", Seed: 3, Temperature: 0.7, Tools: "n16", ToolCount: 16, Confirm: "deny", Descriptions: "terse", Options: "deep"}

// The JSON form is the "cell" object of runs.jsonl: a format.
func TestJSONShape(t *testing.T) {
	b, err := json.Marshal(sample)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"model":"qwen3:0.6b","seed":3,"temperature":0.7,"tools":"n16","tool_count":16,"confirm":"deny","descriptions":"terse","options":"deep"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// Every axis of the table has a field of Cell that Format reads and Parse
// writes, and the axes are the Cell's fields but the tool count.
func TestTableCoversCell(t *testing.T) {
	typ := reflect.TypeOf(Cell{})
	var fields []string
	for i := range typ.NumField() {
		if tag := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]; tag != "tool_count" {
			fields = append(fields, tag)
		}
	}
	if !slices.Equal(fields, Names()) {
		t.Errorf("cell fields %v, axes %v", fields, Names())
	}
	for _, a := range Axes {
		var c Cell
		if err := a.Parse(&c, a.Format(sample)); err != nil {
			t.Fatal(err)
		}
		if got := a.Format(c); got != a.Format(sample) {
			t.Errorf("%s: round trip %q → %q", a.Name, a.Format(sample), got)
		}
		if c == (Cell{}) {
			t.Errorf("%s: Parse set nothing", a.Name)
		}
	}
	if v := sample.Values(); len(v) != len(Axes) || v["temperature"] != "0.7" || v["seed"] != "3" {
		t.Errorf("Values %v", v)
	}
	if !slices.Equal(ScoringNames(), []string{"model", "temperature", "tools", "confirm", "descriptions", "options"}) {
		t.Errorf("scoring axes %v", ScoringNames())
	}
}

func TestParseErrors(t *testing.T) {
	if _, err := sample.With("seed", "one"); err == nil || !strings.Contains(err.Error(), `seed "one": want a number`) {
		t.Errorf("seed one: %v", err)
	}
	if _, err := sample.With("colour", "red"); err == nil || !strings.Contains(err.Error(), "unknown axis") {
		t.Errorf("colour: %v", err)
	}
	if c, err := sample.With("temperature", "1.5"); err != nil || c.Temperature != 1.5 || c.Model != sample.Model {
		t.Errorf("With temperature: %+v %v", c, err)
	}
}

func TestStringAndJoin(t *testing.T) {
	if got, want := sample.String(), "model=qwen3:0.6b seed=3 temperature=0.7 tools=n16 confirm=deny descriptions=terse options=deep"; got != want {
		t.Errorf("String %q, want %q", got, want)
	}
	if got := Join(Cell{Tools: "needed"}, " ", "=", true, Model, Temperature, Tools); got != "temp=0 tools=needed" {
		t.Errorf("Join %q", got)
	}
}

func TestCompareAndPool(t *testing.T) {
	confirm := Lookup(Confirm)
	vs := []string{"deny", "zzz", "approve", "auto", ""}
	slices.SortFunc(vs, confirm.Compare)
	if !slices.Equal(vs, []string{"", "auto", "approve", "deny", "zzz"}) {
		t.Errorf("confirm order %v", vs)
	}
	temps := []string{"10", "0.7", "2"}
	slices.SortFunc(temps, Lookup(Temperature).Compare)
	if !slices.Equal(temps, []string{"0.7", "2", "10"}) {
		t.Errorf("numeric order %v", temps)
	}
	a, b := sample, sample
	b.Seed, b.ToolCount = 9, 3
	if Compare(a, b) >= 0 || Compare(a.Pool(Seed), b.Pool(Seed)) != 0 {
		t.Errorf("compare %d, pooled %d", Compare(a, b), Compare(a.Pool(Seed), b.Pool(Seed)))
	}
	if a.Pool(Seed) != b.Pool(Seed) {
		t.Errorf("pooled cells differ: %+v %+v", a.Pool(Seed), b.Pool(Seed))
	}
	// The given order decides: seed first puts a (seed 3) before b (seed 9)
	// whatever the model.
	b.Model = "a-model"
	if Compare(a, b, Seed, Model) >= 0 || Compare(a, b) <= 0 {
		t.Errorf("ordered compare")
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"*", "hf.co/a/b:q4", true}, {"qwen3:*", "qwen3:0.6b", true}, {"qwen3:*", "qwen2:0.5b", false},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {"*b*", "abc", true}, {"a*c*e", "abcde", true}, {"a*c*e", "abcd", false},
		{`a\*`, "a*", true}, {`a\*`, "ab", false}, {"é?", "éa", true}, {"?", "é", true},
		{"sql-*", "sql-join", true}, {"sql-*", "xsql-join", false}, {"qwen3:?.6b", "qwen3:0.6b", true},
		{"library/*", "library/llama", true}, {"exact", "exact", true}, {"exact", "exac", false},
		{`\\`, `\`, true}, {`a\?`, "a?", true}, {`a\?`, "ab", false},
	}
	for _, tt := range tests {
		if got := Glob(tt.p, tt.s); got != tt.want {
			t.Errorf("Glob(%q, %q) = %v", tt.p, tt.s, got)
		}
	}
}

// Quote makes any value a pattern that selects exactly it.
func TestQuote(t *testing.T) {
	values := []string{"plain", "a*b", `back\slash`, "what?", `*\?`, "", "ünï*"}
	for _, v := range values {
		p, err := Compile(Quote(v), false)
		if err != nil {
			t.Fatalf("Quote(%q) = %q: %v", v, Quote(v), err)
		}
		for _, w := range values {
			if got := p.Match(w); got != (v == w) {
				t.Errorf("Quote(%q) = %q matches %q: %v", v, Quote(v), w, got)
			}
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, p := range []string{`a\`, `\`, `a\\\`} {
		if _, err := Compile(p, false); err == nil || !strings.Contains(err.Error(), "lone backslash") {
			t.Errorf("Compile(%q): %v", p, err)
		}
	}
	for _, p := range []string{"hot", "", "0x1p-2"} { // a number the YAML/JSON reader would not give either
		if _, err := Compile(p, true); err == nil || !strings.Contains(err.Error(), "want a number or a glob") {
			t.Errorf("Compile(%q, numeric): %v", p, err)
		}
	}
	for _, p := range []string{"1", "0.70", "-1e-3", "0.*", `\1`} {
		if _, err := Compile(p, true); err != nil {
			t.Errorf("Compile(%q, numeric): %v", p, err)
		}
	}
	if _, err := Compile(`a\\`, false); err != nil {
		t.Errorf(`a\\: %v`, err)
	}
	if _, err := NewSelector("model", "ok", `bad\`); err == nil || !strings.HasPrefix(err.Error(), "model: ") {
		t.Errorf("NewSelector: %v", err)
	}
}

func TestProject(t *testing.T) {
	t.Parallel()
	c := Cell{Model: "m", Seed: 3, Temperature: 0.7, Tools: "n8", ToolCount: 8, Confirm: ConfirmDeny, Descriptions: "terse"}
	got := c.Project(Model, Confirm)
	if want := (Cell{Model: "m", Confirm: ConfirmDeny}); got != want {
		t.Errorf("Project(model, confirm) = %+v, want %+v", got, want)
	}
	if got := c.Project(Names()...); got != c.Pool() {
		t.Errorf("Project(every axis) = %+v, want %+v", got, c.Pool())
	}
}

// The default options set is held as "" (records of default cells keep
// their shape), reads as "default" and stays out of labels and names.
func TestOptionsDefault(t *testing.T) {
	t.Parallel()
	c := sample
	c.Options = ""
	b, _ := json.Marshal(c)
	if strings.Contains(string(b), "options") {
		t.Errorf("default options in JSON: %s", b)
	}
	if v := c.Value(Options); v != "default" {
		t.Errorf("Value = %q", v)
	}
	d, err := c.With(Options, "default")
	if err != nil || d.Options != "" {
		t.Errorf("With default: %q %v", d.Options, err)
	}
	if l := Label(c); strings.Contains(l, "opts") {
		t.Errorf("Label %q names the default options", l)
	}
	if l := Label(sample); !strings.Contains(l, "opts=deep") {
		t.Errorf("Label %q", l)
	}
	if s := c.String(); strings.Contains(s, "options") {
		t.Errorf("String %q", s)
	}
}
