package report

// This file holds the report's view of tool calls a model wrote as text
// (record.Trace.TextCalls: call-shaped markup the server's parser missed):
// counted per model, so that a run without calls because the model
// abstained is told apart from one whose calls were lost, and shown in a
// section of its own in report.md and report.html.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/record"
)

// textCallsAdvice is what a reader should do about text calls.
const textCallsAdvice = "The model tried to call a tool but the server did not parse the call, so it was never executed: check the model's chat template (or the server's tool-call parser). A run counted here as lost is not an abstention. Calls written in the model's thinking are counted apart: it thought of a call and did not make it; they never fail a run."

// TextCallRow counts, for one model, its scored runs (pass and fail) by
// whether the model made real calls, abstained, or wrote its calls as text.
type TextCallRow struct {
	Model  string `json:"model"`
	Scored int    `json:"scored"`
	// NoCalls counts the scored runs in which no call was executed; they
	// split into Abstained (no call-shaped text either) and Lost.
	NoCalls   int `json:"no_calls"`
	Abstained int `json:"abstained"`
	Lost      int `json:"lost"`
	// WithText counts the scored runs with any call written as text,
	// Lost included, and Failed those of them that failed.
	WithText int `json:"with_text"`
	Failed   int `json:"failed"`
	// Calls counts the text calls over all runs, and Families them by
	// markup family (e.g. hermes), most first.
	Calls    int          `json:"calls"`
	Families []NamedCount `json:"families"`
	// InThinking counts the scored runs with a call written in the
	// model's thinking (it thought of a call and did not make it), and
	// ThinkingCalls those calls; they are not counted above.
	InThinking    int `json:"in_thinking,omitempty"`
	ThinkingCalls int `json:"thinking_calls,omitempty"`
	// Example is the first run of the model with text calls.
	Example *TextCallExample `json:"example,omitempty"`
}

// NamedCount is a name and how often it occurred.
type NamedCount struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// TextCallExample points at one text call: its run, turn, family and the
// call it encodes.
type TextCallExample struct {
	Case   string `json:"case"`
	RunID  string `json:"run_id"`
	Turn   int    `json:"turn"`
	Family string `json:"family"`
	Tool   string `json:"tool"`
	Args   string `json:"args"` // the arguments as JSON
}

// textCallAgg folds records into TextCallRows.
type textCallAgg struct {
	models map[string]*textCallModel
	any    bool // some run had text calls
}

type textCallModel struct {
	row      TextCallRow
	families map[string]int
}

func (a *textCallAgg) add(rec *record.Record) {
	if rec.Outcome != record.Pass && rec.Outcome != record.Fail {
		return
	}
	if a.models == nil {
		a.models = map[string]*textCallModel{}
	}
	m := entry(a.models, rec.Cell.Model, func() *textCallModel {
		return &textCallModel{row: TextCallRow{Model: rec.Cell.Model}, families: map[string]int{}}
	})
	r, tc := &m.row, rec.Trace.TextCalls
	if n := countThinking(tc); n > 0 {
		a.any = true
		r.InThinking++
		r.ThinkingCalls += n
		tc = slices.DeleteFunc(slices.Clone(tc), func(c matchers.TextCall) bool { return c.Thinking })
	}
	r.Scored++
	if len(rec.Trace.Calls) == 0 {
		r.NoCalls++
		if len(tc) == 0 {
			r.Abstained++
		} else {
			r.Lost++
		}
	}
	if len(tc) == 0 {
		return
	}
	a.any = true
	r.WithText++
	if rec.Outcome == record.Fail {
		r.Failed++
	}
	r.Calls += len(tc)
	for _, c := range tc {
		m.families[c.Family]++
	}
	if r.Example == nil {
		args, _ := json.Marshal(tc[0].Args)
		r.Example = &TextCallExample{Case: rec.Case, RunID: rec.ID, Turn: tc[0].Turn, Family: tc[0].Family, Tool: tc[0].Tool, Args: string(args)}
	}
}

// countThinking counts the calls written in thinking.
func countThinking(tc []matchers.TextCall) int {
	n := 0
	for _, c := range tc {
		if c.Thinking {
			n++
		}
	}
	return n
}

// rows returns one row per model in name order, or nil when no run had
// text calls (summary.json then has no text_calls).
func (a *textCallAgg) rows() []TextCallRow {
	if !a.any {
		return nil
	}
	out := make([]TextCallRow, 0, len(a.models))
	for _, name := range sortedKeys(a.models) {
		m := a.models[name]
		for f, n := range m.families {
			m.row.Families = append(m.row.Families, NamedCount{f, n})
		}
		slices.SortFunc(m.row.Families, func(x, y NamedCount) int {
			return cmp.Or(y.Count-x.Count, strings.Compare(x.Name, y.Name))
		})
		out = append(out, m.row)
	}
	return out
}

