package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/cell"
)

// CassetteAxes are the cell axes a cassette's `when` selector may name:
// every axis of package schema/cell.
var CassetteAxes = cell.Names()

// Cassette is one cassette document: the scripted model replies for one
// case (engine/backend/replay documents the format and replays it). The
// types read the format (ParseCassettes) and write it (MarshalYAML); the
// format's fields are defined once, in cassette_format.go.
type Cassette struct {
	Case      string // the case id it answers for
	File      string
	Line, Col int // of the document
	CaseLine  int // of the case field; CaseCol likewise
	CaseCol   int
	Runs      []CassetteRun
	// Todo marks a cassette still to be written (`toolward init`
	// skeletons): ParseCassettes reports it, so it never loads.
	Todo string
}

// CassetteRun is the replies for the cells its selector matches.
type CassetteRun struct {
	When      []CassetteSelector // all must match; empty matches every cell
	Turns     []CassetteTurn
	Line, Col int // of the run, for messages
}

// CassetteSelector constrains one axis to any of some values or globs.
type CassetteSelector struct {
	Axis     string
	Patterns []string
}

// CassetteTurn is one scripted model reply.
type CassetteTurn struct {
	// Role is "" (the model under test, written "assistant" or left out)
	// or CassetteRoleUser: a reply of the simulated user of a
	// conversation, which answers its requests (backend.Key.Side "user")
	// in the order such turns appear, or CassetteRoleJudge: a reply of
	// the judge (Key.Side "judge"), likewise.
	Role                          string
	Content, Thinking, DoneReason string
	// Input is, for role judge, the digest of the judge's input the
	// reply answered (record.Judgement.Input), as the recorder writes
	// it: replay refuses the turn to a request with another input (an
	// edited rubric). Empty: it answers any input.
	Input               string
	ToolCalls           []CassetteCall
	TokensIn, TokensOut int
	Latency             time.Duration
	Line                int
}

// CassetteCall is one tool call of a reply. Arguments is JSON (object key
// order as written), or raw_arguments verbatim, which need not be JSON.
type CassetteCall struct {
	Name      string
	Arguments json.RawMessage
	Line, Col int // of the name, or of the call when it has none
}

// Tools returns every tool name the cassette's replies call, with the
// elements locating each (for messages), in file order.
func (c *Cassette) Tools() []CassetteCall {
	var out []CassetteCall
	for _, r := range c.Runs {
		for _, t := range r.Turns {
			out = append(out, t.ToolCalls...)
		}
	}
	return out
}

// cassetteParser collects the mistakes of one cassette file.
type cassetteParser struct {
	file string
	errs Errors
}

func (p *cassetteParser) errf(n *yaml.Node, path []any, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: n.Line, Col: n.Column, Path: pathString(path), Msg: fmt.Sprintf(format, args...)})
}

// at returns path extended by more, as a new slice.
func at(path []any, more ...any) []any { return append(slices.Clone(path), more...) }

// ParseCassettes parses the cassettes of one file: one YAML document per
// case, documents separated by ---, empty documents skipped. It checks
// every document and returns the valid cassettes and an error per
// mistake, at file:line:col. Case ids are not checked here (see
// CheckCassettes).
func ParseCassettes(file string, src []byte) ([]*Cassette, Errors) {
	p := &cassetteParser{file: file}
	var out []*Cassette
	for doc, err := range documents(src) {
		if err != nil {
			p.errs = append(p.errs, YAMLSyntaxError(file, src, err))
			break
		}
		before := len(p.errs)
		n := deref(doc.Content[0])
		c := &Cassette{File: file, Line: n.Line, Col: n.Column}
		if cassetteShape.read(p, n, nil, c) && len(p.errs) == before {
			out = append(out, c)
		}
	}
	return out, p.errs
}

// fields returns the key and value nodes of the mapping n, reporting keys
// outside allowed (with a did-you-mean) and repeated keys. ok is false
// when n is not a mapping.
func (p *cassetteParser) fields(n *yaml.Node, path []any, what string, allowed ...string) ([][2]*yaml.Node, bool) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		p.errf(n, path, "want %s (a mapping of %s)", what, strings.Join(allowed, ", "))
		return nil, false
	}
	var out [][2]*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		switch {
		case !slices.Contains(allowed, k.Value):
			msg := fmt.Sprintf("unknown field %q", k.Value)
			if s := matchers.Suggest(k.Value, allowed); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += " (want one of " + strings.Join(allowed, ", ") + ")"
			}
			p.errf(k, at(path, k.Value), "%s", msg)
		case seen[k.Value]:
			p.errf(k, at(path, k.Value), "duplicate key %q", k.Value)
		default:
			seen[k.Value] = true
			out = append(out, [2]*yaml.Node{k, v})
		}
	}
	return out, true
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func (p *cassetteParser) str(n *yaml.Node, path []any) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		p.errf(n, path, "want a string")
		return "", false
	}
	return n.Value, true
}

