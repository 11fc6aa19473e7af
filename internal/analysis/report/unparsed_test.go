package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/record"
)

// TestTextCallsCounted: per model, runs without executed calls split into
// abstained and lost (their calls written as text), counted in
// summary.json and shown apart in report.md and report.html; a result
// with no text calls has no such section and no text_calls field.
func TestTextCallsCounted(t *testing.T) {
	hermes := []matchers.TextCall{{Turn: 0, Family: "hermes", Tool: "calculate", Args: map[string]any{"expression": "1+1"}}}
	run := func(model string, outcome record.Outcome, calls int, tc []matchers.TextCall) *record.Record {
		r := &record.Record{ID: model + string(outcome), Case: "irr-<b>", Cell: record.Cell{Model: model}, Outcome: outcome,
			Trace: record.Trace{Calls: make([]record.Call, calls), TextCalls: tc}}
		if outcome == record.Fail {
			r.Reasons = []matchers.Reason{{Code: matchers.ReasonUnparsedCall}}
		}
		return r
	}
	a := newAggregator()
	for _, r := range []*record.Record{
		run("small", record.Fail, 0, hermes),
		run("small", record.Fail, 0, append(hermes, matchers.TextCall{Family: "mistral", Tool: "x"})),
		run("small", record.Pass, 0, nil),
		run("small", record.Pass, 1, hermes),
		run("small", record.Error, 0, hermes), // errors are not scored
		run("big", record.Pass, 0, nil),
		run("big", record.Pass, 2, nil),
	} {
		a.add(r)
	}
	s := a.summary()
	want := []TextCallRow{
		{Model: "big", Scored: 2, NoCalls: 1, Abstained: 1},
		{Model: "small", Scored: 4, NoCalls: 3, Abstained: 1, Lost: 2, WithText: 3, Failed: 2, Calls: 4,
			Families: []NamedCount{{"hermes", 3}, {"mistral", 1}},
			Example:  &TextCallExample{Case: "irr-<b>", RunID: "smallfail", Turn: 0, Family: "hermes", Tool: "calculate", Args: `{"expression":"1+1"}`}},
	}
	if !reflect.DeepEqual(s.TextCalls, want) {
		got, _ := json.MarshalIndent(s.TextCalls, "", " ")
		t.Errorf("text calls:\n%s", got)
	}
	var md, html, js bytes.Buffer
	if err := s.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## Tool calls written as text", "check the model's chat template", "| `small` | 4 | 3 | 1 | 2 | 3 | 2 | 4 | hermes 3, mistral 1 |"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("report.md lacks %q:\n%s", w, md.String())
		}
	}
	for _, w := range []string{`<section id="text-calls">`, `href="#text-calls"`, "check the model&#39;s chat template", "<code>irr-&lt;b&gt;</code>"} {
		if !strings.Contains(html.String(), w) {
			t.Errorf("report.html lacks %q", w)
		}
	}
	if !strings.Contains(js.String(), `"text_calls"`) {
		t.Errorf("summary.json lacks text_calls")
	}

	clean := newAggregator()
	clean.add(run("big", record.Pass, 0, nil))
	s = clean.summary()
	md.Reset()
	html.Reset()
	js.Reset()
	s.WriteMarkdown(&md)
	s.WriteHTML(&html)
	s.WriteJSON(&js)
	if s.TextCalls != nil || strings.Contains(md.String(), "written as text") || strings.Contains(html.String(), "text-calls") || strings.Contains(js.String(), "text_calls") {
		t.Errorf("a result without text calls shows them: %+v", s.TextCalls)
	}
}

// TestPassRateLineSaysTextCalls: the terminal summary of run, report,
// merge and score (PassRateLine) points at the report when scored runs
// wrote tool calls as text, and says nothing of them otherwise. Before,
// only the report told.
func TestPassRateLineSaysTextCalls(t *testing.T) {
	hermes := []matchers.TextCall{{Family: "hermes", Tool: "calculate", Args: map[string]any{}}}
	summary := func(tcs ...[]matchers.TextCall) *Summary {
		a := newAggregator()
		for i, tc := range tcs {
			a.add(&record.Record{ID: strings.Repeat("r", i+1), Case: "c", Cell: record.Cell{Model: "m"}, Outcome: record.Fail,
				Trace: record.Trace{TextCalls: tc}})
		}
		return a.summary()
	}
	for _, tt := range []struct {
		s    *Summary
		want string
	}{
		{summary(nil, nil), ""},
		{summary(hermes, nil), "; 1 run wrote tool calls as text the server did not parse: see the report"},
		{summary(hermes, hermes, nil), "; 2 runs wrote tool calls as text the server did not parse: see the report"},
	} {
		line := tt.s.PassRateLine()
		if !strings.HasPrefix(line, "pass rate 0.0%") || !strings.HasSuffix(line, ")"+tt.want) {
			t.Errorf("PassRateLine() = %q, want it to end %q", line, ")"+tt.want)
		}
	}
}

// TestThinkingCallsCountedApart: calls written in the model's thinking
// are counted in their own columns, never as calls lost or text calls: a
// run that thought of a call and made none is an abstention.
func TestThinkingCallsCountedApart(t *testing.T) {
	t.Parallel()
	thought := []matchers.TextCall{{Turn: 0, Family: "hermes", Tool: "calculate", Thinking: true}}
	a := newAggregator()
	a.add(&record.Record{ID: "a", Case: "c", Cell: record.Cell{Model: "m"}, Outcome: record.Pass, Trace: record.Trace{TextCalls: thought}})
	a.add(&record.Record{ID: "b", Case: "c", Cell: record.Cell{Model: "m"}, Outcome: record.Pass, Trace: record.Trace{TextCalls: append(thought, thought...)}})
	s := a.summary()
	want := []TextCallRow{{Model: "m", Scored: 2, NoCalls: 2, Abstained: 2, InThinking: 2, ThinkingCalls: 3}}
	if !reflect.DeepEqual(s.TextCalls, want) {
		got, _ := json.MarshalIndent(s.TextCalls, "", " ")
		t.Errorf("text calls:\n%s", got)
	}
	var md bytes.Buffer
	if err := s.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| calls in thinking |") || !strings.Contains(md.String(), "| 2 | 3 |") {
		t.Errorf("report.md lacks the thinking columns:\n%s", md.String())
	}
}