// familiesText renders families as "hermes 16, mistral 4".
func familiesText(fs []NamedCount) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s %d", f.Name, f.Count)
	}
	return strings.Join(parts, ", ")
}

// TextCallsLine says, for a terminal, how many scored runs wrote tool
// calls as text ("3 runs wrote tool calls as text the server did not
// parse: see the report"), or "" when none did.
func (s *Summary) TextCallsLine() string {
	n := 0
	for _, r := range s.TextCalls {
		n += r.WithText
	}
	switch n {
	case 0:
		return ""
	case 1:
		return "1 run wrote tool calls as text the server did not parse: see the report"
	}
	return fmt.Sprintf("%d runs wrote tool calls as text the server did not parse: see the report", n)
}

// writeTextCallsMarkdown writes report.md's section on text calls, when
// there were any.
func (s *Summary) writeTextCallsMarkdown(w io.Writer) {
	if len(s.TextCalls) == 0 {
		return
	}
	fmt.Fprintf(w, "## Tool calls written as text\n\n%s\n\n", textCallsAdvice)
	fmt.Fprintf(w, "| model | scored | without calls | abstained | calls lost | runs with text calls | of them failed | text calls | markup | runs with calls in thinking | calls in thinking |\n")
	fmt.Fprintf(w, "| --- | --: | --: | --: | --: | --: | --: | --: | --- | --: | --: |\n")
	for _, r := range s.TextCalls {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %d | %s | %d | %d |\n", mdCode(r.Model), r.Scored, r.NoCalls, r.Abstained, r.Lost,
			r.WithText, r.Failed, r.Calls, mdCell(familiesText(r.Families)), r.InThinking, r.ThinkingCalls)
	}
	fmt.Fprintln(w)
	for _, r := range s.TextCalls {
		if e := r.Example; e != nil {
			fmt.Fprintf(w, "- %s, e.g. %s turn %d: %s markup calling %s with %s\n", mdCode(r.Model), mdCode(e.Case), e.Turn,
				mdCell(e.Family), mdCode(e.Tool), mdCode(e.Args))
		}
	}
	fmt.Fprintln(w)
}

var textCallsHTML = template.Must(template.New("textcalls").Parse(`<section id="text-calls">
<h2>Tool calls written as text</h2>
<p class="note">{{.Advice}}</p>
<div class="scroll"><table id="text-calls-table"><thead><tr><th>model</th><th class="n">scored</th><th class="n">without calls</th><th class="n">abstained</th><th class="n">calls lost</th><th class="n">runs with text calls</th><th class="n">of them failed</th><th class="n">text calls</th><th>markup</th><th class="n">runs with calls in thinking</th><th class="n">calls in thinking</th><th>example</th></tr></thead><tbody>
{{range .Rows}}<tr><td class="nowrap"><code>{{.Model}}</code></td><td class="n">{{.Scored}}</td><td class="n">{{.NoCalls}}</td><td class="n">{{.Abstained}}</td><td class="n">{{if .Lost}}<span class="badge b-fail">{{.Lost}}</span>{{else}}0{{end}}</td><td class="n">{{.WithText}}</td><td class="n">{{.Failed}}</td><td class="n">{{.Calls}}</td><td>{{range $i, $f := .Families}}{{if $i}}, {{end}}{{$f.Name}} {{$f.Count}}{{end}}</td><td class="n">{{.InThinking}}</td><td class="n">{{.ThinkingCalls}}</td><td>{{with .Example}}<code>{{.Case}}</code> turn {{.Turn}}: <code>{{.Tool}}</code> <code>{{.Args}}</code>{{end}}</td></tr>
{{end}}</tbody></table></div>
</section>
`))

// TextCallsHTML renders report.html's section on text calls, or nothing
// when there were none. Model output in it is escaped.
func (s *Summary) TextCallsHTML() template.HTML {
	if len(s.TextCalls) == 0 {
		return ""
	}
	var b bytes.Buffer
	err := textCallsHTML.Execute(&b, struct {
		Advice string
		Rows   []TextCallRow
	}{textCallsAdvice, s.TextCalls})
	if err != nil {
		return template.HTML("<p>text calls: " + template.HTMLEscapeString(err.Error()) + "</p>")
	}
	return template.HTML(b.String())
}
