package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"gopkg.in/yaml.v3"
)

func TestParseCassettesErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"unknown turn field", "case: x\nruns:\n  - turns:\n      - contnet: hi\n",
			`x.yaml:4:9: runs[0].turns[0].contnet: unknown field "contnet" (did you mean "content"?)`},
		{"unknown axis", "case: x\nruns:\n  - when: {temp: 0}\n    turns: [{content: a}]\n",
			`x.yaml:3:12: runs[0].when.temp: unknown field "temp" (want one of model, seed, temperature, tools, confirm, descriptions, options)`},
		{"both arguments", "case: x\nruns:\n  - turns:\n      - tool_calls:\n          - {name: a, arguments: {}, raw_arguments: '{}'}\n",
			"x.yaml:5:38: runs[0].turns[0].tool_calls[0].raw_arguments: give arguments or raw_arguments, not both"},
		{"missing case", "runs:\n  - turns: [{content: a}]\n", `x.yaml:1:1: missing field "case" (the id of the case it answers for)`},
		{"misspelt case", "cas: x\nruns:\n  - turns: [{content: a}]\n", `x.yaml:1:1: cas: unknown field "cas" (did you mean "case"?)`},
		{"no turns", "case: x\nruns:\n  - when: {seed: 1}\n", `x.yaml:3:5: runs[0]: missing field "turns"`},
		{"empty turns", "case: x\nruns:\n  - turns: []\n", `x.yaml:3:12: runs[0].turns: want at least one turn`},
		{"tool call without name", "case: x\nruns:\n  - turns:\n      - tool_calls: [{arguments: {}}]\n",
			`x.yaml:4:22: runs[0].turns[0].tool_calls[0]: missing field "name" (the tool called)`},
		{"bad tokens", "case: x\nruns:\n  - turns:\n      - {content: a, tokens: {in: many}}\n", `x.yaml:4:35: runs[0].turns[0].tokens.in: want a number`},
		{"empty case id", "case: ''\nruns: [{turns: [{content: a}]}]\n", `x.yaml:1:7: case: want a case id, got an empty string`},
		{"lone backslash", "case: x\nruns: [{when: {model: 'a\\'}, turns: [{content: a}]}]\n", `x.yaml:2:23: runs[0].when.model: pattern "a\\" ends in a lone backslash`},
		{"seed not a number", "case: x\nruns: [{when: {seed: one}, turns: [{content: a}]}]\n", `x.yaml:2:22: runs[0].when.seed: pattern "one": want a number or a glob (the axis holds numbers)`},
		{"syntax", "case: x\nruns: [\n", "x.yaml:3:1: YAML syntax: did not find expected node content"},
		{"tab indent", "case: x\nruns:\n\t- turns: []\n", "x.yaml:3:1: YAML syntax: found character that cannot start any token (this line is indented with a tab"},
		{"input on a model turn", "case: x\nruns: [{turns: [{content: a, input: 0123456789abcdef}]}]\n",
			`x.yaml:2:30: runs[0].turns[0].input: input is the judge input a judge's turn answered: only a turn with role: judge has one`},
		{"input not a digest", "case: x\nruns: [{turns: [{content: a}, {role: judge, content: a, input: abc}]}]\n",
			`x.yaml:2:64: runs[0].turns[1].input: want the 16 hex digits of a judge input's digest`},
		{"not a mapping", "- a\n", "x.yaml:1:1: want a cassette (a mapping of case, runs, todo)"},
		// A skeleton's placeholders are never replayed: the cassette does
		// not load until its todo is gone.
		{"todo", "case: x\ntodo: write the arguments\nruns: [{turns: [{tool_calls: [{name: f, arguments: {path: TODO}}]}]}]\n",
			"x.yaml:2:1: todo: fill in the cassette: write the arguments (then delete todo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := ParseCassettes("x.yaml", []byte(tt.src))
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tt.want) {
				t.Errorf("got %q\nwant one error starting %q", errs.Lines(), tt.want)
			}
		})
	}
}

