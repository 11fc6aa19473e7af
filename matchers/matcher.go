package matchers

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Matcher is a compiled expectation for one JSON value.
//
// Operators lists the matcher operators, in the order documented.
var Operators = []string{"$any", "$all", "$contains", "$one_of", "$absent_or", "$regex", "$not", "$approx", "$norm", "$int"}

// CompileError is a matcher or expectation that cannot be compiled.
type CompileError struct {
	// Path names the offending node for a person, e.g.
	// `expect.calls[0].args.lang`.
	Path string
	// Elems is the location of the node the error is about, as object keys
	// (string) and list indices (int) from the root of the compiled value.
	// It may go one step deeper than Path, e.g. to the key "$contians" of
	// an unknown operator, so that a loader can point at that key.
	Elems []any
	Msg   string
}

func (e *CompileError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// path is a location inside a value, kept as elements so that it can be
// both printed and resolved to a source position.
type path []any

func (p path) key(k string) path { return append(p[:len(p):len(p)], k) }
func (p path) idx(i int) path    { return append(p[:len(p):len(p)], i) }

func (p path) String() string { return PathString(p) }

// PathString formats a location given as elements (string keys, int
// indexes) the way every toolward message names one:
// expect.calls[0].args["user name"]. Keys that are not identifiers are
// quoted.
func PathString(elems []any) string {
	var b strings.Builder
	for _, e := range elems {
		switch e := e.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", e)
		case string:
			if isIdent(e) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(e)
			} else {
				fmt.Fprintf(&b, "[%q]", e)
			}
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r == '$' || r == '-' && i > 0:
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// relKey and relIdx render one relative step of an explanation path.
func relKey(k string) string {
	if isIdent(k) {
		return "." + k
	}
	return fmt.Sprintf("[%q]", k)
}

func relIdx(i int) string { return "[" + strconv.Itoa(i) + "]" }

// mismatch is an internal explanation: a relative path ("", ".sql",
// "[2].city") and a message.
type mismatch struct {
	rel string
	msg string
}

func (m *mismatch) String() string {
	if m.rel == "" {
		return m.msg
	}
	return strings.TrimPrefix(m.rel, ".") + ": " + m.msg
}

// node is the internal form of every compiled matcher.
type node interface {
	match(cx *mctx, v any, present bool) *mismatch
	// describe renders the expectation for messages ("string containing \"x\"").
	describe() string
}

// mctx carries options that apply to a whole match.
type mctx struct {
	strict bool // literal objects reject keys they do not name
}

func compileErr(p path, at path, format string, args ...any) error {
	if at == nil {
		at = p
	}
	return &CompileError{Path: p.String(), Elems: at, Msg: fmt.Sprintf(format, args...)}
}

func compile(p path, spec any) (node, error) {
	switch s := spec.(type) {
	case nil:
		return nullLit{}, nil
	case bool:
		return boolLit(s), nil
	case string:
		return strLit(s), nil
	case []any:
		elems, err := compileList(p, s)
		if err != nil {
			return nil, err
		}
		return listLit{elems}, nil
	case map[string]any:
		return compileObject(p, s)
	case map[any]any:
		m := make(map[string]any, len(s))
		for k, v := range s {
			ks, ok := k.(string)
			if !ok {
				return nil, compileErr(p, nil, "object key %v is not a string", k)
			}
			m[ks] = v
		}
		return compileObject(p, m)
	}
	if n, ok := toNumber(spec); ok {
		return numLit{n}, nil
	}
	return nil, compileErr(p, nil, "unsupported value of type %T", spec)
}

// compileList compiles the elements of a list at p.
func compileList(p path, items []any) ([]node, error) {
	out := make([]node, len(items))
	for i, e := range items {
		n, err := compile(p.idx(i), e)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func compileObject(p path, s map[string]any) (node, error) {
	var ops []string
	for k := range s {
		if strings.HasPrefix(k, "$") {
			ops = append(ops, k)
		}
	}
	if len(ops) == 0 {
		o := objLit{keys: slices.Sorted(maps.Keys(s)), vals: make(map[string]node, len(s))}
		for _, k := range o.keys {
			n, err := compile(p.key(k), s[k])
			if err != nil {
				return nil, err
			}
			o.vals[k] = n
		}
		return o, nil
	}
	sort.Strings(ops)
	for _, op := range ops {
		if op == JudgeOp {
			return nil, compileErr(p, p.key(op), "$judge is an answer expectation of its own (answer: {$judge: RUBRIC}), not a matcher inside another or on an argument")
		}
		if !slices.Contains(Operators, op) {
			msg := fmt.Sprintf("unknown matcher %q", op)
			if sug := Suggest(op, Operators); sug != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sug)
			} else {
				msg += " (known: " + strings.Join(Operators, ", ") + ")"
			}
			return nil, compileErr(p, p.key(op), "%s", msg)
		}
	}
	if len(s) != 1 {
		return nil, compileErr(p, nil, "a matcher object has exactly one $ key, got %s", strings.Join(slices.Sorted(maps.Keys(s)), ", "))
	}
	op := ops[0]
	arg := s[op]
	ap := p.key(op)
	switch op {
	case "$any":
		if b, ok := arg.(bool); !ok || !b {
			return nil, compileErr(p, ap, "$any takes true, got %s", show(arg))
		}
		return anyM{}, nil
	case "$contains":
		n, err := compile(ap, arg)
		if err != nil {
			return nil, err
		}
		c := containsM{elem: n}
		if str, ok := arg.(string); ok {
			c.sub, c.isSub = str, true
		}
		return c, nil
	case "$one_of":
		alts, ok := arg.([]any)
		if !ok || len(alts) == 0 {
			return nil, compileErr(p, ap, "$one_of takes a non-empty list of alternatives, got %s", show(arg))
		}
		ns, err := compileList(ap, alts)
		if err != nil {
			return nil, err
		}
		return oneOfM{ns}, nil
	case "$all":
		ms, ok := arg.([]any)
		if !ok || len(ms) == 0 {
			return nil, compileErr(p, ap, "$all takes a non-empty list of matchers, every one of which must match, got %s", show(arg))
		}
		ns, err := compileList(ap, ms)
		if err != nil {
			return nil, err
		}
		return allM{ns}, nil
	case "$absent_or":
		n, err := compile(ap, arg)
		if err != nil {
			return nil, err
		}
		return absentOrM{n}, nil
	case "$regex":
		str, ok := arg.(string)
		if !ok {
			return nil, compileErr(p, ap, "$regex takes a string, got %s", show(arg))
		}
		re, err := regexp.Compile(str)
		if err != nil {
			return nil, compileErr(p, ap, "$regex: %v", err)
		}
		return regexM{re}, nil
	case "$not":
		n, err := compile(ap, arg)
		if err != nil {
			return nil, err
		}
		return notM{n}, nil
	case "$approx":
		return compileApprox(p, ap, arg)
	case "$norm":
		str, ok := arg.(string)
		if !ok {
			return nil, compileErr(p, ap, "$norm takes a string, got %s", show(arg))
		}
		return normM{want: str, norm: Normalize(str)}, nil
	case "$int":
		return compileInt(p, ap, arg)
	}
	panic("unreachable: operator " + op)
}

func compileApprox(p, ap path, arg any) (node, error) {
	m, ok := asMap(arg)
	if !ok {
		return nil, compileErr(p, ap, "$approx takes {value: V, tol: T}, got %s", show(arg))
	}
	for k := range m {
		if k != "value" && k != "tol" {
			return nil, compileErr(p, ap.key(k), "$approx: unknown field %q (want value and tol)", k)
		}
	}
	vv, ok := m["value"]
	if !ok {
		return nil, compileErr(p, ap, "$approx: missing value")
	}
	val, ok := toNumber(vv)
	if !ok {
		return nil, compileErr(p, ap.key("value"), "$approx: value must be a number, got %s", show(vv))
	}
	tv, ok := m["tol"]
	if !ok {
		return nil, compileErr(p, ap, "$approx: missing tol")
	}
	tol, ok := toNumber(tv)
	if !ok || tol.f < 0 || math.IsNaN(tol.f) {
		return nil, compileErr(p, ap.key("tol"), "$approx: tol must be a number >= 0, got %s", show(tv))
	}
	return approxM{val: val.f, tol: tol.f}, nil
}

func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, v := range m {
			ks, ok := k.(string)
			if !ok {
				return nil, false
			}
			out[ks] = v
		}
		return out, true
	}
	return nil, false
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Suggest returns the closest string in known to s when it is close enough
// to be a plausible typo, or "". Loaders use it for unknown field names.
func Suggest(s string, known []string) string {
	best, bestD := "", 1<<30
	for _, o := range known {
		d := levenshtein(strings.ToLower(s), strings.ToLower(o))
		if d < bestD {
			best, bestD = o, d
		}
	}
	if best != "" && bestD <= 1+utf8.RuneCountInString(best)/3 {
		return best
	}
	return ""
}

// number is a numeric value kept exactly when it is an integer that does
// not fit a float64 exactly.
type number struct {
	f   float64
	big *big.Int // non-nil only for integers outside ±2^53
}

const maxExact = 1 << 53

func toNumber(v any) (number, bool) {
	switch n := v.(type) {
	case float64:
		return number{f: n}, true
	case float32:
		return number{f: float64(n)}, true
	case int:
		return intNumber(int64(n)), true
	case int8:
		return intNumber(int64(n)), true
	case int16:
		return intNumber(int64(n)), true
	case int32:
		return intNumber(int64(n)), true
	case int64:
		return intNumber(n), true
	case uint:
		return uintNumber(uint64(n)), true
	case uint8:
		return uintNumber(uint64(n)), true
	case uint16:
		return uintNumber(uint64(n)), true
	case uint32:
		return uintNumber(uint64(n)), true
	case uint64:
		return uintNumber(n), true
	case json.Number:
		if i, ok := new(big.Int).SetString(string(n), 10); ok {
			if i.IsInt64() {
				return intNumber(i.Int64()), true
			}
			f, _ := new(big.Float).SetInt(i).Float64()
			return number{f: f, big: i}, true
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return number{}, false
		}
		return number{f: f}, true // beyond float64's range: ±Inf
	}
	return number{}, false
}

func intNumber(i int64) number {
	if i > -maxExact && i < maxExact {
		return number{f: float64(i)}
	}
	return number{f: float64(i), big: big.NewInt(i)}
}

func uintNumber(u uint64) number {
	if u < maxExact {
		return number{f: float64(u)}
	}
	return number{f: float64(u), big: new(big.Int).SetUint64(u)}
}

// equal compares two numbers by value: 5 equals 5.0, and integers beyond
// float64 precision compare exactly.
func (a number) equal(b number) bool {
	if a.big == nil && b.big == nil {
		return a.f == b.f
	}
	ra, ok1 := a.rat()
	rb, ok2 := b.rat()
	if !ok1 || !ok2 {
		return false
	}
	return ra.Cmp(rb) == 0
}

func (a number) rat() (*big.Rat, bool) {
	if a.big != nil {
		return new(big.Rat).SetInt(a.big), true
	}
	if math.IsInf(a.f, 0) || math.IsNaN(a.f) {
		return nil, false
	}
	return new(big.Rat).SetFloat64(a.f), true
}

func (a number) String() string {
	if a.big != nil {
		return a.big.String()
	}
	if a.f == math.Trunc(a.f) && math.Abs(a.f) < 1e21 {
		return strconv.FormatFloat(a.f, 'f', -1, 64) // 9007199254740992, not 9.007199254740992e+15
	}
	return strconv.FormatFloat(a.f, 'g', -1, 64)
}

// show renders a JSON value briefly for messages.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(truncate(x, 80))
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return truncate(string(x), 80) // as the model wrote it: 10.0, not 10
	}
	if n, ok := toNumber(v); ok {
		return n.String()
	}
	b, err := json.Marshal(normalizeForJSON(v))
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return truncate(string(b), 120)
}

