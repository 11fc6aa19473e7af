package matchers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// ReasonStateMismatch: a state probe (expect.state) saw an end state the
// case does not accept.
const ReasonStateMismatch = "state_mismatch"

// Equals values of a probe: what its result must equal.
const (
	// EqualsGolden: the same probe's result on a fresh server after the
	// case's golden calls were replayed there.
	EqualsGolden = "golden"
	// EqualsInitial: the same probe's result on a fresh server after no
	// calls at all (the run must leave the state as it found it).
	EqualsInitial = "initial"
)

// ProbeFields lists the fields of one expect.state entry: the yaml keys of
// StateProbe.
var ProbeFields = yamlKeys(reflect.TypeFor[StateProbe]())

// Probe is one state probe as the harness calls it: a tool call it makes
// after the conversation, on the run's server session, never shown to the
// model. Equals is "" when a matcher judges the result.
type Probe struct {
	Tool   string
	Args   map[string]any
	Equals string // "", EqualsGolden or EqualsInitial
}

// ProbeResult is what one probe saw. The engine fills Trace.State with
// one per probe, in the order of Expectation.Probes.
type ProbeResult struct {
	// Value is the probe's result: its structured content, else its text
	// decoded as JSON when it is JSON, else the text.
	Value   any
	IsError bool
	// Want is the same probe's result on a fresh server after the
	// golden's calls (EqualsGolden) or none (EqualsInitial); nil for a
	// probe judged by a matcher.
	Want *ProbeResult
}

// probeSpec is one compiled probe: the probe as written, its result
// matcher and ignore paths compiled.
type probeSpec struct {
	StateProbe
	result node // nil with Equals
	ignore []jsonPath
}

// Probes returns the state probes of cell c (expect.state, or the last
// `when` override of it that selects c), in order. Nil when there are
// none.
func (e *Expectation) Probes(c Cell) []Probe {
	specs := e.effective(c).state
	if len(specs) == 0 {
		return nil
	}
	out := make([]Probe, len(specs))
	for i, s := range specs {
		out[i] = Probe{Tool: s.Tool, Args: s.Args, Equals: s.Equals}
	}
	return out
}

// HasProbes reports whether any cell has state probes: the base
// expectation or a `when` override sets a non-empty expect.state.
func (e *Expectation) HasProbes() bool {
	if len(e.base.state) > 0 || turnProbesSet(&e.base) {
		return true
	}
	for _, w := range e.when {
		if w.set["state"] && len(w.patch.state) > 0 || w.set["turns"] && turnProbesSet(&w.patch) {
			return true
		}
	}
	return false
}

// ProbeRef is one probe of the expectation and where it is.
type ProbeRef struct {
	ToolRef
	Equals string
}

// ProbeRefs returns every probe of the base expectation and of the
// `when` overrides, in order, with their paths: loaders check that an
// `equals: golden` probe has a golden to replay, and preflights that the
// server has the tools.
func (e *Expectation) ProbeRefs() []ProbeRef {
	var out []ProbeRef
	add := func(specs []probeSpec, at ...any) {
		for i, s := range specs {
			el := append(append([]any{}, at...), "state", i, "tool")
			out = append(out, ProbeRef{ToolRef: ToolRef{Tool: s.Tool, Path: path(el).String(), Elems: el}, Equals: s.Equals})
		}
	}
	add(e.base.state, "expect")
	for ti, t := range e.base.turns {
		add(t.state, "expect", "turns", ti)
	}
	for wi, w := range e.when {
		if w.set["state"] {
			add(w.patch.state, "expect", "when", wi)
		}
		if w.set["turns"] {
			for ti, t := range w.patch.turns {
				add(t.state, "expect", "when", wi, "turns", ti)
			}
		}
	}
	return out
}

// compileState compiles an expect.state list at p.
func compileState(p path, v any, errs *CompileErrors) []probeSpec {
	list, ok := v.([]any)
	if !ok {
		errs.add(compileErr(p, nil, "want a list of probes ({tool, args, result} or {tool, args, equals}), got %s", kind(v)))
		return nil
	}
	out := make([]probeSpec, 0, len(list))
	for i, x := range list {
		if s, ok := compileProbe(p.idx(i), x, errs); ok {
			out = append(out, s)
		}
	}
	return out
}