func (p *cassetteParser) num(n *yaml.Node, path []any) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		p.errf(n, path, "want a number")
		return 0, false
	}
	var f float64
	if err := n.Decode(&f); err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		p.errf(n, path, "want a non-negative number, got %q", n.Value)
		return 0, false
	}
	return f, true
}

// reported says whether a misspelling of field was reported among the
// keys of mapping n (so it is not also reported missing).
func (p *cassetteParser) reported(n *yaml.Node, field string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; k != field && matchers.Suggest(k, []string{field}) == field {
			return true
		}
	}
	return false
}

func (p *cassetteParser) patterns(n *yaml.Node, path []any) []string {
	var nodes []*yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		nodes = []*yaml.Node{n}
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			p.errf(n, path, "an empty list matches nothing")
		}
		nodes = n.Content
	default:
		p.errf(n, path, "want a value, a glob or a list of them")
		return nil
	}
	out := make([]string, 0, len(nodes))
	for i, v := range nodes {
		v = deref(v)
		el := path
		if n.Kind == yaml.SequenceNode {
			el = at(path, i)
		}
		if v.Kind != yaml.ScalarNode {
			p.errf(v, el, "want a value or a glob")
			continue
		}
		if _, err := cell.Compile(v.Value, numericAxis(path)); err != nil {
			p.errf(v, el, "%v", err)
			continue
		}
		out = append(out, v.Value)
	}
	return out
}

// numericAxis reports whether the selector at path (…, "when", axis)
// is of a numeric axis.
func numericAxis(path []any) bool {
	if len(path) == 0 {
		return false
	}
	name, _ := path[len(path)-1].(string)
	a := cell.Lookup(name)
	return a != nil && a.Numeric
}

// toJSON writes a YAML value as compact JSON, keeping mapping key order.
// Scalars that YAML would type as timestamps or binary stay strings.
func (p *cassetteParser) toJSON(buf *bytes.Buffer, n *yaml.Node, path []any) bool {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := deref(n.Content[i])
			if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
				p.errf(k, path, "argument keys must be plain scalars")
				return false
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(buf, k.Value)
			buf.WriteByte(':')
			if !p.toJSON(buf, n.Content[i+1], at(path, k.Value)) {
				return false
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if !p.toJSON(buf, e, at(path, i)) {
				return false
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return p.scalarJSON(buf, n, path)
	default:
		p.errf(n, path, "unsupported YAML node")
		return false
	}
	return true
}

func (p *cassetteParser) scalarJSON(buf *bytes.Buffer, n *yaml.Node, path []any) bool {
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			p.errf(n, path, "%v", err)
			return false
		}
		buf.WriteString(strconv.FormatBool(b))
	case "!!int", "!!float":
		num, err := modelNumber(n)
		text, ok := num.(json.Number)
		if err != nil || !ok {
			p.errf(n, path, "%q is not a number JSON can hold", n.Value)
			return false
		}
		buf.WriteString(string(text))
	default:
		writeJSONString(buf, n.Value)
	}
	return true
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s)
	buf.Write(b)
}

// LoadCassettes loads every cassette file (*.yaml, *.yml) under dir,
// recursively, in lexical order, each read through ReadFile with
// MaxCassetteFileSize. It reports every mistake rather than stopping at
// the first: schema errors, a case id with cassettes in two places, and
// a directory without cassettes. It returns the cassettes that loaded.
func LoadCassettes(dir string) ([]*Cassette, Errors) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, Errors{{File: dir, Msg: "cassette directory: " + errMsg(err)}}
	}
	if !st.IsDir() {
		return nil, Errors{{File: dir, Msg: "want a cassette directory, got a file"}}
	}
	var files []string
	var errs Errors
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, &Error{File: path, Msg: errMsg(err)})
			return nil
		}
		if !d.IsDir() && isYAMLFile(path) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, &Error{File: dir, Msg: err.Error()})
	}
	cs, ferrs := loadCassetteFiles(files)
	errs = append(errs, ferrs...)
	if len(cs) == 0 && len(errs) == 0 {
		errs = append(errs, &Error{File: dir, Msg: "no cassettes (*.yaml, *.yml) in this directory"})
	}
	return cs, errs.Sort()
}

