package matchers

import "strings"

// The matcher language's one-value entry points, for tests only: the
// product compiles matchers through CompileExpect.

// Match reports whether v matches; present is false when the value is an
// absent object key (v is then ignored), which is different from a present
// null (v == nil, present == true). When ok is false, why explains the
// first mismatch found. It begins with the path of the offending node
// relative to v (`sql: want …`, `[2].city: want …`) or with no path when v
// itself mismatched (`want …`). Use [Explain] to put a prefix in front,
// e.g. Explain("calls[0].args", why) gives `calls[0].args.sql: want …`.
type Matcher interface {
	Match(v any, present bool) (ok bool, why string)
}

// Explain joins a path prefix and an explanation returned by Match.
func Explain(prefix, why string) string {
	switch {
	case prefix == "":
		return why
	case strings.HasPrefix(why, "want "): // no path: v itself mismatched
		return prefix + ": " + why
	case strings.HasPrefix(why, "["):
		return prefix + why
	}
	return prefix + "." + why
}

// compiled wraps a node as a public Matcher.
type compiled struct {
	n node
}

func (c compiled) Match(v any, present bool) (bool, string) {
	m := c.n.match(&mctx{}, v, present)
	if m == nil {
		return true, ""
	}
	return false, m.String()
}

// MatchStrict is Match with strict_args semantics: every literal object
// inside the matcher rejects keys it does not name.
func MatchStrict(m Matcher, v any, present bool) (bool, string) {
	c, ok := m.(compiled)
	if !ok {
		return m.Match(v, present)
	}
	mm := c.n.match(&mctx{strict: true}, v, present)
	if mm == nil {
		return true, ""
	}
	return false, mm.String()
}

// Compile compiles spec, a value as decoded from YAML or JSON (maps with
// string keys, lists, strings, numbers, booleans, nil), into a Matcher.
// An object whose keys start with "$" is an operator and must have exactly
// one key; an unknown operator is an error with a suggestion, never a
// literal. Errors are *CompileError with the path of the offending node.
func Compile(spec any) (Matcher, error) {
	n, err := compile(nil, spec)
	if err != nil {
		return nil, err
	}
	return compiled{n}, nil
}
