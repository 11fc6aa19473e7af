package schema

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/cell"
)

// LoadCases loads every case matched by patterns (globs with ** relative
// to the working directory, see Glob), in file order and, within a file,
// document order. It does not stop at the first bad file: it returns the
// cases that loaded and, if anything was wrong (a pattern matching
// nothing, a bad document, duplicate ids across files), an Errors listing
// every problem. Callers that run cases should refuse to run when the
// error is non-nil.
func LoadCases(patterns []string) ([]*Case, error) {
	var files []string
	var errs Errors
	seen := map[string]bool{}
	for _, p := range patterns {
		m, err := Glob(p)
		if err != nil {
			errs = append(errs, &Error{File: p, Msg: fmt.Sprintf("bad pattern: %v", err)})
			continue
		}
		if len(m) == 0 {
			errs = append(errs, &Error{File: p, Msg: "pattern matches no file; " + NoMatchHint(p, "")})
		}
		for _, f := range m {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	cases, cerrs := loadCaseFiles(files)
	errs = append(errs, cerrs...)
	return cases, errs.Sort().err()
}

// loadCaseFiles loads files in parallel and checks ids across them.
func loadCaseFiles(files []string) ([]*Case, Errors) {
	type result struct {
		cases []*Case
		errs  Errors
	}
	results := make([]result, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	workers := min(runtime.GOMAXPROCS(0), len(files))
	for range workers {
		wg.Go(func() {
			for i := range next {
				src, err := ReadFile(files[i], "case file", MaxCaseFileSize)
				if err != nil {
					results[i].errs = Errors{{File: files[i], Msg: errMsg(err)}}
					continue
				}
				results[i].cases, results[i].errs = ParseCases(files[i], src)
			}
		})
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	var cases []*Case
	var errs Errors
	for _, r := range results {
		cases = append(cases, r.cases...)
		errs = append(errs, r.errs...)
	}
	errs = append(errs, duplicateIDs(cases)...)
	return cases, errs
}

func duplicateIDs(cases []*Case) Errors {
	byID := map[string][]*Case{}
	for _, c := range cases {
		byID[c.ID] = append(byID[c.ID], c)
	}
	var errs Errors
	for id, cs := range byID {
		if len(cs) < 2 {
			continue
		}
		for i, c := range cs {
			errs = append(errs, &Error{File: c.File, Line: c.idLine, Col: c.idCol, Path: "id",
				Msg: fmt.Sprintf("duplicate case id %q (also at %s)", id, otherPlaces(cs, i))})
		}
	}
	return errs
}

// maxOtherPlaces is how many other places of a duplicate id its error
// names: naming them all would make n duplicates n² long.
const maxOtherPlaces = 3

// otherPlaces names where the cases of cs other than cs[i] are, the
// first maxOtherPlaces of them and a count of the rest.
func otherPlaces(cs []*Case, i int) string {
	var others []string
	for j, o := range cs {
		if len(others) == maxOtherPlaces {
			break
		}
		if j != i {
			others = append(others, fmt.Sprintf("%s:%d:%d", o.File, o.idLine, o.idCol))
		}
	}
	s := strings.Join(others, ", ")
	if rest := len(cs) - 1 - len(others); rest > 0 {
		s += fmt.Sprintf(" and %d more", rest)
	}
	return s
}

// ParseCases parses the case documents of one YAML file (documents are
// separated by ---; empty documents are skipped) and checks each against
// the case schema, its matchers, its needs and its golden trajectory. It
// returns the valid cases and an error per mistake.
func ParseCases(file string, src []byte) ([]*Case, Errors) {
	var cases []*Case
	var errs Errors
	for doc, err := range documents(src) {
		if err != nil {
			errs = append(errs, YAMLSyntaxError(file, src, err))
			break
		}
		c, cerrs := parseCase(file, doc)
		errs = append(errs, cerrs...)
		if c != nil {
			cases = append(cases, c)
		}
	}
	return cases, errs
}

// maxLine bounds the line numbers of src: one more than its line breaks
// (\n, \r, and the Unicode ones YAML accepts), counting \r\n twice.
func maxLine(src []byte) int {
	n := 1 + bytes.Count(src, []byte("\n")) + bytes.Count(src, []byte("\r"))
	for _, br := range []string{"\u0085", "\u2028", "\u2029"} {
		n += bytes.Count(src, []byte(br))
	}
	return n
}

// parserError reports whether a yaml.v3 message comes from its parser
// rather than its scanner.
func parserError(msg string) bool {
	switch msg {
	case "did not find expected ',' or ']'", "did not find expected ',' or '}'", "did not find expected '-' indicator",
		"did not find expected <document start>", "did not find expected <stream-start>", "did not find expected key",
		"did not find expected node content", "found duplicate %TAG directive", "found duplicate %YAML directive",
		"found incompatible YAML document", "found undefined tag handle":
		return true
	}
	return false
}

// GoldenCell is the matrix cell a golden trajectory is scored in: the
// defaults of #Config (temperature 0, tools "needed", confirm "auto",
// descriptions "default") with no model named. when entries that select
// it apply; entries naming a model or another value do not.
var GoldenCell = matchers.Cell{Temperature: 0, Tools: "needed", Confirm: "auto", Descriptions: "default"}

// caseIssue is a problem at a path of a case document.
type caseIssue struct {
	elems    []any    // where to point
	path     []any    // what to name (defaults to elems)
	msg      string   // message
	missing  []string // the fields a "missing field" issue is about
	suggests string   // the field an "unknown field" issue suggests
}

var reID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/-]*$`)

// parseCase checks one document against the case JSON Schema
// (formatIssues), then the rules it cannot state (shapeIssues and the
// checks below), and decodes it.
func parseCase(file string, doc *yaml.Node) (*Case, Errors) {
	root := doc.Content[0]
	errAt := func(is caseIssue) *Error {
		n := nodeAt(doc, is.elems)
		p := is.path
		if p == nil {
			p = is.elems
		}
		return &Error{File: file, Line: n.Line, Col: n.Column, Path: pathString(p), Msg: is.msg}
	}
	v, err := yamlValue(doc)
	if err != nil {
		var ne *nodeError
		if errors.As(err, &ne) {
			return nil, Errors{{File: file, Line: ne.node.Line, Col: ne.node.Column, Msg: ne.msg}}
		}
		return nil, Errors{{File: file, Line: root.Line, Col: root.Column, Msg: err.Error()}}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errors{{File: file, Line: root.Line, Col: root.Column, Msg: fmt.Sprintf("want a case (a mapping with id, prompt, expect, …), got %s", kindOf(v))}}
	}
	issues := formatIssues(m)
	var c *Case
	if len(issues) == 0 {
		if c, err = buildCase(m); err != nil {
			return nil, Errors{{File: file, Line: root.Line, Col: root.Column, Msg: err.Error()}}
		}
		issues = c.shapeIssues()
	}
	if len(issues) > 0 {
		errs := make(Errors, len(issues))
		for i, is := range issues {
			errs[i] = errAt(is)
		}
		slices.SortStableFunc(errs, func(a, b *Error) int { return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col)) })
		// The expectations are independent of the other fields: report
		// their mistakes in the same pass.
		if raw, ok := m["expect"].(map[string]any); ok {
			raw, _ = splitWhenGoldens(raw)
			if _, err := matchers.CompileExpect(raw); err != nil {
				errs = append(errs, compileErrors(file, doc, err)...)
			}
		}
		return nil, errs
	}
	c.modelGoldenArgs(doc)
	c.File = file
	c.Line, c.Col = root.Line, root.Column
	idNode := nodeAt(doc, []any{"id"})
	c.idLine, c.idCol = idNode.Line, idNode.Column

	var errs Errors
	exp, err := matchers.CompileExpect(c.Expect)
	if err != nil {
		return nil, compileErrors(file, doc, err)
	}
	c.Expectation = exp
	needs := map[string]bool{}
	for _, n := range c.Needs {
		needs[n] = true
	}
	for i, a := range c.Avoid {
		if needs[a] {
			errs = append(errs, errAt(caseIssue{elems: []any{"avoid", i}, msg: fmt.Sprintf("tool %q is in needs too: a needed tool is always offered", a)}))
		}
	}
	added := map[string]bool{}
	if c.User != nil {
		for _, a := range c.User.AddTools {
			for _, tn := range a.Tools {
				added[tn] = true
			}
		}
	}
	for _, ref := range exp.Tools() {
		if !needs[ref.Tool] && !added[ref.Tool] {
			msg := fmt.Sprintf("tool %q is not in needs", ref.Tool)
			if len(c.Needs) == 0 {
				msg = fmt.Sprintf("tool %q is not in needs (the case has no needs)", ref.Tool)
			}
			errs = append(errs, errAt(caseIssue{elems: ref.Elems, msg: msg}))
		}
	}
	for _, ref := range exp.ProbeRefs() {
		if ref.Equals == matchers.EqualsGolden && c.Golden == nil {
			el := append(slices.Clone(ref.Elems[:len(ref.Elems)-1]), "equals")
			errs = append(errs, errAt(caseIssue{elems: el, msg: "equals: golden needs the case's golden: its calls are replayed on a fresh server to give the state to compare with"}))
		}
	}
	for _, el := range exp.GoldenResultRefs() {
		if c.Golden == nil {
			errs = append(errs, errAt(caseIssue{elems: el, msg: "contains_golden_results needs the case's golden: its calls are replayed on a fresh server to give the results to look for"}))
		}
	}
	if u := c.User; u != nil {
		for i, a := range u.AddTools {
			at := []any{"user", "add_tools", i}
			switch {
			case u.Simulated():
				errs = append(errs, errAt(caseIssue{elems: at, msg: "add_tools is for scripted replies: a simulated user's turns are not known in advance"}))
			case a.Turn > len(u.Replies):
				errs = append(errs, errAt(caseIssue{elems: append(at, "turn"), msg: fmt.Sprintf("turn %d, but the conversation has %d replies (turn 1 is the first reply)", a.Turn, len(u.Replies))}))
			}
			for _, k := range slices.Sorted(maps.Keys(a.Descriptions)) {
				if !slices.Contains(a.Tools, k) {
					errs = append(errs, errAt(caseIssue{elems: append(at, "descriptions", k), msg: fmt.Sprintf("a description for %q, which is not among this entry's tools", k)}))
				}
			}
			for j, tn := range a.Tools {
				if needs[tn] {
					errs = append(errs, errAt(caseIssue{elems: append(at, "tools", j), msg: fmt.Sprintf("tool %q is in needs, offered from the start", tn)}))
				}
			}
		}
	}
	if n, at := exp.TurnRules(); n > 0 {
		switch max := c.User.Turns(); {
		case c.User == nil:
			errs = append(errs, errAt(caseIssue{elems: at, msg: "turns judges the user turns of a conversation: add a user block (replies or instructions), or use calls and answer"}))
		case n > max:
			errs = append(errs, errAt(caseIssue{elems: append(at, max), msg: fmt.Sprintf("rules for %d user turns, but the conversation has at most %d (%s)", n, max, c.User.turnsFrom())}))
		}
	}
	if len(c.Calibration) > 0 {
		var judged []string
		for _, j := range exp.Judged(GoldenCell) {
			judged = append(judged, j.Where)
		}
		for i, l := range c.Calibration {
			if !slices.Contains(judged, l.At()) {
				msg := fmt.Sprintf("calibration is for a judged answer, but %s has no {$judge: …} in the default cell", l.At())
				if len(judged) > 0 {
					msg += " (judged: " + strings.Join(judged, ", ") + ")"
				}
				errs = append(errs, errAt(caseIssue{elems: []any{"calibration", i}, msg: msg}))
			}
		}
	}
	goldenOK := func(g *Golden, at []any) bool {
		switch {
		case c.User == nil && len(g.Turns) > 0:
			errs = append(errs, errAt(caseIssue{elems: append(slices.Clone(at), "turns"), msg: "golden turns are for a conversation (a case with a user block); give calls and answer"}))
		case c.User != nil && len(g.Turns) == 0:
			errs = append(errs, errAt(caseIssue{elems: at, msg: "a conversation's golden has turns: one {calls, answer} per user turn, the opening first"}))
		case c.User != nil && !c.User.Simulated() && len(g.Turns) != c.User.Turns():
			errs = append(errs, errAt(caseIssue{elems: append(slices.Clone(at), "turns"), msg: fmt.Sprintf("want %d turns (the opening and %d replies), got %d", c.User.Turns(), len(c.User.Replies), len(g.Turns))}))
		case c.User.Simulated() && len(g.Turns) > c.User.Turns():
			errs = append(errs, errAt(caseIssue{elems: append(slices.Clone(at), "turns"), msg: fmt.Sprintf("want at most %d turns (user.max_turns), got %d", c.User.Turns(), len(g.Turns))}))
		default:
			return true
		}
		return false
	}
	if c.Golden != nil && goldenOK(c.Golden, []any{"golden"}) {
		if vd := exp.Score(c.Golden.trace(), GoldenCell); !vd.Pass || len(vd.TextCalls) > 0 {
			for _, r := range goldenReasons(vd) {
				errs = append(errs, errAt(caseIssue{elems: goldenElems([]any{"golden"}, c.Golden, r), path: []any{"golden"},
					msg: fmt.Sprintf("rejected (%s): %s", r.Code, r.Detail)}))
			}
		}
	}
	whens, _ := c.Expect["when"].([]any)
	for _, wg := range c.WhenGoldens {
		at := []any{"expect", "when", wg.When, "golden"}
		if !goldenOK(&wg.Golden, at) {
			continue
		}
		entry, _ := whens[wg.When].(map[string]any)
		cell := WhenCell(entry)
		vd := exp.Score(wg.Golden.trace(), cell)
		for _, r := range goldenReasons(vd) {
			msg := fmt.Sprintf("rejected in cell %s (%s): %s", cellString(cell), r.Code, r.Detail)
			if r.Code == matchers.ReasonAnswerMismatch {
				from := "expect.answer"
				if i := exp.Override(cell, "answer"); i >= 0 {
					from = fmt.Sprintf("expect.when[%d].answer", i)
				}
				msg += " (" + from + ")"
			}
			errs = append(errs, errAt(caseIssue{elems: goldenElems(at, &wg.Golden, r), path: at, msg: msg}))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	c.RunDigest = RunDigest(c)
	c.Warnings = whenWithoutGolden(c, whens, errAt)
	return c, nil
}

// whenWithoutGolden warns about each when entry that overrides the
// expectations (any field but its cell selector) without a golden of its
// own: validate proves the base golden passes the base expectations and
// each entry's golden passes the entry, so nothing proves a run can
// pass such an entry (an answer of {$not: {$any: true}} never can).
func whenWithoutGolden(c *Case, whens []any, errAt func(caseIssue) *Error) Errors {
	has := map[int]bool{}
	for _, wg := range c.WhenGoldens {
		has[wg.When] = true
	}
	selector := cell.ScoringNames()
	var out Errors
	for i, w := range whens {
		entry, _ := w.(map[string]any)
		if has[i] {
			continue
		}
		var overrides []string
		for k := range entry {
			if k != "golden" && !slices.Contains(selector, k) {
				overrides = append(overrides, k)
			}
		}
		if len(overrides) == 0 {
			continue
		}
		slices.Sort(overrides)
		e := errAt(caseIssue{elems: []any{"expect", "when", i}, msg: fmt.Sprintf(
			"overrides %s in cell %s without a golden of its own: nothing shows a run can pass it; add golden: {calls, answer} to the entry",
			strings.Join(overrides, ", "), cellString(WhenCell(entry)))})
		out = append(out, e)
	}
	return out
}

// Opening is the user message a conversation starts from: the case's
// prompt, or the last user message of its scripted prefix.
func (c *Case) Opening() string {
	if len(c.Messages) == 0 {
		return c.Prompt
	}
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "user" {
			return c.Messages[i].Content
		}
	}
	return ""
}

// modelGoldenArgs gives the arguments of c's golden and setup calls, decoded with
// the rest of the document (numbers as int64 or float64), the form a
// model's take: every number a json.Number with the text as written
// (modelValue), as the engine decodes a model's arguments. So a golden
// 10.0 is rejected by $int: 10 in validate as the same call from a model
// is in a run.
func (c *Case) modelGoldenArgs(doc *yaml.Node) {
	fixCalls := func(calls []GoldenCall, list []any) {
		for i := range calls {
			n := valueAt(doc, append(slices.Clone(list), i, "args"))
			if n == nil {
				continue
			}
			if v, err := modelValue(n); err == nil {
				calls[i].Args, _ = v.(map[string]any)
			}
		}
	}
	fix := func(g *Golden, at []any) {
		fixCalls(g.Calls, append(slices.Clone(at), "calls"))
		for i := range g.Turns {
			fixCalls(g.Turns[i].Calls, append(slices.Clone(at), "turns", i, "calls"))
		}
	}
	// Setup calls go to the server as written too (BFCL's initial_config
	// tells 150.0 from 150 in the results it gives).
	fixCalls(c.Setup, []any{"setup"})
	if c.Golden != nil {
		fix(c.Golden, []any{"golden"})
	}
	for i := range c.WhenGoldens {
		wg := &c.WhenGoldens[i]
		fix(&wg.Golden, []any{"expect", "when", wg.When, "golden"})
	}
}

// GoldenRejections scores the goldens of c (its own and those of its
// when entries, each in its cell) with every call's arguments passed
// through args first, as a backend that re-encodes the model's arguments
// would hand them over, and returns one line per reason a golden is then
// rejected ("golden: wrong_args: calls[0].args.n: want …, got …"); none
// when they all pass. c must be a loaded case (with its Expectation).
func (c *Case) GoldenRejections(args func(map[string]any) map[string]any) []string {
	var out []string
	score := func(g *Golden, cell matchers.Cell, where string) {
		tr := g.trace()
		for i := range tr.Calls {
			tr.Calls[i].Args = args(tr.Calls[i].Args)
		}
		for _, r := range c.Expectation.Score(tr, cell).Reasons {
			out = append(out, fmt.Sprintf("%s: %s: %s", where, r.Code, r.Detail))
		}
	}
	if c.Golden != nil {
		score(c.Golden, GoldenCell, "golden")
	}
	whens, _ := c.Expect["when"].([]any)
	for _, wg := range c.WhenGoldens {
		entry, _ := whens[wg.When].(map[string]any)
		score(&wg.Golden, WhenCell(entry), fmt.Sprintf("expect.when[%d].golden", wg.When))
	}
	return out
}

// compileErrors places the errors of matchers.CompileExpect in the
// document.
func compileErrors(file string, doc *yaml.Node, err error) Errors {
	var ces matchers.CompileErrors
	if !errors.As(err, &ces) {
		var ce *matchers.CompileError
		if !errors.As(err, &ce) {
			n := nodeAt(doc, []any{"expect"})
			return Errors{{File: file, Line: n.Line, Col: n.Column, Path: "expect", Msg: err.Error()}}
		}
		ces = matchers.CompileErrors{ce}
	}
	out := make(Errors, len(ces))
	for i, ce := range ces {
		n := nodeAt(doc, ce.Elems)
		out[i] = &Error{File: file, Line: n.Line, Col: n.Column, Path: ce.Path, Msg: ce.Msg}
	}
	return out
}

var (
	reCallIdx = regexp.MustCompile(`^calls\[(\d+)\]`)
	reTurnIdx = regexp.MustCompile(`^expect\.turns\[(\d+)\]`)
)

// goldenElems points a rejection of the golden g at elems at the golden
// call or answer it is about (for a conversation's golden, in its turns).
func goldenElems(elems []any, g *Golden, r matchers.Reason) []any {
	at := func(more ...any) []any { return append(slices.Clone(elems), more...) }
	if len(g.Turns) > 0 {
		last := len(g.Turns) - 1
		if m := reCallIdx.FindStringSubmatch(r.Detail); m != nil {
			i, _ := strconv.Atoi(m[1])
			for t := range g.Turns {
				if i < len(g.Turns[t].Calls) {
					return at("turns", t, "calls", i)
				}
				i -= len(g.Turns[t].Calls)
			}
		}
		if m := reTurnIdx.FindStringSubmatch(r.Detail); m != nil {
			if t, _ := strconv.Atoi(m[1]); t <= last {
				return at("turns", t)
			}
		}
		if r.Code == matchers.ReasonAnswerMismatch || r.Code == matchers.ReasonUnparsedCall {
			return at("turns", last, "answer")
		}
		return at("turns")
	}
	if r.Code == matchers.ReasonAnswerMismatch || r.Code == matchers.ReasonUnparsedCall {
		return at("answer")
	}
	if m := reCallIdx.FindStringSubmatch(r.Detail); m != nil {
		i, _ := strconv.Atoi(m[1])
		return at("calls", i)
	}
	return at()
}

// goldenReasons returns why a golden is rejected: the scorer's reasons,
// and unparsed_call when its answer holds a tool call written as text,
// which no known-good answer does, even where the scorer lets it pass.
func goldenReasons(vd matchers.Verdict) []matchers.Reason {
	if r, ok := matchers.UnparsedCallReason(vd); ok {
		return append(vd.Reasons, r)
	}
	return vd.Reasons
}

// trace is the golden trajectory as the scorer sees a run's. A
// conversation's golden turns become its answered user turns, each
// turn's calls tagged with the turn.
func (g *Golden) trace() matchers.Trace {
	tr := matchers.Trace{Answer: g.Answer}
	add := func(calls []GoldenCall, turn int) {
		for _, gc := range calls {
			args := gc.Args
			if args == nil {
				args = map[string]any{}
			}
			tr.Calls = append(tr.Calls, matchers.Call{Tool: gc.Tool, Args: args, UserTurn: turn})
		}
	}
	add(g.Calls, 0)
	for i, t := range g.Turns {
		add(t.Calls, i)
		tr.Answers = append(tr.Answers, t.Answer)
		tr.Answer = t.Answer
	}
	return tr
}

// WhenCell returns the cell the golden of a `when` entry is scored in:
// for each selector the entry names (matchers.WhenSelectors), its first
// value; the other axes as in GoldenCell. Every `when` entry that selects
// the cell applies when it is scored, as in a run. entry is the entry as
// decoded from YAML or JSON; a selector of the wrong type is ignored
// (matchers.CompileExpect reports it).
func WhenCell(entry map[string]any) matchers.Cell {
	c := GoldenCell
	for _, name := range matchers.WhenSelectors {
		v, ok := entry[name]
		if l, isList := v.([]any); isList {
			if len(l) == 0 {
				continue
			}
			v = l[0]
		}
		if !ok {
			continue
		}
		if s, ok := selectorValue(v); ok {
			if next, err := c.With(name, s); err == nil {
				c = next
			}
		}
	}
	return c
}

// selectorValue is a when selector's value as a cell formats it: a
// string as it is, a number in cell.FormatFloat's spelling.
func selectorValue(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return cell.FormatFloat(x), true
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return cell.FormatFloat(f), true
		}
	}
	return "", false
}

// cellString names a cell in messages: model=…, temperature=…, tools=…,
// confirm=…, descriptions=… (model omitted when none).
func cellString(c matchers.Cell) string {
	return cell.Join(c, " ", "=", false, matchers.WhenSelectors...)
}

// splitWhenGoldens returns expect without the golden of its when entries
// (a copy when there were any, so that the matchers never see them) and
// those goldens by entry index.
func splitWhenGoldens(expect map[string]any) (map[string]any, map[int]any) {
	whens, _ := expect["when"].([]any)
	var goldens map[int]any
	var stripped []any
	for i, w := range whens {
		wm, ok := w.(map[string]any)
		if !ok {
			continue
		}
		g, ok := wm["golden"]
		if !ok {
			continue
		}
		if goldens == nil {
			goldens = map[int]any{}
			stripped = slices.Clone(whens)
		}
		goldens[i] = g
		nm := maps.Clone(wm)
		delete(nm, "golden")
		stripped[i] = nm
	}
	if goldens == nil {
		return expect, nil
	}
	out := maps.Clone(expect)
	out["when"] = stripped
	return out, goldens
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	case int64, float64, json.Number:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// shapeIssues checks the rules of a case's shape that a JSON Schema
// cannot state, or states only with a message no one could act on:
// what user.max_turns depends on, a golden's turns beside its calls
// (the one-of of #Golden is about answer), and a skeleton's golden.
func (c *Case) shapeIssues() []caseIssue {
	var is []caseIssue
	if c.User != nil && c.User.MaxTurns != 0 && !c.User.Simulated() {
		is = append(is, caseIssue{elems: []any{"user", "max_turns"}, msg: "max_turns is for a simulated user (instructions); scripted replies end with the last reply"})
	}
	golden := func(g *Golden, el []any) {
		if len(g.Turns) > 0 && g.Calls != nil {
			is = append(is, caseIssue{elems: append(slices.Clone(el), "calls"), msg: "a golden with turns has its calls and answers in the turns, not calls"})
		}
		if todo := strings.TrimSpace(g.Todo); todo != "" {
			is = append(is, caseIssue{elems: el, msg: fmt.Sprintf("fill in the golden: %s (then delete todo)", todo)})
		} else if g.Todo != "" {
			is = append(is, caseIssue{elems: append(slices.Clone(el), "todo"), msg: "want a note saying what to fill in, got " + showVal(g.Todo)})
		}
	}
	if c.Golden != nil {
		golden(c.Golden, []any{"golden"})
	}
	for _, wg := range c.WhenGoldens {
		golden(&wg.Golden, []any{"expect", "when", wg.When, "golden"})
	}
	return is
}

func strs(v any) []string {
	l, _ := v.([]any)
	if l == nil {
		return nil
	}
	out := make([]string, len(l))
	for i, x := range l {
		out[i], _ = x.(string)
	}
	return out
}

// buildCase decodes a checked case mapping into its types (decodeFields)
// and takes the goldens of when entries out of expect.
func buildCase(m map[string]any) (*Case, error) {
	c := &Case{}
	if err := decodeFields(reflect.ValueOf(c).Elem(), m, nil); err != nil {
		return nil, err
	}
	var goldens map[int]any
	c.Expect, goldens = splitWhenGoldens(c.Expect)
	for _, i := range slices.Sorted(maps.Keys(goldens)) {
		g, _ := goldens[i].(map[string]any)
		wg := WhenGolden{When: i}
		if err := decodeFields(reflect.ValueOf(&wg.Golden).Elem(), g, []any{"expect", "when", i, "golden"}); err != nil {
			return nil, err
		}
		c.WhenGoldens = append(c.WhenGoldens, wg)
	}
	return c, nil
}

// ValidCaseID reports whether id is a case id a case file may have
// (letters, digits and _ . : / -, starting with a letter or digit).
// Importers check ids with it, so that what they write validates.
func ValidCaseID(id string) bool { return reID.MatchString(id) }