// loadCassetteFiles reads and parses files and checks that no case has
// cassettes in two places.
func loadCassetteFiles(files []string) ([]*Cassette, Errors) {
	var cs []*Cassette
	var errs Errors
	for _, f := range files {
		src, err := ReadFile(f, "cassette file", MaxCassetteFileSize)
		if err != nil {
			errs = append(errs, &Error{File: f, Msg: errMsg(err)})
			continue
		}
		got, perrs := ParseCassettes(f, src)
		cs = append(cs, got...)
		errs = append(errs, perrs...)
	}
	first := map[string]*Cassette{}
	for _, c := range cs {
		if prev, dup := first[c.Case]; dup {
			errs = append(errs, &Error{File: c.File, Line: c.CaseLine, Col: c.CaseCol, Path: "case",
				Msg: fmt.Sprintf("case %q already has a cassette at %s:%d:%d", c.Case, prev.File, prev.CaseLine, prev.CaseCol)})
			continue
		}
		first[c.Case] = c
	}
	return cs, errs
}

// CheckCassettes reports cassettes for case ids that are not among
// cases, with a did-you-mean: such a cassette is never replayed, so the
// case it was meant for misses every time.
func CheckCassettes(cs []*Cassette, cases []*Case) Errors {
	ids := make([]string, len(cases))
	known := make(map[string]bool, len(cases))
	for i, c := range cases {
		ids[i] = c.ID
		known[c.ID] = true
	}
	var errs Errors
	for _, c := range cs {
		if known[c.Case] {
			continue
		}
		msg := fmt.Sprintf("no case %q among the config's cases", c.Case)
		if s := matchers.Suggest(c.Case, ids); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		errs = append(errs, &Error{File: c.File, Line: c.CaseLine, Col: c.CaseCol, Path: "case", Msg: msg})
	}
	return errs
}

// UserTurnGap is where a run's simulated user runs out of turns.
type UserTurnGap struct {
	Have  int // the run's turns with role user
	After int // index in Turns of the model's answer that asks for one more
}

// UserTurnGap replays run r's conversation when both sides answer from r
// (see TurnGap) and reports where the simulated user's turns run out
// first, if they do: a replay then fails with cassette_miss. A run whose
// model turns run out first has no user gap. maxIterations 0 means the
// loop's default, 8; maxTurns 0 means no bound.
func (r *CassetteRun) UserTurnGap(stop string, maxIterations, maxTurns int) (UserTurnGap, bool) {
	g, ok := r.TurnGap(ReplayUser{Simulated: true, Stop: stop, MaxTurns: maxTurns}, maxIterations)
	if !ok || !g.User {
		return UserTurnGap{}, false
	}
	return UserTurnGap{Have: g.Have, After: g.After}, true
}

// ReplayUser is the user side of a replayed conversation (TurnGap).
type ReplayUser struct {
	// Replies are the case's scripted replies, sent in order after each
	// final answer; with none (and Simulated false) the conversation ends
	// at the first final answer.
	Replies []string
	// Simulated takes the user's messages from the run's turns with role
	// user, in order; one containing Stop ends the conversation.
	Simulated bool
	Stop      string
	// MaxTurns bounds the user messages the model receives, the opening
	// included (user.max_turns); 0 means no bound.
	MaxTurns int
}

// TurnGap is where a replayed conversation first asks for a turn its run
// lacks.
type TurnGap struct {
	// User is set when the simulated user's turn is missing; else the
	// model's is.
	User bool
	Have int // the run's turns of the side that ran out
	// After is the index in Turns of the model's turn before the
	// request: the answer that asks the user for more, or for the model
	// side its turn with tool calls whose results ask for another; -1
	// when the model's side asks after a user message.
	After int
	// Message is the user message (0 the opening) left without a model
	// turn when the model side runs out; Reply is its index among the
	// run's turns when it is one with role user, else -1.
	Message, Reply int
}

