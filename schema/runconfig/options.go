package runconfig

import (
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
// a thinking budget fits the Anthropic backend's limits.
func checkOptions(c *schema.Config, add addFunc) {
	seen := map[string]bool{}
	for i, name := range c.Matrix.Options {
		el := []any{"matrix", "options", i}
		if seen[name] {
			add(el, "options set %q appears twice", name)
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
		if a, b := set.Anthropic, c.Backend.Anthropic; a != nil && b != nil && a.ThinkingBudget != nil {
			maxTokens := b.MaxTokens
			if a.MaxTokens != nil {
				maxTokens = *a.MaxTokens
			}
			if *a.ThinkingBudget >= maxTokens {
				add([]any{"options_sets", name, "anthropic", "thinking_budget"}, "the thinking budget (%d) must be less than max_tokens (%d): thinking counts against max_tokens", *a.ThinkingBudget, maxTokens)
			}
			if seen[name] {
				for _, t := range c.Matrix.Temperatures {
					if t != 1 {
						add([]any{"options_sets", name, "anthropic", "thinking_budget"}, "with thinking_budget the Messages API accepts only temperature 1, and matrix.temperatures has %s", strconv.FormatFloat(t, 'g', -1, 64))
						break
					}
				}
			}
		}
	}
}

func definedSets(c *schema.Config) string {
	if len(c.OptionsSets) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(c.OptionsSets)), ", ")
}