func normalizeForJSON(v any) any {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalizeForJSON(e)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = normalizeForJSON(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = normalizeForJSON(e)
		}
		return l
	}
	return v
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// kind names the JSON type of v for messages.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any, map[any]any:
		return "object"
	}
	if _, ok := toNumber(v); ok {
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func got(v any, present bool) string {
	if !present {
		return "absent"
	}
	return show(v)
}

func miss(want string, v any, present bool) *mismatch {
	return &mismatch{msg: "want " + want + ", got " + got(v, present)}
}

// ---- literal matchers ----

type nullLit struct{}

func (nullLit) describe() string { return "null" }
func (n nullLit) match(_ *mctx, v any, present bool) *mismatch {
	if present && v == nil {
		return nil
	}
	return miss("null", v, present)
}

type boolLit bool

func (b boolLit) describe() string { return strconv.FormatBool(bool(b)) }
func (b boolLit) match(_ *mctx, v any, present bool) *mismatch {
	if x, ok := v.(bool); present && ok && x == bool(b) {
		return nil
	}
	return miss(b.describe(), v, present)
}

type strLit string

func (s strLit) describe() string { return strconv.Quote(string(s)) }
func (s strLit) match(_ *mctx, v any, present bool) *mismatch {
	if x, ok := v.(string); present && ok && x == string(s) {
		return nil
	}
	return miss(s.describe(), v, present)
}

type numLit struct{ n number }

func (n numLit) describe() string { return n.n.String() }
func (n numLit) match(_ *mctx, v any, present bool) *mismatch {
	if present {
		if x, ok := toNumber(v); ok && x.equal(n.n) {
			return nil
		}
	}
	m := miss(n.describe(), v, present)
	if _, text := v.(json.Number); n.n.big != nil && !text {
		m.msg += " (model arguments are JSON numbers, exact only up to 2^53: write the value as a string or use $approx)"
	}
	return m
}

type listLit struct{ elems []node }

func (l listLit) describe() string {
	return "[" + describeAll(l.elems, ", ") + "]"
}

func (l listLit) match(cx *mctx, v any, present bool) *mismatch {
	x, ok := v.([]any)
	if !present || !ok {
		return miss(fmt.Sprintf("list of %d", len(l.elems)), v, present)
	}
	if len(x) != len(l.elems) {
		return &mismatch{msg: fmt.Sprintf("want list of %d, got list of %d: %s", len(l.elems), len(x), show(v))}
	}
	for i, e := range l.elems {
		if m := e.match(cx, x[i], true); m != nil {
			return &mismatch{rel: relIdx(i) + m.rel, msg: m.msg}
		}
	}
	return nil
}

type objLit struct {
	keys []string // sorted, for deterministic explanations
	vals map[string]node
}

func (o objLit) describe() string {
	parts := make([]string, len(o.keys))
	for i, k := range o.keys {
		parts[i] = k + ": " + o.vals[k].describe()
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (o objLit) match(cx *mctx, v any, present bool) *mismatch {
	x, ok := asMap(v)
	if !present || !ok {
		return miss("object", v, present)
	}
	for _, k := range o.keys {
		e, has := x[k]
		if m := o.vals[k].match(cx, e, has); m != nil {
			return &mismatch{rel: relKey(k) + m.rel, msg: m.msg}
		}
	}
	if cx.strict {
		if extra := o.extra(x); len(extra) > 0 {
			return &mismatch{rel: relKey(extra[0]), msg: "unexpected argument (strict_args), got " + show(x[extra[0]])}
		}
	}
	return nil
}

// extra returns the keys of x that o does not name, sorted.
func (o objLit) extra(x map[string]any) []string {
	var out []string
	for k := range x {
		if _, ok := o.vals[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// failures counts how many of o's keys (and, when strict, extra keys) x
// gets wrong; it ranks candidate calls when explaining wrong arguments.
func (o objLit) failures(cx *mctx, x map[string]any) int {
	n := 0
	for _, k := range o.keys {
		e, has := x[k]
		if o.vals[k].match(cx, e, has) != nil {
			n++
		}
	}
	if cx.strict {
		n += len(o.extra(x))
	}
	return n
}

// ---- operators ----

type anyM struct{}

func (anyM) describe() string { return "any value" }
func (anyM) match(_ *mctx, v any, present bool) *mismatch {
	if present {
		return nil
	}
	return &mismatch{msg: "want any value, got absent"}
}

type containsM struct {
	sub   string
	isSub bool
	elem  node
}

func (c containsM) describe() string {
	if c.isSub {
		return "string containing " + strconv.Quote(c.sub)
	}
	return "list containing " + c.elem.describe()
}

func (c containsM) match(cx *mctx, v any, present bool) *mismatch {
	if !present {
		return miss(c.describe(), v, present)
	}
	switch x := v.(type) {
	case string:
		if c.isSub && strings.Contains(x, c.sub) {
			return nil
		}
	case []any:
		if c.find(cx, x) >= 0 {
			return nil
		}
		want := c.describe()
		if c.isSub {
			want = "list containing " + strconv.Quote(c.sub)
		}
		if len(x) == 0 || !strings.HasSuffix(show(v), "…") {
			return miss(want, v, present)
		}
		// The list is too long to quote whole: name the element that came
		// closest and where it differs, instead of cutting the list short.
		i, m := c.closest(cx, x)
		return &mismatch{msg: fmt.Sprintf("want %s, got a list of %d with none matching (closest, %s)", want, len(x), (&mismatch{rel: relIdx(i) + m.rel, msg: m.msg}).String())}
	}
	return miss(c.describe(), v, present)
}

// find returns the index of the first element of x that c's element
// matcher accepts, or -1.
func (c containsM) find(cx *mctx, x []any) int {
	for i, e := range x {
		if c.elem.match(cx, e, true) == nil {
			return i
		}
	}
	return -1
}

// closest returns the element of x (none matching) that c's element
// matcher comes closest to, by the keys of an object matcher it gets
// wrong (else the first), and why it does not match.
func (c containsM) closest(cx *mctx, x []any) (int, *mismatch) {
	best, bestN := 0, -1
	if o, ok := c.elem.(objLit); ok {
		for i, e := range x {
			if em, isMap := asMap(e); isMap {
				if n := o.failures(cx, em); bestN < 0 || n < bestN {
					best, bestN = i, n
				}
			}
		}
	}
	return best, c.elem.match(cx, x[best], true)
}

type oneOfM struct{ alts []node }

func (o oneOfM) describe() string { return "one of " + describeAll(o.alts, " | ") }

// describeAll is the descriptions of ns joined by sep.
func describeAll(ns []node, sep string) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.describe()
	}
	return strings.Join(parts, sep)
}

func (o oneOfM) match(cx *mctx, v any, present bool) *mismatch {
	for _, a := range o.alts {
		if a.match(cx, v, present) == nil {
			return nil
		}
	}
	if len(o.alts) == 1 {
		return o.alts[0].match(cx, v, present)
	}
	return miss(o.describe(), v, present)
}

// allM matches when every one of its matchers does; a mismatch is the
// first one's that fails.
type allM struct{ all []node }

func (a allM) describe() string { return "all of " + describeAll(a.all, " & ") }

func (a allM) match(cx *mctx, v any, present bool) *mismatch {
	for _, m := range a.all {
		if mm := m.match(cx, v, present); mm != nil {
			return mm
		}
	}
	return nil
}

type absentOrM struct{ m node }

func (a absentOrM) describe() string { return "absent or " + a.m.describe() }
func (a absentOrM) match(cx *mctx, v any, present bool) *mismatch {
	if !present {
		return nil
	}
	return a.m.match(cx, v, present)
}

type regexM struct{ re *regexp.Regexp }

func (r regexM) describe() string { return "string matching /" + r.re.String() + "/" }
func (r regexM) match(_ *mctx, v any, present bool) *mismatch {
	if x, ok := v.(string); present && ok && r.re.MatchString(x) {
		return nil
	}
	return miss(r.describe(), v, present)
}

type notM struct{ m node }

func (n notM) describe() string { return "not " + n.m.describe() }
func (n notM) match(cx *mctx, v any, present bool) *mismatch {
	if n.m.match(cx, v, present) != nil {
		return nil
	}
	if c, ok := n.m.(containsM); ok {
		switch x := v.(type) {
		case []any: // name the element that matched
			if i := c.find(cx, x); i >= 0 {
				return &mismatch{rel: relIdx(i), msg: fmt.Sprintf("want no element %s (%s), got %s", c.elem.describe(), n.describe(), show(x[i]))}
			}
		case string: // quote the text around the match, which a cut may hide
			if c.isSub && utf8.RuneCountInString(x) > 80 { // show cuts it
				at := strings.Index(x, c.sub)
				return &mismatch{msg: fmt.Sprintf("want %s, got it at character %d: %s", n.describe(), utf8.RuneCountInString(x[:at]), excerpt(x, at, len(c.sub)))}
			}
		}
	}
	return miss(n.describe(), v, present)
}

// excerpt quotes s around its bytes [at, at+n), with up to 30 characters
// either side and … where it cuts.
func excerpt(s string, at, n int) string {
	const side = 30
	before, after := []rune(s[:at]), []rune(s[at+n:])
	pre, post := "", ""
	if len(before) > side {
		before, pre = before[len(before)-side:], "…"
	}
	if len(after) > side {
		after, post = after[:side], "…"
	}
	return pre + strconv.Quote(string(before)+s[at:at+n]+string(after)) + post
}

type approxM struct{ val, tol float64 }

func (a approxM) describe() string {
	return fmt.Sprintf("number within %s of %s", strconv.FormatFloat(a.tol, 'g', -1, 64), strconv.FormatFloat(a.val, 'g', -1, 64))
}

func (a approxM) match(_ *mctx, v any, present bool) *mismatch {
	if present {
		if x, ok := toNumber(v); ok && math.Abs(x.f-a.val) <= a.tol {
			return nil
		}
	}
	return miss(a.describe(), v, present)
}
