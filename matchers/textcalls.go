package matchers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolward/toolward/matchers/textcall"
)

// Bounds on the call-shaped text FindTextCalls looks for in one trace, on
// top of textcall's per-text limits; the turns of a trace also share one
// textcall.Budget of decoding work.
const (
	// MaxTraceText is how many bytes of turn content are scanned per
	// trace; turns past it are not scanned.
	MaxTraceText = 4 << 20
	// MaxTextCalls is how many text calls are kept per trace.
	MaxTextCalls = 64
)

// FindTextCalls returns the tool calls written as text in t's turns (or,
// for a trace without turns, in its answer), in order, then those
// written in the turns' thinking (TextCall.Thinking). It is a pure
// function of the trace, with the families of textcall.Default.
func FindTextCalls(t Trace) []TextCall {
	texts, answerOnly := t.Turns, len(t.Turns) == 0
	if answerOnly {
		texts = []string{t.Answer}
	}
	var out []TextCall
	budget := MaxTraceText
	work := textcall.NewBudget() // one decoding budget for the whole trace
	for i, text := range texts {
		if budget <= 0 || len(out) >= MaxTextCalls || work.Spent() {
			break
		}
		if len(text) > budget {
			text = text[:budget]
		}
		budget -= min(len(text), textcall.MaxText)
		turn := i
		if answerOnly {
			turn = -1
		}
		for _, f := range textcall.Default().FindWithin(text, work) {
			if !answerOnly && parsedToo(t.Calls, i, f) {
				continue
			}
			out = append(out, TextCall{Turn: turn, Family: f.Family, Tool: f.Tool, Args: f.Args})
		}
	}
	// Then the thinking of each turn, within what is left of the same
	// budgets: a call the model thought of and did not make.
	for i, text := range t.Thinking {
		if budget <= 0 || len(out) >= MaxTextCalls || work.Spent() {
			break
		}
		if text == "" {
			continue
		}
		if len(text) > budget {
			text = text[:budget]
		}
		budget -= min(len(text), textcall.MaxText)
		for _, f := range textcall.Default().FindWithin(text, work) {
			if parsedToo(t.Calls, i, f) {
				continue
			}
			out = append(out, TextCall{Turn: i, Family: f.Family, Tool: f.Tool, Args: f.Args, Thinking: true})
		}
	}
	if len(out) > MaxTextCalls {
		out = out[:MaxTextCalls]
	}
	return out
}

// parsedToo reports whether turn's calls include f: a server that parses
// a call may still leave its markup in the content, and such markup is an
// echo of the executed call, not a lost one.
func parsedToo(calls []Call, turn int, f textcall.Found) bool {
	return slices.ContainsFunc(calls, func(c Call) bool {
		return c.Turn == turn && c.Tool == f.Tool && sameValue(c.Args, f.Args)
	})
}

// sameValue reports whether two decoded JSON values are equal, numbers
// by value whatever their Go type: the executed call's arguments hold
// json.Number (the model's text), the markup's float64.
func sameValue(a, b any) bool {
	if x, ok := toNumber(a); ok {
		y, ok := toNumber(b)
		return ok && x.equal(y)
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			if f, has := y[k]; !has || !sameValue(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, sameValue)
	case nil, bool, string:
		return a == b
	}
	return false
}

// textCallReason returns the unparsed_call reason for calls, or false when
// they do not fail the run by themselves: they do in a no_calls case, or
// when one names a forbidden tool. fails says the run fails anyway, and
// then the calls are named as a reason whatever the rules.
func textCallReason(r rules, calls []TextCall, fails bool) (Reason, bool) {
	calls = slices.DeleteFunc(slices.Clone(calls), func(c TextCall) bool { return c.Thinking })
	if len(calls) == 0 {
		return Reason{}, false
	}
	why := ""
	switch i := slices.IndexFunc(calls, func(c TextCall) bool { return slices.Contains(r.Forbid, c.Tool) }); {
	case r.NoCalls:
		why = "want no tool calls"
	case i >= 0:
		why = fmt.Sprintf("forbidden tool %q attempted", calls[i].Tool)
	case !fails:
		return Reason{}, false
	}
	return Reason{Code: ReasonUnparsedCall, Detail: describeTextCalls(calls, why)}, true
}

// describeTextCalls explains text calls to a person, e.g. `turns[0]: the
// model wrote a call to calculate as text (hermes markup) that the server
// did not parse: check the model's chat template (want no tool calls)`.
func describeTextCalls(calls []TextCall, why string) string {
	c := calls[0]
	where := "answer"
	if c.Turn >= 0 {
		where = fmt.Sprintf("turns[%d]", c.Turn)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the model wrote a call to %s as text (%s markup) that the server did not parse", where, c.Tool, c.Family)
	if len(calls) > 1 {
		fmt.Fprintf(&b, ", %d such calls in all", len(calls))
	}
	b.WriteString(": check the model's chat template")
	if why != "" {
		fmt.Fprintf(&b, " (%s)", why)
	}
	return b.String()
}

// UnparsedCallReason returns the unparsed_call reason for a verdict that
// passed but whose run fails for a reason outside the scorer (the engine's
// max_iterations), when the trace has text calls; false otherwise.
func UnparsedCallReason(v Verdict) (Reason, bool) {
	if !v.Pass || len(v.TextCalls) == 0 {
		return Reason{}, false
	}
	return Reason{Code: ReasonUnparsedCall, Detail: describeTextCalls(v.TextCalls, "")}, true
}
