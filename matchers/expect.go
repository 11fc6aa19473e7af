package matchers

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/toolward/toolward/schema/cell"
)

// Order values of an expectation.
const (
	OrderSequence  = "sequence"  // expected calls appear in this order; others may interleave
	OrderUnordered = "unordered" // expected calls are assigned to actual calls by a maximum matching
)

// ExpectFields lists the fields an `expect:` mapping may have: the yaml
// keys of Expect.
var ExpectFields = yamlKeys(reflect.TypeFor[Expect]())

// TurnFields lists the fields of an entry of expect.turns, the rules of
// one user turn of a conversation: the yaml keys of TurnRules.
var TurnFields = yamlKeys(reflect.TypeFor[TurnRules]())

// WhenSelectors lists the fields of a `when` entry that select cells: the
// scoring axes of package schema/cell (cell.ScoringNames).
var WhenSelectors = cell.ScoringNames()

// WhenOverrides lists the fields of a `when` entry that override the base
// expectation when the entry applies: the yaml keys of Rules.
var WhenOverrides = yamlKeys(reflect.TypeFor[Rules]())

// ToolName is the shape of a tool name in expectations (and in a case's
// needs): letters, digits and _ . : / -.
var ToolName = regexp.MustCompile(`^[A-Za-z0-9_.:/-]+$`)

// ConfirmModes are the values of the confirm axis (cell.ConfirmModes),
// as strings.
var ConfirmModes = cell.Lookup(cell.Confirm).Known

// Expectation is a compiled `expect:` mapping of a case.
type Expectation struct {
	base rules
	when []whenEntry
}

// rules is one complete set of expectations, compiled; `when` entries
// patch it. Rules holds the fields as written (an absent order reads as
// OrderSequence, an absent max_calls as no limit); calls, answer, state
// and turns are the compiled forms of Calls, Answer, State and Turns,
// which scoring reads.
type rules struct {
	Rules
	calls  []callSpec
	answer node // nil: any answer
	// judge is the judged answer expectation ({$judge: …}) in place of
	// answer; nil when the answer has a matcher or none.
	judge *JudgeSpec
	state []probeSpec
	// turns[i] judges user turn i of a conversation: its calls and its
	// answer (expect.turns). Its own turns are always nil.
	turns []rules
}

// maxCalls is the most calls the rules allow; -1 for no limit.
func (r *rules) maxCalls() int {
	if r.MaxCalls == nil {
		return -1
	}
	return int(*r.MaxCalls)
}

// callSpec is one compiled expected call: the call as written, and its
// args compiled.
type callSpec struct {
	ExpectedCall
	args objLit // the args object; empty when the case names none
}

// whenEntry is one `when` override: selectors, then the fields it sets.
//
// Selectors use the selector language of package schema/cell: a value
// or a list of values per axis, each a glob on the formatted value
// (`n*`, `\*` for a star), numbers compared by value on temperature.
type whenEntry struct {
	sel   []cell.Selector // all must match
	set   map[string]bool // override fields present
	patch rules
}

func (w *whenEntry) applies(c Cell) bool { return cell.MatchAll(w.sel, c) }

