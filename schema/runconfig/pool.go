package runconfig

import (
	"slices"
	"strings"

	"cuelang.org/go/cue"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

// checkPools checks the host pools of c's backend: one of host and
// hosts (base_url and base_urls), no host twice, and every model of the
// matrix served by some host.
func checkPools(c *schema.Config, pos positions, add func(elems []any, format string, args ...any)) {
	if o := c.Backend.Ollama; o != nil {
		checkPool(c, pos, add, "ollama", "host", "hosts", o.Hosts)
	}
	if o := c.Backend.OpenAI; o != nil {
		checkPool(c, pos, add, "openai", "base_url", "base_urls", o.BaseURLs)
	}
	if a := c.Backend.Anthropic; a != nil {
		checkPool(c, pos, add, "anthropic", "base_url", "base_urls", a.BaseURLs)
	}
}

func checkPool(c *schema.Config, pos positions, add func(elems []any, format string, args ...any), kind, one, many string, hosts []schema.PoolHost) {
	if len(hosts) == 0 {
		return
	}
	at := []any{"backend", kind, many}
	if userSet(pos, "backend", kind, one) {
		add([]any{"backend", kind, one}, "set %s or %s, not both: with %s, %s is not used", one, many, many, one)
	}
	seen := make(map[string]int, len(hosts))
	for i, h := range hosts {
		key := strings.TrimRight(h.URL, "/")
		if j, dup := seen[key]; dup {
			add(append(at, i), "host %s is already %s[%d]; list each host once and set its concurrency instead", h.URL, many, j)
			continue
		}
		seen[key] = i
	}
	for i, m := range c.Matrix.Values(cell.Model) {
		if !slices.ContainsFunc(hosts, func(h schema.PoolHost) bool { return h.Serves(m) }) {
			add([]any{"matrix", "models", i}, "no host in backend.%s.%s serves model %q: every host pins other models; add it to a host's models, or add a host that pins none", kind, many, m)
		}
	}
}

// userSet reports whether the user's file sets the field at path, as
// opposed to the schema's default filling it in.
func userSet(pos positions, path ...string) bool {
	if !pos.v.Exists() {
		return false
	}
	sels := make([]cue.Selector, len(path))
	for i, p := range path {
		sels[i] = cue.Str(p)
	}
	v := pos.v.LookupPath(cue.MakePath(sels...))
	return v.Exists() && v.Pos().IsValid() && v.Pos().Filename() == pos.file
}
