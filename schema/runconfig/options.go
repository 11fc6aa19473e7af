package runconfig

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

// openAIReserved are the request body keys toolward sets itself, which an
// options set's openai.extra may not replace.
var openAIReserved = []string{"model", "messages", "tools", "stream", "stream_options", "seed", "temperature"}

// checkOptions checks the options axis: every name in matrix.options is
// "default" or an options_sets entry that has settings for the running
// backend (a replay backend takes any set: the set is only part of the
// cell there), extra keys leave toolward's own request fields alone, and
// the Anthropic settings of each set the matrix runs pass the Messages
// API's thinking rules (checkAnthropicSet).
func checkOptions(c *schema.Config, pos positions, add addFunc) {
	seen := map[string]bool{} // a repeat is reported by checkMatrix
	for i, name := range c.Matrix.Values(cell.Options) {
		el := []any{"matrix", "options", i}
		if seen[name] {
			continue
		}
		seen[name] = true
		if name == cell.DefaultOptions {
			continue
		}
		set, ok := c.OptionsSets[name]
		if !ok {
			add(el, "options set %q: no options_sets entry (defined: %s)", name, definedSets(c))
			continue
		}
		b := c.Backend
		switch {
		case b.Ollama != nil && set.Ollama == nil:
			add(el, "options set %q has no ollama entry, and the backend is ollama", name)
		case b.OpenAI != nil && set.OpenAI == nil:
			add(el, "options set %q has no openai entry, and the backend is openai", name)
		case b.Anthropic != nil && set.Anthropic == nil:
			add(el, "options set %q has no anthropic entry, and the backend is anthropic", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.OptionsSets)) {
		set := c.OptionsSets[name]
		if o := set.OpenAI; o != nil {
			for _, k := range slices.Sorted(maps.Keys(o.Extra)) {
				if slices.Contains(openAIReserved, k) {
					add([]any{"options_sets", name, "openai", "extra", k}, "toolward sets %q itself; extra may not replace it", k)
				}
			}
		}
	}
	if b := c.Backend.Anthropic; b != nil {
		checked := map[string]bool{}
		userTemps := userSet(pos, "matrix", "temperatures")
		for _, name := range c.Matrix.Values(cell.Options) {
			if set, ok := c.OptionsSets[name]; ok && set.Anthropic != nil && !checked[name] {
				checked[name] = true
				checkAnthropicSet(c, b, name, set.Anthropic, userTemps, add)
			}
		}
	}
}

// checkAnthropicSet applies the Messages API's thinking rules (as
// checkAnthropic does for the backend) to the settings an options set's
// cells send: the set's fields over the backend's. Only what the set
// changes is reported, at the set's field: a budget (the set's, or the
// backend's under the set's max_tokens) of max_tokens or more; and, when
// the set turns thinking on for a backend that does not think, a forced
// backend tool_choice or a temperature other than 1 (when the backend
// thinks itself, checkAnthropic reports those at the backend).
func checkAnthropicSet(c *schema.Config, b *schema.Anthropic, name string, a *schema.AnthropicOptions, userTemps bool, add addFunc) {
	at := func(field string) []any { return []any{"options_sets", name, "anthropic", field} }
	budget, maxTokens := b.ThinkingBudget, b.MaxTokens
	if a.ThinkingBudget != nil {
		budget = *a.ThinkingBudget
	}
	if a.MaxTokens != nil {
		maxTokens = *a.MaxTokens
	}
	switch {
	case budget <= 0 || budget < maxTokens:
	case a.ThinkingBudget != nil:
		add(at("thinking_budget"), "the thinking budget (%d) must be less than max_tokens (%d): thinking counts against max_tokens", budget, maxTokens)
	case a.MaxTokens != nil:
		add(at("max_tokens"), "max_tokens (%d) must be more than the thinking budget (%d, from backend.anthropic.thinking_budget): thinking counts against max_tokens", maxTokens, budget)
	}
	if a.ThinkingBudget == nil || b.ThinkingBudget > 0 {
		return
	}
	if tc := b.ToolChoice; tc != nil && (tc.Type == "any" || tc.Type == "tool") {
		add(at("thinking_budget"), "options set %q turns thinking on, and with thinking the Messages API accepts tool_choice auto or none only: backend.anthropic.tool_choice %s forces a call", name, toolChoiceString(tc))
	}
	for _, t := range c.Matrix.Values(cell.Temperature) {
		if t != "1" { // as the axis formats it
			dflt := ""
			if !userTemps {
				dflt = " (the default); set matrix.temperatures: [1]"
			}
			add(at("thinking_budget"), "options set %q turns thinking on, and with thinking the Messages API accepts only temperature 1: matrix.temperatures has %s%s", name, t, dflt)
			break
		}
	}
}

// toolChoiceString writes tc as a config does: "any", or {tool: "NAME"}.
func toolChoiceString(tc *schema.ToolChoice) string {
	if tc.Type == "tool" {
		return fmt.Sprintf("{tool: %q}", tc.Tool)
	}
	return strconv.Quote(tc.Type)
}

func definedSets(c *schema.Config) string {
	if len(c.OptionsSets) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(c.OptionsSets)), ", ")
}
