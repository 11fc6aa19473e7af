package runconfig

import (
	"slices"
	"strings"

	"cuelang.org/go/cue"

	"github.com/toolward/toolward/schema"
)

// checkPools checks the host pools of u's backend: one of host and
// hosts (base_url and base_urls), no host twice (once per backend), and
// every model u asks for served by some host.
func checkPools(u backendUse, pos positions, add addFunc) {
	switch b := u.b; {
	case b.Ollama != nil:
		checkPool(u, pos, add, "ollama", "host", "hosts", b.Ollama.Hosts)
	case b.OpenAI != nil:
		checkPool(u, pos, add, "openai", "base_url", "base_urls", b.OpenAI.BaseURLs)
	case b.Anthropic != nil:
		checkPool(u, pos, add, "anthropic", "base_url", "base_urls", b.Anthropic.BaseURLs)
	}
}

func checkPool(u backendUse, pos positions, add addFunc, kind, one, many string, hosts []schema.PoolHost) {
	if len(hosts) == 0 {
		return
	}
	at := u.path(kind, many)
	if u.own {
		if userSet(pos, append(strs(u.at), kind, one)...) {
			add(u.path(kind, one), "set %s or %s, not both: with %s, %s is not used", one, many, many, one)
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
	}
	for i, m := range u.models {
		if !slices.ContainsFunc(hosts, func(h schema.PoolHost) bool { return h.Serves(m) }) {
			add(u.modelAt(i), "no host in %s serves model %q: every host pins other models; add it to a host's models, or add a host that pins none", u.pathString(kind, many), m)
		}
	}
}

// strs is elems, all strings, as strings.
func strs(elems []any) []string {
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i], _ = e.(string)
	}
	return out
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