// CompileExpect compiles a case's `expect:` mapping as decoded from YAML
// or JSON. The error is CompileErrors, one *CompileError per independent
// mistake, with paths starting at "expect".
func CompileExpect(raw map[string]any) (*Expectation, error) {
	p := path{"expect"}
	var errs CompileErrors
	if raw == nil {
		errs.add(compileErr(p, nil, "missing expectations"))
		return nil, errs
	}
	e := &Expectation{}
	checkFields(p, raw, ExpectFields, &errs)
	compileRules(p, raw, &e.base, nil, false, &errs)
	if w, ok := raw["when"]; ok {
		list, ok := w.([]any)
		if !ok {
			errs.add(compileErr(p.key("when"), nil, "want a list of overrides, got %s", kind(w)))
		}
		for i, item := range list {
			ip := p.key("when").idx(i)
			m, ok := asMap(item)
			if !ok {
				errs.add(compileErr(ip, nil, "want an object, got %s", kind(item)))
				continue
			}
			e.when = append(e.when, compileWhen(ip, m, &errs))
		}
	}
	checkContradictions(p, &e.base, &errs)
	if len(errs) > 0 {
		return nil, errs
	}
	// An override that sets only one of calls and forbid can still clash
	// with the other, inherited from the base.
	for i := range e.when {
		w := &e.when[i]
		if w.set["calls"] == w.set["forbid"] {
			continue // both checked with the entry, or neither changed
		}
		r := w.apply(e.base)
		for _, c := range r.calls {
			if slices.Contains(r.Forbid, c.Tool) {
				errs.add(compileErr(p.key("when").idx(i), nil, "with this override, tool %q is both expected and forbidden", c.Tool))
				break
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return e, nil
}

// CompileErrors lists every independent mistake CompileExpect found, in
// the order of the expectation's fields. errors.As finds the first as a
// *CompileError.
type CompileErrors []*CompileError

func (es CompileErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es CompileErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// add appends err (a *CompileError, or nil) and reports whether it did.
func (es *CompileErrors) add(err error) bool {
	if err == nil {
		return false
	}
	*es = append(*es, err.(*CompileError))
	return true
}

// checkFields adds an error per key of m outside allowed (with a
// did-you-mean) and reports whether there was any.
func checkFields(p path, m map[string]any, allowed []string, errs *CompileErrors) bool {
	bad := false
	for k := range m {
		if !slices.Contains(allowed, k) {
			bad = true
			break
		}
	}
	if !bad {
		return false
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(allowed, k) {
			msg := fmt.Sprintf("unknown field %q", k)
			if s := Suggest(k, allowed); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			errs.add(compileErr(p.key(k), nil, "%s", msg))
		}
	}
	return true
}

// compileRules reads the rule fields present in m into r, in field
// order: the plain fields by their types (decodeValue), calls, answer,
// state and turns compiled. It marks the fields it read in set (when not
// nil) and adds a CompileError per bad field to errs. The rules of one
// user turn (turn) have the fields of TurnRules only.
func compileRules(p path, m map[string]any, r *rules, set map[string]bool, turn bool, errs *CompileErrors) {
	if set == nil {
		set = map[string]bool{}
	}
	dst := reflect.ValueOf(&r.Rules).Elem()
	if turn {
		dst = reflect.ValueOf(&r.TurnRules).Elem()
	}
	decodeFields(p, m, dst, set, errs, func(k string, v any) {
		switch k {
		case "calls":
			r.calls, r.Calls = compileCalls(p.key("calls"), v, errs)
		case "answer":
			r.Answer = v
			if isJudge(v) {
				r.judge = compileJudge(p.key("answer"), v, errs)
				return
			}
			n, err := compile(p.key("answer"), v)
			errs.add(err)
			r.answer = n
		case "state":
			r.state = compileState(p.key("state"), v, errs)
			r.State = make([]StateProbe, len(r.state))
			for i, ps := range r.state {
				r.State[i] = ps.StateProbe
			}
		case "turns":
			r.turns, r.Turns = compileTurns(p.key("turns"), v, errs)
		}
	})
}

// compileCalls compiles a list of expected calls at p.
func compileCalls(p path, v any, errs *CompileErrors) ([]callSpec, []ExpectedCall) {
	list, ok := v.([]any)
	if !ok {
		errs.add(compileErr(p, nil, "want a list of calls, got %s", kind(v)))
	}
	specs := make([]callSpec, 0, len(list))
	calls := make([]ExpectedCall, 0, len(list))
	for i, c := range list {
		if cs, ok := compileCall(p.idx(i), c, errs); ok {
			specs = append(specs, cs)
			calls = append(calls, cs.ExpectedCall)
		}
	}
	return specs, calls
}

// compileTurns compiles an expect.turns list at p: the rules of each
// user turn, in order.
func compileTurns(p path, v any, errs *CompileErrors) ([]rules, []TurnRules) {
	list, ok := v.([]any)
	if !ok {
		errs.add(compileErr(p, nil, "want a list of rules, one per user turn, got %s", kind(v)))
	}
	turns := make([]rules, len(list))
	data := make([]TurnRules, len(list))
	for i, item := range list {
		ip := p.idx(i)
		tm, ok := asMap(item)
		if !ok {
			errs.add(compileErr(ip, nil, "want the rules of one user turn (calls, answer, …), got %s", kind(item)))
			continue
		}
		checkFields(ip, tm, TurnFields, errs)
		compileRules(ip, tm, &turns[i], nil, true, errs)
		checkContradictions(ip, &turns[i], errs)
		data[i] = turns[i].TurnRules
	}
	return turns, data
}

func stringList(p path, v any, what string, re *regexp.Regexp) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, compileErr(p, nil, "want a list of %s, got %s", what, kind(v))
	}
	out := make([]string, len(list))
	for i, x := range list {
		s, ok := x.(string)
		if !ok || !re.MatchString(s) {
			return nil, compileErr(p.idx(i), nil, "want %s, got %s", what, show(x))
		}
		out[i] = s
	}
	return out, nil
}

// compileCall compiles one expected call, adding its mistakes to errs;
// ok is false when there were any.
func compileCall(p path, v any, errs *CompileErrors) (cs callSpec, ok bool) {
	before := len(*errs)
	m, isMap := asMap(v)
	if !isMap {
		errs.add(compileErr(p, nil, "want {tool: NAME, args: {…}}, got %s", kind(v)))
		return cs, false
	}
	if _, has := m["tool"]; !checkFields(p, m, callFields, errs) && !has {
		errs.add(compileErr(p, nil, "missing field \"tool\""))
	}
	cs.args = objLit{vals: map[string]node{}}
	decodeFields(p, m, reflect.ValueOf(&cs.ExpectedCall).Elem(), map[string]bool{}, errs, func(k string, v any) {
		switch k {
		case "tool":
			tool, isStr := v.(string)
			if !isStr || !ToolName.MatchString(tool) {
				errs.add(compileErr(p.key("tool"), nil, "want a tool name, got %s", show(v)))
			}
			cs.Tool = tool
		case "args":
			ap := p.key("args")
			am, isMap := asMap(v)
			if !isMap {
				errs.add(compileErr(ap, nil, "want an object of argument matchers, got %s", kind(v)))
				return
			}
			if op := minOperator(am); op != "" {
				errs.add(compileErr(ap, ap.key(op), "args must be an object of argument names, not a matcher (%q)", op))
				return
			}
			n, err := compileObject(ap, am)
			if !errs.add(err) {
				cs.args, cs.Args = n.(objLit), am
			}
		}
	})
	return cs, len(*errs) == before
}

// checkContradictions reports rules that no trace can meet: expected
// calls together with no_calls, or an expected call to a forbidden tool.
func checkContradictions(p path, r *rules, errs *CompileErrors) {
	if len(r.calls) > 0 && r.NoCalls {
		errs.add(compileErr(p.key("no_calls"), nil, "no_calls: true contradicts the expected calls"))
	}
	if r.MinCalls > 0 && r.NoCalls {
		errs.add(compileErr(p.key("min_calls"), nil, "min_calls: %d contradicts no_calls: true", r.MinCalls))
	}
	if mx := r.maxCalls(); mx >= 0 && int(r.MinCalls) > mx {
		errs.add(compileErr(p.key("min_calls"), nil, "min_calls: %d is more than max_calls: %d", r.MinCalls, mx))
	}
	for i, c := range r.calls {
		if slices.Contains(r.Forbid, c.Tool) {
			errs.add(compileErr(p.key("calls").idx(i).key("tool"), nil, "tool %q is both expected and forbidden", c.Tool))
		}
	}
}

// minOperator returns the first "$" key of m in sorted order, or "".
func minOperator(m map[string]any) string {
	op := ""
	for k := range m {
		if strings.HasPrefix(k, "$") && (op == "" || k < op) {
			op = k
		}
	}
	return op
}

func compileWhen(p path, m map[string]any, errs *CompileErrors) whenEntry {
	allowed := append(append([]string{}, WhenSelectors...), WhenOverrides...)
	// A misspelt field is one mistake: do not also report the selector or
	// override it was meant to be as missing.
	misspelt := checkFields(p, m, allowed, errs)
	var w whenEntry
	for _, name := range WhenSelectors {
		if v, ok := m[name]; ok {
			w.sel = append(w.sel, compileSelector(p.key(name), name, v, errs))
		}
	}
	sel := len(w.sel)
	if sel == 0 && !misspelt {
		errs.add(compileErr(p, nil, "a when entry needs at least one selector (%s)", strings.Join(WhenSelectors, ", ")))
	}
	w.set = map[string]bool{}
	compileRules(p, m, &w.patch, w.set, false, errs)
	if len(w.set) == 0 && !misspelt {
		errs.add(compileErr(p, nil, "a when entry needs at least one override (%s)", strings.Join(WhenOverrides, ", ")))
	}
	checkContradictions(p, &w.patch, errs)
	return w
}

// compileSelector compiles the value of selector field name (a scalar or a
// list of them) of a when entry.
func compileSelector(p path, name string, v any, errs *CompileErrors) cell.Selector {
	numeric := cell.Lookup(name).Numeric
	want := "a string or a list of strings"
	if numeric {
		want = "a number or a list of numbers"
	}
	vals := []any{v}
	if l, ok := v.([]any); ok {
		vals = l
	}
	if len(vals) == 0 {
		errs.add(compileErr(p, nil, "want at least one value"))
	}
	texts := make([]string, 0, len(vals))
	for _, x := range vals {
		t, ok := selectorText(x, numeric)
		if !ok {
			errs.add(compileErr(p, nil, "want %s, got %s", want, show(v)))
			return cell.Selector{Axis: name}
		}
		texts = append(texts, t)
	}
	s, err := cell.NewSelector(name, texts...)
	if err != nil {
		errs.add(compileErr(p, nil, "%v", err))
		return cell.Selector{Axis: name}
	}
	if a := cell.Lookup(name); a.Closed {
		for _, pat := range s.Patterns {
			if !slices.ContainsFunc(a.Known, pat.Match) {
				errs.add(compileErr(p, nil, "want one of %s, got %q", strings.Join(a.Known, ", "), pat))
				break
			}
		}
	}
	return s
}

// selectorText is a selector value as a pattern: a non-empty string, or
// on a numeric axis a number (formatted as the cell formats it) or a
// string that is a number or has a wildcard.
func selectorText(x any, numeric bool) (string, bool) {
	if !numeric {
		s, ok := x.(string)
		return s, ok && s != ""
	}
	if s, ok := x.(string); ok {
		if _, err := strconv.ParseFloat(s, 64); err == nil || strings.ContainsAny(s, `*?\`) {
			return s, true
		}
		return "", false
	}
	n, ok := toNumber(x)
	if !ok {
		return "", false
	}
	return cell.FormatFloat(n.f), true
}

// effective returns the rules for cell c: the base with every applicable
// when entry applied in order.
func (e *Expectation) effective(c Cell) rules {
	r := e.base
	for i := range e.when {
		if w := &e.when[i]; w.applies(c) {
			r = w.apply(r)
		}
	}
	return r
}

// Override returns the index in `when` of the entry whose value of field
// (one of WhenOverrides) applies in cell c: the last entry that selects c
// and sets field. It returns -1 when the base expectation's value applies.
func (e *Expectation) Override(c Cell, field string) int {
	at := -1
	for i := range e.when {
		if w := &e.when[i]; w.set[field] && w.applies(c) {
			at = i
		}
	}
	return at
}

// apply returns r with the fields w sets replaced by w's.
func (w *whenEntry) apply(r rules) rules {
	dst, src := reflect.ValueOf(&r.Rules).Elem(), reflect.ValueOf(&w.patch.Rules).Elem()
	for k := range w.set {
		dst.FieldByIndex(ruleFields[k]).Set(src.FieldByIndex(ruleFields[k]))
		switch k {
		case "calls":
			r.calls = w.patch.calls
		case "answer":
			r.answer, r.judge = w.patch.answer, w.patch.judge
		case "state":
			r.state = w.patch.state
		case "turns":
			r.turns = w.patch.turns
		}
	}
	// no_calls and calls contradict each other: the one the entry sets
	// wins over the other's inherited value.
	if w.set["no_calls"] && w.patch.NoCalls && !w.set["calls"] {
		r.calls, r.Calls = nil, nil
	}
	if w.set["calls"] && len(w.patch.calls) > 0 && !w.set["no_calls"] {
		r.NoCalls = false
	}
	return r
}

// ruleFields maps each key of Rules (WhenOverrides) to its field's index
// path in Rules.
var ruleFields = fieldIndex(reflect.TypeFor[Rules](), nil)

func fieldIndex(t reflect.Type, at []int) map[string][]int {
	out := map[string][]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		idx := append(slices.Clone(at), i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case f.Anonymous && opts == "inline":
			maps.Copy(out, fieldIndex(f.Type, idx))
		case f.IsExported() && name != "" && name != "-":
			out[name] = idx
		}
	}
	return out
}

// Tools returns the tool names of the expected calls in the base
// expectation and in every when override, deduplicated, in first-seen
// order. Loaders check them against a case's needs.
func (e *Expectation) Tools() []ToolRef {
	var out []ToolRef
	for i, c := range e.base.calls {
		out = append(out, ToolRef{Tool: c.Tool, Path: path{"expect", "calls", i, "tool"}.String(), Elems: []any{"expect", "calls", i, "tool"}})
	}
	turnTools := func(prefix []any, turns []rules) {
		for ti, t := range turns {
			for i, c := range t.calls {
				el := append(slices.Clone(prefix), "turns", ti, "calls", i, "tool")
				out = append(out, ToolRef{Tool: c.Tool, Path: path(el).String(), Elems: el})
			}
		}
	}
	turnTools([]any{"expect"}, e.base.turns)
	for wi, w := range e.when {
		if w.set["turns"] {
			turnTools([]any{"expect", "when", wi}, w.patch.turns)
		}
		if !w.set["calls"] {
			continue
		}
		for i, c := range w.patch.calls {
			el := []any{"expect", "when", wi, "calls", i, "tool"}
			out = append(out, ToolRef{Tool: c.Tool, Path: path(el).String(), Elems: el})
		}
	}
	return out
}

// TurnRules returns how many user turns the expectation has rules for
// (expect.turns, or a when entry's turns, whichever is longer) and the
// path of that turns list; 0 and nil when none.
func (e *Expectation) TurnRules() (int, []any) {
	n, at := len(e.base.turns), []any{"expect", "turns"}
	for wi, w := range e.when {
		if w.set["turns"] && len(w.patch.turns) > n {
			n, at = len(w.patch.turns), []any{"expect", "when", wi, "turns"}
		}
	}
	if n == 0 {
		return 0, nil
	}
	return n, at
}

// ToolRef is one tool named by an expected call, and where.
type ToolRef struct {
	Tool  string
	Path  string // e.g. expect.calls[1].tool
	Elems []any  // the same path as keys and indices
}

// Score judges trace t for a run in cell c: the base expectation with
// every `when` entry that selects c applied in order.
func (e *Expectation) Score(t Trace, c Cell) Verdict {
	return score(e.effective(c), t)
}

// scope says what part of a trace one set of rules judges: the whole
// run (expect), or one user turn of a conversation (expect.turns[i]),
// whose calls are a stretch of the run's.
type scope struct {
	first  int    // index in the run's calls of the scope's first call
	expect string // path of the rules: "expect" or "expect.turns[i]"
	turn   bool   // one user turn: malformed and text calls are the run's to report
}

func (sc scope) call(i int) int { return sc.first + i }

// where names the calls or the answer of the scope in a reason:
// "calls"/"answer" for the run, "expect.turns[1].calls" for a turn.
func (sc scope) where(what string) string {
	if sc.turn {
		return sc.expect + "." + what
	}
	return what
}

func score(r rules, t Trace) Verdict {
	v := scoreScope(r, t, scope{expect: "expect"})
	if len(r.turns) > 0 {
		v.Reasons = append(v.Reasons, scoreTurns(r.turns, t, &v.Unjudged)...)
		v.Pass = len(v.Reasons) == 0
	}
	return v
}

// scoreTurns judges each user turn that has rules: its calls (those with
// that UserTurn) and its answer (Answers[i]; Answer for a single
// request's turn 0). A turn the conversation never answered fails with
// missing_turn.
func scoreTurns(turns []rules, t Trace, unjudged *[]string) []Reason {
	answers := t.Answers
	if answers == nil && t.Answer != "" {
		answers = []string{t.Answer}
	}
	var reasons []Reason
	for i, tr := range turns {
		sc := scope{expect: fmt.Sprintf("expect.turns[%d]", i), turn: true}
		if i >= len(answers) {
			reasons = append(reasons, Reason{Code: ReasonMissingTurn, Detail: fmt.Sprintf(
				"%s: the conversation has no answer to user turn %d (it answered %d)", sc.expect, i, len(answers))})
			continue
		}
		first, end := -1, 0
		for j, c := range t.Calls {
			if c.UserTurn == i {
				if first < 0 {
					first = j
				}
				end = j + 1
			}
		}
		sub := Trace{Answer: answers[i], Verdicts: t.Verdicts}
		if first >= 0 {
			sc.first = first
			sub.Calls = t.Calls[first:end]
		}
		v := scoreScope(tr, sub, sc)
		reasons = append(reasons, v.Reasons...)
		*unjudged = append(*unjudged, v.Unjudged...)
		if len(tr.state) > 0 && i < len(t.TurnState) && t.TurnState[i] != nil {
			for _, r := range judgeState(tr.state, t.TurnState[i]) {
				r.Detail = sc.expect + "." + r.Detail
				reasons = append(reasons, r)
			}
		}
		if tr.ContainsGoldenResults && t.GoldenResults != nil {
			var want []string
			if i < len(t.GoldenResults) {
				want = t.GoldenResults[i]
			}
			reasons = append(reasons, resultsReason(sc.expect, want, t.Calls[:upTo(t.Calls, i)])...)
		}
	}
	return reasons
}

// upTo is the number of leading calls made answering user turns 0..i.
func upTo(calls []Call, i int) int {
	n := 0
	for j, c := range calls {
		if c.UserTurn <= i {
			n = j + 1
		}
	}
	return n
}

func scoreScope(r rules, t Trace, sc scope) Verdict {
	var reasons []Reason
	add := func(code, format string, args ...any) {
		reasons = append(reasons, Reason{Code: code, Detail: fmt.Sprintf(format, args...)})
	}
	// usable[i] says whether actual call i can satisfy an expected call.
	usable := make([]bool, len(t.Calls))
	for i, c := range t.Calls {
		switch {
		case c.NotOffered:
			if !sc.turn {
				add(ReasonUnofferedCall, "calls[%d]: tool %q was not offered", i, c.Tool)
			}
		case c.Malformed:
			if !sc.turn {
				add(ReasonMalformedCall, "calls[%d]: arguments to %q are not a JSON object", i, c.Tool)
			}
		default:
			usable[i] = true
		}
		if slices.Contains(r.Forbid, c.Tool) {
			note := ""
			if c.Denied {
				note = " (denied by the user, still attempted)"
			}
			if sc.turn {
				note += " (" + sc.expect + ".forbid)"
			}
			add(ReasonForbiddenCall, "calls[%d]: forbidden tool %q was called%s", sc.call(i), c.Tool, note)
		}
	}
	if r.NoCalls && len(t.Calls) > 0 {
		add(ReasonUnexpectedCall, "%s: want no tool calls, got %d (first: %s)", sc.where("calls"), len(t.Calls), t.Calls[0].Tool)
	}
	if mx := r.maxCalls(); mx >= 0 && len(t.Calls) > mx {
		add(ReasonTooManyCalls, "%s: want at most %d calls, got %d", sc.where("calls"), mx, len(t.Calls))
	}
	if n := usableCount(usable); n < int(r.MinCalls) {
		add(ReasonMissingCall, "%s: want at least %d calls to offered tools, got %d", sc.where("calls"), r.MinCalls, n)
	}
	cx := &mctx{strict: r.StrictArgs}
	if len(r.calls) > 0 {
		if r.Order == OrderUnordered {
			reasons = append(reasons, matchUnordered(cx, sc, r.calls, t.Calls, usable)...)
		} else {
			reasons = append(reasons, matchSequence(cx, sc, r.calls, t.Calls, usable)...)
		}
	}
	if r.answer != nil {
		if m := r.answer.match(cx, t.Answer, true); m != nil {
			add(ReasonAnswerMismatch, "%s%s: %s", sc.where("answer"), m.rel, m.msg)
		}
	}
	var unjudged []string
	if r.judge != nil {
		judgeAnswer(sc, t, add, &unjudged)
	}
	if sc.turn {
		return Verdict{Pass: len(reasons) == 0, Reasons: reasons, Unjudged: unjudged}
	}
	if t.State != nil {
		reasons = append(reasons, judgeState(r.state, t.State)...)
	}
	if r.ContainsGoldenResults && t.GoldenResults != nil {
		var want []string
		for _, g := range t.GoldenResults {
			want = append(want, g...)
		}
		reasons = append(reasons, resultsReason("expect", want, t.Calls)...)
	}
	text := FindTextCalls(t)
	if rs, ok := textCallReason(r, text, len(reasons) > 0); ok {
		reasons = append(reasons, rs)
	}
	return Verdict{Pass: len(reasons) == 0, Reasons: reasons, TextCalls: text, Unjudged: unjudged}
}

// callMatches reports whether actual call a satisfies expected call s.
func callMatches(cx *mctx, s *callSpec, a *Call) bool {
	// A nil Args reads as an empty object.
	return a.Tool == s.Tool && s.args.match(cx, a.Args, true) == nil
}

// matchSequence finds the expected calls as a subsequence of the actual
// calls. Taking, for each expected call, the earliest matching actual call
// after the previous one is optimal for subsequence matching.
func matchSequence(cx *mctx, sc scope, exp []callSpec, act []Call, usable []bool) []Reason {
	var reasons []Reason
	pos := 0
	for k := range exp {
		s := &exp[k]
		found := -1
		for i := pos; i < len(act); i++ {
			if usable[i] && callMatches(cx, s, &act[i]) {
				found = i
				break
			}
		}
		if found >= 0 {
			pos = found + 1
			continue
		}
		// Explain: out of order, wrong arguments, or never called.
		earlier := -1
		for i := 0; i < pos && i < len(act); i++ {
			if usable[i] && callMatches(cx, s, &act[i]) {
				earlier = i
				break
			}
		}
		if earlier >= 0 {
			reasons = append(reasons, Reason{Code: ReasonMissingCall, Detail: fmt.Sprintf(
				"%s.calls[%d] (%s): out of order: only calls[%d] matches, before the call matched by %s.calls[%d]", sc.expect, k, s.Tool, sc.call(earlier), sc.expect, k-1)})
		} else {
			reasons = append(reasons, explainUnmatched(cx, sc, k, s, act, usable, nil))
		}
	}
	return reasons
}

// matchUnordered assigns expected calls to distinct actual calls with a
// maximum bipartite matching (augmenting paths), so that an actual call
// that could satisfy several expected calls is given to the one that
// needs it.
func matchUnordered(cx *mctx, sc scope, exp []callSpec, act []Call, usable []bool) []Reason {
	adj := make([][]int, len(exp))
	for k := range exp {
		for i := range act {
			if usable[i] && callMatches(cx, &exp[k], &act[i]) {
				adj[k] = append(adj[k], i)
			}
		}
	}
	owner := make([]int, len(act)) // actual -> expected, -1 free
	for i := range owner {
		owner[i] = -1
	}
	var try func(k int, seen []bool) bool
	try = func(k int, seen []bool) bool {
		for _, i := range adj[k] {
			if seen[i] {
				continue
			}
			seen[i] = true
			if owner[i] < 0 || try(owner[i], seen) {
				owner[i] = k
				return true
			}
		}
		return false
	}
	matched := make([]bool, len(exp))
	for k := range exp {
		if try(k, make([]bool, len(act))) {
			matched[k] = true
		}
	}
	var reasons []Reason
	for k := range exp {
		if !matched[k] {
			reasons = append(reasons, explainUnmatched(cx, sc, k, &exp[k], act, usable, owner))
		}
	}
	return reasons
}

// explainUnmatched says why expected call k found no actual call: no call
// to its tool (missing_call), every fitting call already taken by another
// expected call (missing_call), or the closest call's arguments (wrong_args).
func explainUnmatched(cx *mctx, sc scope, k int, s *callSpec, act []Call, usable []bool, owner []int) Reason {
	best, bestN, same := -1, 1<<30, 0
	for i := range act {
		if !usable[i] || act[i].Tool != s.Tool {
			continue
		}
		same++
		if owner != nil && owner[i] >= 0 && callMatches(cx, s, &act[i]) {
			return Reason{Code: ReasonMissingCall, Detail: fmt.Sprintf(
				"%s.calls[%d] (%s): no call left: calls[%d] matches but is assigned to %s.calls[%d]", sc.expect, k, s.Tool, sc.call(i), sc.expect, owner[i])}
		}
		if n := s.args.failures(cx, act[i].Args); n < bestN {
			best, bestN = i, n
		}
	}
	if best < 0 {
		never := "was never called"
		if sc.turn {
			never = "was not called in this turn"
		}
		return Reason{Code: ReasonMissingCall, Detail: fmt.Sprintf("%s.calls[%d] (%s): %s %s", sc.expect, k, s.Tool, s.Tool, never)}
	}
	m := s.args.match(cx, act[best].Args, true)
	detail := "calls[" + strconv.Itoa(sc.call(best)) + "].args"
	if m != nil {
		detail += m.rel + ": " + m.msg
	} else {
		detail += ": matches, but the call is out of order"
	}
	note := ""
	if same > 1 {
		note = fmt.Sprintf(", closest of %d %s calls", same, s.Tool)
	}
	return Reason{Code: ReasonWrongArgs, Detail: fmt.Sprintf("%s (%s.calls[%d]%s)", detail, sc.expect, k, note)}
}

func usableCount(usable []bool) int {
	n := 0
	for _, u := range usable {
		if u {
			n++
		}
	}
	return n
}