func compileProbe(p path, v any, errs *CompileErrors) (probeSpec, bool) {
	before := len(*errs)
	var s probeSpec
	m, ok := asMap(v)
	if !ok {
		errs.add(compileErr(p, nil, "want a probe {tool, args, result} or {tool, args, equals}, got %s", kind(v)))
		return s, false
	}
	misspelt := checkFields(p, m, ProbeFields, errs)
	if _, has := m["tool"]; !has && !misspelt {
		errs.add(compileErr(p, nil, "missing field \"tool\""))
	}
	_, hasRes := m["result"]
	_, hasEq := m["equals"]
	switch {
	case hasRes && hasEq:
		errs.add(compileErr(p.key("equals"), nil, "want result or equals, not both"))
	case !hasRes && !hasEq && !misspelt:
		errs.add(compileErr(p, nil, "missing field \"result\" (a matcher) or \"equals\" (golden or initial)"))
	}
	decodeFields(p, m, reflect.ValueOf(&s.StateProbe).Elem(), map[string]bool{}, errs, func(k string, v any) {
		switch k {
		case "tool":
			tool, isStr := v.(string)
			if !isStr || !ToolName.MatchString(tool) {
				errs.add(compileErr(p.key("tool"), nil, "want a tool name, got %s", show(v)))
			}
			s.Tool = tool
		case "args":
			am, isMap := asMap(v)
			if !isMap {
				errs.add(compileErr(p.key("args"), nil, "want an object of arguments, got %s", kind(v)))
			}
			s.Args = am
		case "result":
			if hasEq {
				return // reported: not both
			}
			n, err := compile(p.key("result"), v)
			errs.add(err)
			s.result, s.Result = n, v
		case "equals":
			if hasRes {
				return
			}
			str, _ := v.(string)
			if str != EqualsGolden && str != EqualsInitial {
				errs.add(compileErr(p.key("equals"), nil, "want %q or %q, got %s", EqualsGolden, EqualsInitial, show(v)))
			}
			s.Equals = str
		case "ignore":
			s.ignore, s.Ignore = compileIgnore(p.key("ignore"), v, hasEq, errs)
		}
	})
	if io, has := m["ignore_order"]; has && !hasEq {
		if _, isBool := io.(bool); isBool { // else refused as not a bool
			errs.add(compileErr(p.key("ignore_order"), nil, "ignore_order applies to equals probes only"))
		}
	}
	return s, len(*errs) == before
}

// compileIgnore compiles the ignore paths of a probe at p (an equals
// probe, with equals).
func compileIgnore(p path, v any, equals bool, errs *CompileErrors) ([]jsonPath, []string) {
	if !equals {
		errs.add(compileErr(p, nil, "ignore applies to equals probes only (a result matcher names only what it checks)"))
	}
	list, isList := v.([]any)
	if !isList {
		errs.add(compileErr(p, nil, "want a list of JSON paths, got %s", kind(v)))
	}
	var paths []jsonPath
	var texts []string
	for i, x := range list {
		str, isStr := x.(string)
		jp, err := parseJSONPath(str)
		switch {
		case !isStr:
			errs.add(compileErr(p.idx(i), nil, "want a JSON path such as entities[*].id, got %s", show(x)))
		case err != nil:
			errs.add(compileErr(p.idx(i), nil, "%v", err))
		default:
			paths, texts = append(paths, jp), append(texts, str)
		}
	}
	return paths, texts
}

// judgeState compares the probe results of t with the probes of r.
func judgeState(specs []probeSpec, got []ProbeResult) []Reason {
	var out []Reason
	add := func(i int, format string, args ...any) {
		out = append(out, Reason{Code: ReasonStateMismatch, Detail: fmt.Sprintf("state[%d] (%s): ", i, specs[i].Tool) + fmt.Sprintf(format, args...)})
	}
	if len(got) != len(specs) {
		return []Reason{{Code: ReasonStateMismatch, Detail: fmt.Sprintf("state: want %d probe results, got %d (the probes changed since the run)", len(specs), len(got))}}
	}
	for i, s := range specs {
		g := got[i]
		if g.IsError {
			add(i, "the probe returned an error: %s", show(g.Value))
			continue
		}
		if s.result != nil {
			if m := s.result.match(&mctx{}, g.Value, true); m != nil {
				add(i, "%s", m.String())
			}
			continue
		}
		switch {
		case g.Want == nil:
			add(i, "no %s state to compare with", s.Equals)
		case g.Want.IsError:
			add(i, "the same probe on the %s state returned an error: %s", s.Equals, show(g.Want.Value))
		default:
			want, have := g.Want.Value, g.Value
			for _, jp := range s.ignore {
				want, have = jp.remove(want), jp.remove(have)
			}
			if s.IgnoreOrder {
				want, have = sortLists(want), sortLists(have)
			}
			if d := diffJSON(want, have); len(d) > 0 {
				add(i, "differs from the %s state: %s", s.Equals, strings.Join(d, "; "))
			}
		}
	}
	return out
}

// maxDiffs bounds the differences one probe's reason lists.
const maxDiffs = 8

