package runconfig

import (
	"fmt"
	"strconv"

	"github.com/toolward/toolward/schema"
)

// MaxAnthropicTemperature is the highest temperature Anthropic's
// Messages API accepts.
const MaxAnthropicTemperature = 1.0

// checkAnthropic checks what the Messages API would refuse in every
// request of u, so that the job stops before it starts: temperatures
// above 1 and the combinations thinking does not allow (a temperature
// other than 1; once per backend, a budget of max_tokens or more and a
// tool choice that forces a call). A key in headers is checkBackend's.
func checkAnthropic(u backendUse, a *schema.Anthropic, add addFunc) {
	thinking := a.ThinkingBudget > 0
	for i, t := range u.temps {
		switch {
		case t < 0 || t > MaxAnthropicTemperature:
			u.temp(i, fmt.Sprintf("%s takes temperatures from 0 to 1, got %s", u.pathString("anthropic"), strconv.FormatFloat(t, 'g', -1, 64)), "1")
		case thinking && t != 1:
			u.temp(i, fmt.Sprintf("with thinking_budget the Messages API accepts only temperature 1, got %s", strconv.FormatFloat(t, 'g', -1, 64)), "1")
		}
	}
	if !u.own {
		return
	}
	if thinking && a.ThinkingBudget >= a.MaxTokens {
		add(u.path("anthropic", "thinking_budget"), "the thinking budget (%d) must be less than max_tokens (%d): thinking counts against max_tokens", a.ThinkingBudget, a.MaxTokens)
	}
	if tc := a.ToolChoice; thinking && tc != nil && (tc.Type == "any" || tc.Type == "tool") {
		add(u.path("anthropic", "tool_choice"), "with thinking_budget the Messages API accepts tool_choice auto or none only, not a forced call")
	}
}
