package runconfig

import (
	"fmt"
	"strconv"
	"strings"

	"cuelang.org/go/cue/token"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

// MaxAnthropicTemperature is the highest temperature Anthropic's
// Messages API accepts.
const MaxAnthropicTemperature = 1.0

// checkAnthropic checks what the Messages API would refuse in every run
// of the job, so that the job stops before it starts: a key in headers,
// temperatures above 1, and the combinations thinking does not allow
// (a budget of max_tokens or more, a temperature other than 1, a tool
// choice that forces a call).
func checkAnthropic(c *schema.Config, a *schema.Anthropic, pos positions) schema.Errors {
	var errs schema.Errors
	add := func(elems []any, format string, args ...any) {
		errs = append(errs, pos.at(elems, fmt.Sprintf(format, args...)))
	}
	for k := range a.Headers {
		if strings.EqualFold(k, "x-api-key") || strings.EqualFold(k, "Authorization") {
			add([]any{"backend", "anthropic", "headers", k}, "a key in headers would be written to config.json; put it in an environment variable and name that in api_key_env")
		}
	}
	// temp positions an error at matrix.temperatures[i], or at the
	// thinking budget when the temperatures are the schema's default.
	var at []token.Pos
	temp := func(i int, msg string) {
		if !userSet(pos, "matrix", "temperatures") {
			errs = append(errs, pos.at([]any{"backend", "anthropic", "thinking_budget"}, msg+" (the default); set matrix.temperatures: [1]"))
			return
		}
		if at == nil {
			at = pos.elemPositions([]any{"matrix", "temperatures"})
		}
		e := pos.at([]any{"matrix", "temperatures"}, msg)
		e.Path = matchers.PathString([]any{"matrix", "temperatures", i})
		if i < len(at) && at[i].IsValid() && at[i].Filename() == pos.file {
			e.Line, e.Col = at[i].Line(), at[i].Column()
		}
		errs = append(errs, e)
	}
	thinking := a.ThinkingBudget > 0
	for i, v := range c.Matrix.Values(cell.Temperature) {
		t, _ := strconv.ParseFloat(v, 64) // formatted by the axis
		switch {
		case t < 0 || t > MaxAnthropicTemperature:
			temp(i, fmt.Sprintf("backend.anthropic takes temperatures from 0 to 1, got %s", strconv.FormatFloat(t, 'g', -1, 64)))
		case thinking && t != 1:
			temp(i, fmt.Sprintf("with thinking_budget the Messages API accepts only temperature 1, got %s", strconv.FormatFloat(t, 'g', -1, 64)))
		}
	}
	if thinking && a.ThinkingBudget >= a.MaxTokens {
		add([]any{"backend", "anthropic", "thinking_budget"}, "the thinking budget (%d) must be less than max_tokens (%d): thinking counts against max_tokens", a.ThinkingBudget, a.MaxTokens)
	}
	if tc := a.ToolChoice; thinking && tc != nil && (tc.Type == "any" || tc.Type == "tool") {
		add([]any{"backend", "anthropic", "tool_choice"}, "with thinking_budget the Messages API accepts tool_choice auto or none only, not a forced call")
	}
	return errs
}