// TestParseCassettesReportsAll: every mistake of a file, in every
// document, not only the first.
func TestParseCassettesReportsAll(t *testing.T) {
	src := "case: a\nruns:\n  - turns: [{contnet: hi}]\n  - turns: [{content: x, latency_ms: -1}]\n---\ncase: b\nrun: []\n"
	cs, errs := ParseCassettes("x.yaml", []byte(src))
	want := []string{
		`x.yaml:3:14: runs[0].turns[0].contnet: unknown field "contnet" (did you mean "content"?)`,
		`x.yaml:4:38: runs[1].turns[0].latency_ms: want a non-negative number, got "-1"`,
		`x.yaml:7:1: run: unknown field "run" (did you mean "runs"?)`,
	}
	if got := errs.Lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(cs) != 0 {
		t.Errorf("kept %d invalid cassettes", len(cs))
	}
}

func TestLoadCassettes(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.yaml":     "case: x\nruns: [{turns: [{content: a}]}]\n",
		"sub/b.yml":  "case: x\nruns: [{turns: [{content: b}]}]\n---\ncase: y\nruns: [{turns: [{content: c}]}]\n",
		"notes.txt":  "not a cassette",
		"bad/c.yaml": "case: z\nruns: [{turns: [{contents: a}]}]\n",
	})
	cs, errs := LoadCassettes(dir)
	got := strings.ReplaceAll(errs.Error(), dir+string(filepath.Separator), "")
	want := "bad/c.yaml:2:18: runs[0].turns[0].contents: unknown field \"contents\" (did you mean \"content\"?)\n" +
		"sub/b.yml:1:7: case: case \"x\" already has a cassette at " + filepath.Join(dir, "a.yaml") + ":1:7"
	want = strings.ReplaceAll(want, dir+string(filepath.Separator), "")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(cs) != 3 {
		t.Errorf("loaded %d cassettes, want 3", len(cs))
	}
	if _, errs := LoadCassettes(t.TempDir()); len(errs) != 1 || !strings.Contains(errs[0].Msg, "no cassettes") {
		t.Errorf("empty directory: %v", errs)
	}
	if _, errs := LoadCassettes(filepath.Join(dir, "a.yaml")); len(errs) != 1 || !strings.Contains(errs[0].Msg, "want a cassette directory") {
		t.Errorf("a file: %v", errs)
	}
}