// TurnGap replays run r's conversation as the agent loop meets it: the
// model's turns in order, a reply without tool calls being a final
// answer, after which the user u goes on or the conversation ends (a
// script's end, the stop marker, the answer to the MaxTurns-th message),
// and at most maxIterations model turns per user message (0 means the
// loop's default, 8). It reports the first turn the loop asks for that
// the run does not have, if any: a replay then fails with cassette_miss.
func (r *CassetteRun) TurnGap(u ReplayUser, maxIterations int) (TurnGap, bool) {
	if maxIterations <= 0 {
		maxIterations = 8
	}
	var model, user []int // indexes in r.Turns of each side's turns
	for i, t := range r.Turns {
		switch t.Role {
		case CassetteRoleUser:
			user = append(user, i)
		case CassetteRoleJudge:
		default:
			model = append(model, i)
		}
	}
	message, reply, after := 0, -1, -1 // the user message being answered; its turn in r; the model's last turn
	next, inTurn := 0, 0               // model turns used; model turns spent on the current message
	for inTurn < maxIterations {
		if next >= len(model) {
			return TurnGap{Have: len(model), After: after, Message: message, Reply: reply}, true
		}
		i := model[next]
		next, inTurn, after = next+1, inTurn+1, i
		if len(r.Turns[i].ToolCalls) > 0 {
			continue
		}
		// The user is asked for its next message, which is sent unless
		// it stops or would go past MaxTurns.
		switch {
		case u.Simulated:
			if message >= len(user) {
				return TurnGap{User: true, Have: len(user), After: i}, true
			}
			reply = user[message]
			if u.Stop != "" && strings.Contains(r.Turns[reply].Content, u.Stop) {
				return TurnGap{}, false
			}
		case message < len(u.Replies):
			reply = -1
		default:
			return TurnGap{}, false
		}
		if u.MaxTurns > 0 && message+1 >= u.MaxTurns {
			return TurnGap{}, false
		}
		message, inTurn, after = message+1, 0, -1
	}
	return TurnGap{}, false
}

// UncoveredCases returns the cases that no cassette in cs answers for:
// replaying them fails every run as a cassette miss.
func UncoveredCases(cs []*Cassette, cases []*Case) []*Case {
	have := make(map[string]bool, len(cs))
	for _, c := range cs {
		have[c.Case] = true
	}
	var out []*Case
	for _, c := range cases {
		if !have[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

func isYAMLFile(p string) bool {
	ext := strings.ToLower(filepath.Ext(p))
	return ext == ".yaml" || ext == ".yml"
}

// IsCatalogFile reports whether src reads as a tool catalog of the
// bundled server (`- name: …` entries, as in fixtures/catalog and the
// catalogs `toolward import bfcl` writes) rather than cases: its first
// non-empty document is a list whose first element is a mapping with a
// name key and no id key.
func IsCatalogFile(src []byte) bool {
	top := firstDocument(src)
	if top == nil || top.Kind != yaml.SequenceNode || len(top.Content) == 0 {
		return false
	}
	keys := mappingKeys(deref(top.Content[0]))
	return keys["name"] && !keys["id"]
}

// IsCassetteFile reports whether src reads as cassettes rather than
// cases: its first non-empty document is a mapping with a runs or case
// key and no id key. A file that does not parse is not a cassette file.
func IsCassetteFile(src []byte) bool {
	keys := mappingKeys(firstDocument(src))
	return !keys["id"] && (keys["runs"] || keys["case"])
}

// firstDocument returns the top node of the first non-empty YAML document
// of src, or nil when there is none or it does not parse.
func firstDocument(src []byte) *yaml.Node {
	for doc, err := range documents(src) {
		if err == nil {
			return deref(doc.Content[0])
		}
	}
	return nil
}

// documents yields every non-empty document of src (YAML documents
// separated by ---; one holding only null is empty), then the error of
// one that does not parse, which ends them: the decoder cannot
// resynchronise after a syntax error.
func documents(src []byte) iter.Seq2[*yaml.Node, error] {
	return func(yield func(*yaml.Node, error) bool) {
		dec := yaml.NewDecoder(bytes.NewReader(src))
		for {
			doc := new(yaml.Node)
			err := dec.Decode(doc)
			switch {
			case errors.Is(err, io.EOF):
				return
			case err != nil:
				yield(nil, err)
				return
			case len(doc.Content) == 0 || doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].ShortTag() == "!!null":
				continue
			}
			if !yield(doc, nil) {
				return
			}
		}
	}
}

// mappingKeys returns the keys of a mapping node (none for nil or any
// other node).
func mappingKeys(m *yaml.Node) map[string]bool {
	keys := map[string]bool{}
	if m == nil || m.Kind != yaml.MappingNode {
		return keys
	}
	for i := 0; i < len(m.Content); i += 2 {
		keys[m.Content[i].Value] = true
	}
	return keys
}

// CassetteRoleUser is CassetteTurn.Role for a reply of the simulated user.
const CassetteRoleUser = "user"

// CassetteRoleJudge is CassetteTurn.Role for a reply of the judge of a
// judged answer ({$judge: …}): such turns answer the run's judge
// requests (backend.Key.Side "judge") in the order they appear, and a
// replayed conversation (TurnGap) passes over them.
const CassetteRoleJudge = "judge"