// diffJSON lists where got differs from want, as "path: want …, got …",
// at most maxDiffs of them (then "… and N more"). Objects compare key by
// key, lists element by element (and by length), numbers by value.
func diffJSON(want, have any) []string {
	var out []string
	n := 0
	var walk func(p string, w, g any, wp, gp bool)
	walk = func(p string, w, g any, wp, gp bool) {
		at := func() string {
			if p == "" {
				return "(the whole result)"
			}
			return strings.TrimPrefix(p, ".")
		}
		emit := func(msg string) {
			n++
			if len(out) < maxDiffs {
				out = append(out, at()+": "+msg)
			}
		}
		if !wp || !gp {
			emit("want " + got(w, wp) + ", got " + got(g, gp))
			return
		}
		wm, wIsMap := asMap(w)
		gm, gIsMap := asMap(g)
		if wIsMap && gIsMap {
			keys := make([]string, 0, len(wm)+len(gm))
			for k := range wm {
				keys = append(keys, k)
			}
			for k := range gm {
				if _, ok := wm[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				wv, wok := wm[k]
				gv, gok := gm[k]
				walk(p+relKey(k), wv, gv, wok, gok)
			}
			return
		}
		wl, wIsList := w.([]any)
		gl, gIsList := g.([]any)
		if wIsList && gIsList {
			if len(wl) != len(gl) {
				emit(fmt.Sprintf("want %s, got %d", Plural(len(wl), "element"), len(gl)))
			}
			for i := range min(len(wl), len(gl)) {
				walk(p+relIdx(i), wl[i], gl[i], true, true)
			}
			return
		}
		if !sameJSON(w, g) {
			emit("want " + show(w) + ", got " + show(g))
		}
	}
	walk("", want, have, true, true)
	if n > len(out) {
		out = append(out, fmt.Sprintf("… and %d more", n-len(out)))
	}
	return out
}

// sameJSON reports whether two scalars (or mismatched kinds) are equal:
// numbers by value, the rest exactly.
func sameJSON(a, b any) bool {
	na, aNum := toNumber(a)
	nb, bNum := toNumber(b)
	if aNum || bNum {
		return aNum && bNum && na.equal(nb)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return false // an object or list against a scalar
}

// sortLists returns v with every list, at any depth, sorted by the JSON
// encoding of its elements (after their own lists are sorted), for
// comparisons that ignore order.
func sortLists(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = sortLists(e)
		}
		return out
	case []any:
		type keyed struct {
			k string
			v any
		}
		ks := make([]keyed, len(x))
		for i, e := range x {
			s := sortLists(e)
			b, _ := json.Marshal(normalizeForJSON(s))
			ks[i] = keyed{string(b), s}
		}
		slices.SortStableFunc(ks, func(a, b keyed) int { return strings.Compare(a.k, b.k) })
		out := make([]any, len(ks))
		for i, e := range ks {
			out[i] = e.v
		}
		return out
	}
	return v
}

// jsonPath is a parsed ignore path: keys, indices and wildcards from the
// root of a probe's result.
type jsonPath []pathStep

type pathStep struct {
	key      string
	idx      int
	isIdx    bool
	anyKey   bool // *
	anyIndex bool // [*]
}

// parseJSONPath parses a path such as entities[*].id, tickets[0].ticket_id,
// *.created_at or ["a key"].x; a leading "$" or "$." is allowed.
func parseJSONPath(s string) (jsonPath, error) {
	src := s
	s = strings.TrimPrefix(s, "$")
	s = strings.TrimPrefix(s, ".")
	if s == "" {
		return nil, fmt.Errorf("want a JSON path such as entities[*].id, got %q", src)
	}
	var out jsonPath
	bad := func(why string) error { return fmt.Errorf("bad JSON path %q: %s", src, why) }
	for s != "" {
		switch {
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if strings.HasPrefix(s, `["`) {
				// A quoted key: find the closing quote, allowing escapes.
				q, err := strconv.QuotedPrefix(s[1:])
				if err != nil || !strings.HasPrefix(s[1+len(q):], "]") {
					return nil, bad("unterminated quoted key")
				}
				k, _ := strconv.Unquote(q)
				out = append(out, pathStep{key: k})
				s = s[1+len(q)+1:]
				break
			}
			if end < 0 {
				return nil, bad("missing ]")
			}
			in := s[1:end]
			if in == "*" {
				out = append(out, pathStep{anyIndex: true})
			} else {
				i, err := strconv.Atoi(in)
				if err != nil || i < 0 {
					return nil, bad("want [N], [*] or [\"key\"], got [" + in + "]")
				}
				out = append(out, pathStep{idx: i, isIdx: true})
			}
			s = s[end+1:]
		case s[0] == '.':
			s = s[1:]
			if s == "" || s[0] == '.' || s[0] == '[' {
				return nil, bad("empty key")
			}
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			k := s[:end]
			if k == "*" {
				out = append(out, pathStep{anyKey: true})
			} else {
				out = append(out, pathStep{key: k})
			}
			s = s[end:]
		}
	}
	return out, nil
}

// remove returns a copy of v without the values the path selects (v
// itself is not modified).
func (jp jsonPath) remove(v any) any {
	if len(jp) == 0 {
		return v
	}
	st, rest := jp[0], jp[1:]
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			sel := st.anyKey || (!st.isIdx && !st.anyIndex && st.key == k)
			switch {
			case sel && len(rest) == 0:
				continue // dropped
			case sel:
				out[k] = rest.remove(e)
			default:
				out[k] = e
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for i, e := range x {
			sel := st.anyIndex || st.anyKey || (st.isIdx && st.idx == i)
			switch {
			case sel && len(rest) == 0:
				continue
			case sel:
				out = append(out, rest.remove(e))
			default:
				out = append(out, e)
			}
		}
		return out
	}
	return v
}

// Plural spells n things: "1 element", "3 elements".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