func TestCheckCassettes(t *testing.T) {
	cs, errs := ParseCassettes("c.yaml", []byte("case: calc-compund-interest\nruns: [{turns: [{content: a}]}]\n---\ncase: other\nruns: [{turns: [{content: a}]}]\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	cases := []*Case{{ID: "calc-compound-interest"}, {ID: "other"}}
	got := CheckCassettes(cs, cases).Error()
	want := `c.yaml:1:7: case: no case "calc-compund-interest" among the config's cases (did you mean "calc-compound-interest"?)`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestIsCassetteFile(t *testing.T) {
	for src, want := range map[string]bool{
		"case: x\nruns: []\n":              true,
		"# c\n---\nruns: []\n":             true,
		"id: x\nprompt: p\nexpect: {}\n":   false,
		"id: x\ncase: y\n":                 false,
		"- a\n":                            false,
		"case: [\n":                        false,
		"":                                 false,
		"description: x\nexpect: {}\n":     false,
		"---\n\n---\ncase: x\nruns: [1]\n": true,
	} {
		if got := IsCassetteFile([]byte(src)); got != want {
			t.Errorf("IsCassetteFile(%q) = %v, want %v", src, got, want)
		}
	}
}

// TestCassetteJSONSchemaAgreement runs a corpus and the demo cassettes
// through ParseCassettes and the JSON Schema, which must agree.
func TestCassetteJSONSchemaAgreement(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal(CassetteJSONSchema(), &s); err != nil {
		t.Fatal(err)
	}
	js, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	corpus := []string{
		"case: x\nruns: [{turns: [{content: a}]}]\n",
		"case: x\nruns: [{when: {seed: [1, 2], model: 'q*'}, turns: [{tool_calls: [{name: f, arguments: [1]}]}, {content: b, tokens: {in: 1, out: 2}, latency_ms: 1.5}]}]\n",
		"case: x\nruns: [{when: null, turns: [{tool_calls: [{name: f, raw_arguments: '{'}]}]}]\n",
		"case: x\nruns: [{turns: [{contnet: a}]}]\n",
		"case: x\nruns: []\n",
		"case: x\nruns: [{turns: []}]\n",
		"case: x\n",
		"runs: [{turns: [{content: a}]}]\n",
		"case: x\nruns: [{when: {temp: 0}, turns: [{content: a}]}]\n",
		"case: x\nruns: [{when: {seed: []}, turns: [{content: a}]}]\n",
		"case: x\nruns: [{turns: [{tool_calls: [{arguments: {}}]}]}]\n",
		"case: x\nruns: [{turns: [{tool_calls: [{name: f, arguments: {}, raw_arguments: '{}'}]}]}]\n",
		"case: x\nruns: [{turns: [{tokens: {in: -1}}]}]\n",
		"case: x\nruns: [{turns: [{content: 3}]}]\n", // a scalar is its text
		"case: x\nruns: [{turns: [{content: [a]}]}]\n",
		"case: ''\nruns: [{turns: [{content: a}]}]\n",
	}
	demo, _ := filepath.Glob("../fixtures/cassettes/demo/*.yaml")
	for _, f := range demo {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, string(b))
	}
	if len(demo) == 0 {
		t.Error("no demo cassettes")
	}
	for _, src := range corpus {
		_, errs := ParseCassettes("x.yaml", []byte(src))
		dec := yaml.NewDecoder(strings.NewReader(src))
		for {
			var v any
			if err := dec.Decode(&v); err != nil {
				break
			}
			if v == nil {
				continue
			}
			jerr := js.Validate(jsonRoundTrip(t, v))
			if (jerr == nil) != (len(errs) == 0) {
				t.Errorf("%q: Go errors %v, JSON Schema %v", src, errs, jerr)
			}
		}
	}
}

// FuzzParseCassettes: no input panics, and every error has a position
// inside the file.
func FuzzParseCassettes(f *testing.F) {
	f.Add("case: x\nruns: [{when: {seed: [1, '2*']}, turns: [{tool_calls: [{name: f, arguments: {a: [1, {b: null}]}}]}, {content: ok, tokens: {in: 1}}]}]\n")
	f.Add("case: x\nruns:\n  - turns:\n     - content: a\n    bad: 1\n---\ncase: y\n")
	f.Add("a: &x [*x]\n")
	f.Fuzz(func(t *testing.T, src string) {
		_, errs := ParseCassettes("x.yaml", []byte(src))
		for _, e := range errs {
			if e.Line < 1 || e.Line > maxLine([]byte(src)) {
				t.Errorf("error outside the file: %v", e)
			}
		}
		checkCaseErrorLines(t, src)
	})
}

// checkCaseErrorLines checks that case parsing of src places syntax
// errors inside the file.
func checkCaseErrorLines(t *testing.T, src string) {
	_, errs := ParseCases("x.yaml", []byte(src))
	for _, e := range errs {
		if e.Line > maxLine([]byte(src)) {
			t.Errorf("case error outside the file: %v", e)
		}
	}
}

// A cassette's numbers are read as written, so that the agent, which
// keeps the text (json.Number), sees 10.0 where the cassette says 10.0:
// an integer matcher can reject it as it would a live model's. Writing a
// cassette (MarshalYAML, as the recorder does) and reading it back keeps
// the text too.
func TestCassetteNumbersKeepTheirText(t *testing.T) {
	const src = "case: c\nruns:\n  - turns:\n      - tool_calls: [{name: add, arguments: {a: 10, b: 10.0, c: 1e1, d: -0.0, e: 1.50, f: [2.0, 3], g: {h: 9007199254740993}}}]\n"
	want := `{"a":10,"b":10.0,"c":1e1,"d":-0.0,"e":1.50,"f":[2.0,3],"g":{"h":9007199254740993}}`
	cs, errs := ParseCassettes("c.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := string(cs[0].Runs[0].Turns[0].ToolCalls[0].Arguments); got != want {
		t.Fatalf("read arguments %s, want %s", got, want)
	}
	var buf bytes.Buffer
	if err := EncodeCassette(&buf, cs[0], ""); err != nil {
		t.Fatal(err)
	}
	back, errs := ParseCassettes("c.yaml", buf.Bytes())
	if len(errs) > 0 {
		t.Fatalf("%v\n%s", errs, buf.Bytes())
	}
	if got := string(back[0].Runs[0].Turns[0].ToolCalls[0].Arguments); got != want {
		t.Errorf("after writing and reading: %s, want %s\n%s", got, want, buf.Bytes())
	}
}

func TestCassetteLatencyRoundTrip(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{1, 999, 1234567, 2469134, 987654321, 3*time.Minute + 7, 1<<40 + 3} {
		c := &Cassette{Case: "x", Runs: []CassetteRun{{Turns: []CassetteTurn{{Content: "a", Latency: d}}}}}
		var buf strings.Builder
		if err := EncodeCassette(&buf, c, ""); err != nil {
			t.Fatal(err)
		}
		cs, errs := ParseCassettes("x.yaml", []byte(buf.String()))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if got := cs[0].Runs[0].Turns[0].Latency; got != d {
			t.Errorf("latency %d came back as %d (%s)", d, got, buf.String())
		}
	}
}

// TestCassetteWriteReadsBack: every field the format has survives
// MarshalYAML and ParseCassettes, so a field added to a shape without a
// writer (or a reader) fails here.
func TestCassetteWriteReadsBack(t *testing.T) {
	t.Parallel()
	in := &Cassette{Case: "c", Runs: []CassetteRun{
		{When: []CassetteSelector{{Axis: "model", Patterns: []string{"q*"}}, {Axis: "seed", Patterns: []string{"1", "2"}}},
			Turns: []CassetteTurn{
				{Thinking: "hm\nyes", ToolCalls: []CassetteCall{{Name: "f", Arguments: json.RawMessage(`{"a":[1,{"b":null}]}`)}, {Name: "g", Arguments: json.RawMessage(`{bad`)}},
					TokensIn: 3, TokensOut: 4, Latency: 1500 * time.Microsecond, DoneReason: "tool_calls"},
				{Content: "done"},
				{}, // an empty reply still has content ""
			}},
	}}
	var buf bytes.Buffer
	if err := EncodeCassette(&buf, in, "a comment"); err != nil {
		t.Fatal(err)
	}
	out, errs := ParseCassettes("x.yaml", buf.Bytes())
	if len(errs) > 0 || len(out) != 1 {
		t.Fatalf("%v\n%s", errs, buf.Bytes())
	}
	got := out[0]
	got.File, got.Line, got.Col, got.CaseLine, got.CaseCol = "", 0, 0, 0, 0
	for i := range got.Runs {
		got.Runs[i].Line, got.Runs[i].Col = 0, 0
		for j := range got.Runs[i].Turns {
			got.Runs[i].Turns[j].Line = 0
			for k := range got.Runs[i].Turns[j].ToolCalls {
				got.Runs[i].Turns[j].ToolCalls[k].Line, got.Runs[i].Turns[j].ToolCalls[k].Col = 0, 0
			}
		}
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("read back\n%#v\nwant\n%#v\n%s", got, in, buf.Bytes())
	}
	if !strings.HasPrefix(buf.String(), "# a comment\n") {
		t.Errorf("no comment:\n%s", buf.Bytes())
	}
}

// TestUserTurnGap replays cassette runs' conversations: the simulated
// user is asked after each final answer until a reply holds the stop
// marker, the max_turns-th message has had its reply, the model spends
// max_iterations turns on one message, or its turns run out.
func TestUserTurnGap(t *testing.T) {
	t.Parallel()
	answer := CassetteTurn{Content: "an answer"}
	call := CassetteTurn{ToolCalls: []CassetteCall{{Name: "t"}}}
	user := func(s string) CassetteTurn { return CassetteTurn{Role: CassetteRoleUser, Content: s} }
	for _, tt := range []struct {
		name              string
		turns             []CassetteTurn
		maxIter, maxTurns int
		gap               bool
		have, after       int
	}{
		{name: "no user turn", turns: []CassetteTurn{answer}, gap: true, have: 0, after: 0},
		{name: "stops", turns: []CassetteTurn{answer, user("bye STOP")}},
		{name: "second answer unanswered", turns: []CassetteTurn{call, answer, user("more"), call, answer}, gap: true, have: 1, after: 4},
		{name: "user turns first in the file", turns: []CassetteTurn{user("more"), user("STOP"), answer, answer}},
		{name: "max_turns reached", turns: []CassetteTurn{answer, user("a"), answer, user("b")}, maxTurns: 2},
		{name: "max_turns one further", turns: []CassetteTurn{answer, user("a"), answer}, maxTurns: 2, gap: true, have: 1, after: 2},
		{name: "max_iterations before the answer", turns: []CassetteTurn{call, call, answer}, maxIter: 2},
		{name: "max_iterations per message", turns: []CassetteTurn{call, answer, user("a"), call, answer}, maxIter: 2, gap: true, have: 1, after: 4},
		{name: "model turns run out", turns: []CassetteTurn{call}},
		{name: "stop after the reply limit", turns: []CassetteTurn{answer, user("a"), answer, user("STOP")}},
	} {
		r := &CassetteRun{Turns: tt.turns}
		g, gap := r.UserTurnGap("STOP", tt.maxIter, tt.maxTurns)
		if gap != tt.gap || gap && (g.Have != tt.have || g.After != tt.after) {
			t.Errorf("%s: got %+v %v, want gap %v have %d after %d", tt.name, g, gap, tt.gap, tt.have, tt.after)
		}
	}
}

// TestTurnGap replays cassette runs' conversations for the model's side:
// a run whose model turns run out before the conversation ends (after a
// scripted reply, a simulated user's message, or tool results) has a gap
// naming the message left unanswered.
func TestTurnGap(t *testing.T) {
	t.Parallel()
	answer := CassetteTurn{Content: "an answer"}
	call := CassetteTurn{ToolCalls: []CassetteCall{{Name: "t"}}}
	user := func(s string) CassetteTurn { return CassetteTurn{Role: CassetteRoleUser, Content: s} }
	script := ReplayUser{Replies: []string{"go on"}, MaxTurns: 2}
	sim := ReplayUser{Simulated: true, Stop: "STOP", MaxTurns: 4}
	for _, tt := range []struct {
		name    string
		turns   []CassetteTurn
		u       ReplayUser
		maxIter int
		gap     bool
		want    TurnGap
	}{
		{name: "single answer", turns: []CassetteTurn{answer}},
		{name: "no turns", turns: nil, gap: true, want: TurnGap{After: -1, Reply: -1}},
		{name: "tool results unanswered", turns: []CassetteTurn{call}, gap: true, want: TurnGap{Have: 1, After: 0, Reply: -1}},
		{name: "max_iterations spent", turns: []CassetteTurn{call, call}, maxIter: 2},
		{name: "scripted reply unanswered", turns: []CassetteTurn{answer}, u: script, gap: true, want: TurnGap{Have: 1, After: -1, Message: 1, Reply: -1}},
		{name: "scripted reply answered", turns: []CassetteTurn{answer, call, answer}, u: script},
		{name: "tools after the reply", turns: []CassetteTurn{answer, call}, u: script, gap: true, want: TurnGap{Have: 2, After: 1, Message: 1, Reply: -1}},
		{name: "simulated message unanswered", turns: []CassetteTurn{answer, user("a")}, u: sim, gap: true, want: TurnGap{Have: 1, After: -1, Message: 1, Reply: 1}},
		{name: "simulated stop", turns: []CassetteTurn{answer, user("a"), answer, user("STOP")}, u: sim},
		{name: "simulated past max_turns", turns: []CassetteTurn{answer, user("a"), answer, user("b")}, u: ReplayUser{Simulated: true, Stop: "STOP", MaxTurns: 2}},
		{name: "simulated user runs out", turns: []CassetteTurn{answer}, u: sim, gap: true, want: TurnGap{User: true, After: 0}},
	} {
		r := &CassetteRun{Turns: tt.turns}
		g, gap := r.TurnGap(tt.u, tt.maxIter)
		if gap != tt.gap || gap && g != tt.want {
			t.Errorf("%s: got %+v %v, want %+v %v", tt.name, g, gap, tt.want, tt.gap)
		}
	}
}
