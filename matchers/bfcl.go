package matchers

import "sort"

// FromBFCL translates a BFCL "possible answer" for one function call
// (parameter name -> list of acceptable values) into an args matcher
// spec for a case's expect.calls[i].args. See the package doc for the
// mapping. Use it with strict_args: true, because BFCL rejects parameters
// its answer does not list ([FromBFCLCall] sets that for you).
func FromBFCL(possible map[string][]any) map[string]any {
	out := make(map[string]any, len(possible))
	for k, vals := range possible {
		out[k] = bfclParam(vals)
	}
	return out
}

// FromBFCLCall returns an `expect:` mapping for a single BFCL call:
// {calls: [{tool: name, args: FromBFCL(possible)}], strict_args: true}.
func FromBFCLCall(name string, possible map[string][]any) map[string]any {
	return map[string]any{
		"calls":       []any{map[string]any{"tool": name, "args": FromBFCL(possible)}},
		"strict_args": true,
	}
}

// bfclParam translates the acceptable values of one parameter.
func bfclParam(vals []any) any {
	optional := false
	alts := make([]any, 0, len(vals))
	for _, v := range vals {
		if s, ok := v.(string); ok && s == "" {
			optional = true
		}
		alts = append(alts, bfclValue(v))
	}
	var m any
	switch len(alts) {
	case 0:
		// BFCL never writes an empty list; treat it as "anything".
		return map[string]any{"$any": true}
	case 1:
		m = alts[0]
	default:
		m = map[string]any{"$one_of": alts}
	}
	if optional {
		return map[string]any{"$absent_or": m}
	}
	return m
}

// bfclValue translates one acceptable value. A nested object in a BFCL
// answer is itself a possible answer (key -> list of values); a list is a
// literal list whose elements are literal values.
func bfclValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		nested := make(map[string][]any, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if l, ok := x[k].([]any); ok {
				nested[k] = l
			} else {
				nested[k] = []any{x[k]}
			}
		}
		return FromBFCL(nested)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = bfclValue(e)
		}
		return out
	}
	return v
}

// FromBFCLGroundTruth returns an `expect:` mapping for a BFCL
// ground_truth: a list of calls, each {function name: possible answer}.
// Several calls (BFCL's parallel and multiple categories) may come in any
// order, so they are unordered; strict_args is set as for FromBFCLCall.
func FromBFCLGroundTruth(gt []map[string]map[string][]any) map[string]any {
	calls := make([]any, 0, len(gt))
	for _, c := range gt {
		names := make([]string, 0, len(c))
		for name := range c {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			calls = append(calls, map[string]any{"tool": name, "args": FromBFCL(c[name])})
		}
	}
	e := map[string]any{"calls": calls, "strict_args": true}
	if len(calls) > 1 {
		e["order"] = OrderUnordered
	}
	return e
}
