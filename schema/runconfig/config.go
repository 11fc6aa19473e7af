package runconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"cuelang.org/go/cue"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"

	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
)

// Load reads a run config (a plain CUE file), unifies it with the
// embedded #schema.Config in Go (so closedness applies whether or not the file
// mentions #schema.Config), fills defaults, decodes it and checks what CUE
// cannot: file references (case globs, description sets, catalogs) that
// resolve relative to the working directory, and cross-field rules. The
// error is an schema.Errors with file:line:col positions.
func Load(path string) (*schema.Config, error) {
	src, err := schema.ReadFile(path, "config", schema.MaxConfigFileSize)
	if err != nil {
		return nil, schema.Errors{{File: path, Msg: schema.ErrMsg(err)}}
	}
	cfg, user, errs := decodeConfig(path, src)
	if len(errs) > 0 {
		return nil, errs.Sort()
	}
	cfg.File = path
	ollamaHost(cfg, user)
	errs = checkConfig(path, cfg, user)
	if len(errs) > 0 {
		return nil, errs.Sort()
	}
	return cfg, nil
}

// positions resolves paths in the user's own CUE value to positions.
type positions struct {
	file string
	v    cue.Value
}

func cuePath(elems []any) cue.Path {
	sels := make([]cue.Selector, 0, len(elems))
	for _, e := range elems {
		switch e := e.(type) {
		case int:
			sels = append(sels, cue.Index(e))
		case string:
			sels = append(sels, cue.Str(e))
		}
	}
	return cue.MakePath(sels...)
}

// at returns an schema.Error at the nearest node of elems (or an ancestor) in
// the user's file.
func (p positions) at(elems []any, msg string) *schema.Error {
	e := &schema.Error{File: p.file, Line: 1, Col: 1, Path: matchers.PathString(elems), Msg: msg}
	for n := len(elems); n >= 0; n-- {
		if !p.v.Exists() {
			break
		}
		pos := p.v.LookupPath(cuePath(elems[:n])).Pos()
		if pos.IsValid() && pos.Filename() == p.file {
			e.Line, e.Col = pos.Line(), pos.Column()
			break
		}
	}
	return e
}

// elemPositions returns the position of each element of the list at
// elems in the user's value, in one pass (nil when it is not a list).
func (p positions) elemPositions(elems []any) []token.Pos {
	if !p.v.Exists() {
		return nil
	}
	it, err := p.v.LookupPath(cuePath(elems)).List()
	if err != nil {
		return nil
	}
	var out []token.Pos
	for it.Next() {
		out = append(out, it.Value().Pos())
	}
	return out
}

var reDisjHead = regexp.MustCompile(`^\d+ errors in empty disjunction:?$`)

// decodeConfig compiles src, unifies it with #schema.Config and decodes it.
func decodeConfig(file string, src []byte) (*schema.Config, positions, schema.Errors) {
	if err := load(); err != nil {
		return nil, positions{}, schema.Errors{{File: file, Msg: err.Error()}}
	}
	if errs := checkCUESize(file, src); len(errs) > 0 {
		return nil, positions{}, errs
	}
	withTags, terr := tagged(file, src)
	if terr != nil {
		return nil, positions{}, schema.Errors{terr}
	}
	compiled.mu.Lock()
	defer compiled.mu.Unlock()
	if withTags != nil {
		src = withTags
	}
	user := compiled.ctx.CompileBytes(src, cue.Filename(file))
	pos := positions{file: file, v: user}
	if err := user.Err(); err != nil {
		return nil, pos, translate(file, pos, err)
	}
	u := compiled.config.Unify(user)
	if err := u.Validate(cue.Concrete(true), cue.All()); err != nil {
		return nil, pos, translate(file, pos, err)
	}
	js, err := u.MarshalJSON()
	if err != nil {
		return nil, pos, translate(file, pos, err)
	}
	var cfg schema.Config
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		// The CUE schema and the Go types disagree: a bug in toolward.
		return nil, pos, schema.Errors{{File: file, Line: 1, Col: 1, Msg: "internal error: schema and Go types disagree: " + err.Error()}}
	}
	return &cfg, pos, nil
}

// cueIssue is one CUE error reduced to what translate needs.
type cueIssue struct {
	elems       []any
	format      string   // CUE's message format
	args        []string // its arguments, rendered
	msg         string   // the rendered message
	pos         token.Pos
	fromDefault bool // raised by a default branch (*x) of a disjunction
}

// translate turns CUE's errors into one actionable schema.Error per failing
// node: the header lines of failed disjunctions go, complaints of default
// branches (`*[1]` in `*[1] | [...int]`) the user's value did not choose
// go unless they add an alternative to a real complaint at the same
// path, and the alternatives at one path merge into one "want …, got …".
func translate(file string, pos positions, err error) schema.Errors {
	var issues []cueIssue
	for _, e := range cueerrors.Errors(err) {
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if reDisjHead.MatchString(msg) {
			continue
		}
		is := cueIssue{format: format, msg: msg}
		for _, a := range args {
			is.args = append(is.args, fmt.Sprint(a))
		}
		for _, p := range append(e.InputPositions(), e.Position()) {
			if inDefault(p) {
				is.fromDefault = true
			}
			if p.IsValid() && p.Filename() == file && !is.pos.IsValid() {
				is.pos = p
			}
		}
		if listIndexNotAllowed(is.format, e.Path()) {
			is.fromDefault = true
		}
		for _, s := range e.Path() {
			if s == "#Config" && len(is.elems) == 0 {
				continue
			}
			if n, err := strconv.Atoi(s); err == nil {
				is.elems = append(is.elems, n)
			} else {
				is.elems = append(is.elems, s)
			}
		}
		issues = append(issues, is)
	}
	// Group by path, in first-seen order.
	var order []string
	groups := map[string][]cueIssue{}
	for _, is := range issues {
		k := matchers.PathString(is.elems)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], is)
	}
	var out schema.Errors
	for _, k := range order {
		if e := merge(file, pos, groups[k]); e != nil {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		// Nothing but noise was left: fall back to CUE's own first message.
		all := cueerrors.Errors(err)
		e := &schema.Error{File: file, Line: 1, Col: 1, Msg: err.Error()}
		if len(all) > 0 {
			e.Msg = all[0].Error()
			for _, p := range all[0].InputPositions() {
				if p.Filename() == file {
					e.Line, e.Col = p.Line(), p.Column()
					break
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// listIndexNotAllowed reports whether a CUE error is "field not allowed"
// at a list index: CUE's complaint about an element beyond the length of
// a closed list. No such element is an unknown field, and the schema's
// only closed lists are default values (*[1] in *[1] | [int, ...int]), so
// the complaint comes from a default branch the user's longer list did
// not choose; CUE gives it no position in the schema for inDefault to
// recognise.
func listIndexNotAllowed(format string, path []string) bool {
	if !strings.HasSuffix(format, fmtNotAllowed) || len(path) == 0 {
		return false
	}
	_, err := strconv.Atoi(path[len(path)-1])
	return err == nil
}

const (
	fmtNotAllowed = "field not allowed"
	fmtRequired   = "field is required but not present"
	fmtConflict   = "conflicting values %s and %s"
	fmtConflictT  = "conflicting values %s and %s (mismatched types %s and %s)"
	fmtBound      = "invalid value %v (out of bound %s)"
	fmtNotSatisfy = "invalid value %s (does not satisfy %s)"
	fmtListLen    = "incompatible list lengths (%d and %d)"
)

// merge reduces the issues at one path to one schema.Error, or nil when they are
// all noise from default branches.
func merge(file string, pos positions, issues []cueIssue) *schema.Error {
	real := false
	for _, is := range issues {
		if !is.fromDefault {
			real = true
		}
	}
	if !real {
		return nil
	}
	at := func(is cueIssue, msg string) *schema.Error {
		if is.pos.IsValid() {
			is.elems = refine(pos, is.elems, is.pos)
			return &schema.Error{File: file, Line: is.pos.Line(), Col: is.pos.Column(), Path: matchers.PathString(is.elems), Msg: msg}
		}
		return pos.at(is.elems, msg)
	}
	// The most specific complaint wins.
	for _, is := range issues {
		if is.fromDefault {
			continue
		}
		switch {
		case strings.HasSuffix(is.format, fmtNotAllowed) && len(is.elems) > 0:
			name := fmt.Sprint(is.elems[len(is.elems)-1])
			msg := fmt.Sprintf("unknown field %q", name)
			if other := otherBackends(is.elems); other != "" {
				msg += other
			} else if s := matchers.Suggest(name, siblings(is.elems)); s != "" && s != name {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return at(is, msg)
		case strings.HasSuffix(is.format, fmtRequired) && len(is.elems) > 0:
			name := fmt.Sprint(is.elems[len(is.elems)-1])
			parent := is.elems[:len(is.elems)-1]
			return pos.at(parent, fmt.Sprintf("missing field %q", name))
		case is.format == fmtNotSatisfy && len(is.args) == 2 && is.args[1] == "matchN":
			var alts []string
			switch matchers.PathString(is.elems) {
			case "server":
				alts = []string{"builtin", "command", "url"}
			case "backend":
				alts = append(slices.Clone(backendNames), "replay")
			default:
				return at(is, "want exactly one of the alternatives")
			}
			var set []string
			for _, a := range alts {
				if pos.v.LookupPath(cuePath(append(slices.Clip(is.elems), a))).Exists() {
					set = append(set, a)
				}
			}
			got := "none"
			if len(set) > 0 {
				got = strings.Join(set, " and ")
			}
			return at(is, fmt.Sprintf("want exactly one of %s, got %s", strings.Join(alts, ", "), got))
		case is.format == fmtBound && len(is.args) == 2:
			return at(is, fmt.Sprintf("want %s, got %s", describeBound(is.args[1]), is.args[0]))
		case is.format == fmtListLen && len(is.args) == 2:
			return at(is, fmt.Sprintf("want at least %s element(s), got %s", is.args[1], is.args[0]))
		}
	}
	// Conflicts: what each alternative wanted, against the user's value.
	var wants []string
	var got string
	var where *cueIssue
	for i, is := range issues {
		if is.format != fmtConflict && is.format != fmtConflictT || len(is.args) < 2 {
			continue
		}
		if where == nil || !where.pos.IsValid() && is.pos.IsValid() {
			where = &issues[i]
		}
		user := userText(pos, is.elems)
		w, g, wi := is.args[1], is.args[0], 1
		if user != "" && user == is.args[1] {
			w, g, wi = is.args[0], is.args[1], 0
		}
		if is.format == fmtConflictT && len(is.args) == 4 {
			w = is.args[2+wi]
		}
		got = g
		if !slices.Contains(wants, w) {
			wants = append(wants, w)
		}
	}
	if where != nil {
		// Every int is a number: "want number" says it all.
		if slices.Contains(wants, "number") {
			wants = slices.DeleteFunc(wants, func(w string) bool { return w == "int" })
		}
		w := wants[0]
		if len(wants) > 1 {
			w = "one of " + strings.Join(wants, ", ")
		}
		return at(*where, fmt.Sprintf("want %s, got %s", w, got))
	}
	for _, is := range issues {
		if !is.fromDefault {
			return at(is, is.msg)
		}
	}
	return nil
}

// describeBound renders a CUE bound of the schema for a person: the
// schema's patterns by what they mean, other patterns as a regexp.
func describeBound(b string) string {
	switch {
	case strings.Contains(b, "(ns|us|"):
		return `a duration such as "90s" or "2m"`
	case b == `=~"^https?://"`:
		return "an http:// or https:// URL"
	case b == `=~"^[A-Za-z0-9][A-Za-z0-9_.-]*$"`, b == `=~"^[A-Za-z0-9_.-]+$"`:
		return "a name (letters, digits, _ . -)"
	case b == `=~"^[A-Za-z0-9_.:/-]+$"`:
		return "a tool name (letters, digits, _ . : / -)"
	case b == `=~"^[A-Za-z_][A-Za-z0-9_]*$"`:
		return "an environment variable name (letters, digits, _; not starting with a digit)"
	case strings.HasPrefix(b, `=~"`):
		if re, err := strconv.Unquote(b[2:]); err == nil {
			return "a string matching /" + re + "/"
		}
	}
	return b
}

// refine extends elems to the list element of the user's value that sits
// at p, when CUE reported an element's error at the list.
func refine(pos positions, elems []any, p token.Pos) []any {
	v := pos.v.LookupPath(cuePath(elems))
	if v.Kind() != cue.ListKind {
		return elems
	}
	it, err := v.List()
	if err != nil {
		return elems
	}
	for i := 0; it.Next(); i++ {
		if ep := it.Value().Pos(); ep.Filename() == p.Filename() && ep.Offset() == p.Offset() {
			return append(append([]any{}, elems...), i)
		}
	}
	return elems
}

// userText renders the user's value at elems as CUE text, or "".
func userText(pos positions, elems []any) string {
	v := pos.v.LookupPath(cuePath(elems))
	if !v.Exists() {
		return ""
	}
	return fmt.Sprint(v)
}

// siblings returns the field names the schema allows next to elems.
// backendNames are the blocks of a config's backend field.
var backendNames = []string{"ollama", "openai", "anthropic"}

// otherBackends explains a field of backend.<b> that b lacks but other
// backends take: which backends exist and which of them take it. It is
// "" for any other path, or a field no backend takes.
func otherBackends(elems []any) string {
	if len(elems) != 3 || elems[0] != "backend" {
		return ""
	}
	mine, _ := elems[1].(string)
	name := fmt.Sprint(elems[2])
	var takers []string
	for _, b := range backendNames {
		if b != mine && slices.Contains(siblings([]any{"backend", b, name}), name) {
			takers = append(takers, b)
		}
	}
	if len(takers) == 0 {
		return ""
	}
	verb := "takes"
	if len(takers) > 1 {
		verb = "take"
	}
	return fmt.Sprintf(" (backend %s does not take it; %s %s it; the backends are %s and replay)",
		mine, strings.Join(takers, " and "), verb, strings.Join(backendNames, ", "))
}

func siblings(elems []any) []string {
	s := compiled.config
	for _, e := range elems[:len(elems)-1] {
		switch e := e.(type) {
		case int:
			s = s.LookupPath(cue.MakePath(cue.AnyIndex))
		case string:
			s = s.LookupPath(cue.MakePath(cue.Str(e).Optional()))
		}
		if !s.Exists() {
			return allLabels()
		}
		// A disjunction with a default (seeds: *[1] | [...]) hides its
		// alternatives; take the last one, the general shape.
		if op, args := s.Expr(); op == cue.OrOp && len(args) > 0 {
			s = args[len(args)-1]
		}
	}
	var names []string
	it, err := s.Fields(cue.Optional(true))
	if err != nil {
		return allLabels()
	}
	for it.Next() {
		names = append(names, it.Selector().Unquoted())
	}
	if len(names) == 0 {
		return allLabels()
	}
	return names
}

var reLabel = regexp.MustCompile(`(?m)^\s*"?([a-z_$]+)"?[?!]?:`)

// allLabels returns every regular field name of the schema.
func allLabels() []string {
	var names []string
	seen := map[string]bool{}
	for _, m := range reLabel.FindAllSubmatch(source, -1) {
		n := string(m[1])
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return names
}

// checkConfig checks what the CUE schema cannot express.
func checkConfig(file string, c *schema.Config, pos positions) schema.Errors {
	var errs schema.Errors
	add := func(elems []any, format string, args ...any) {
		errs = append(errs, pos.at(elems, fmt.Sprintf(format, args...)))
	}
	checkServer(c, add)
	checkCasePatterns(c, add)
	checkMatrix(file, c, pos, &errs, add)
	checkDescriptionSets(c, add)
	checkOptions(c, pos, add)
	checkLimitsAndBackends(c, pos, &errs, add)
	return errs
}

// addFunc records one mistake at the config element elems.
type addFunc func(elems []any, format string, args ...any)

// checkServer checks the server block: fields of one kind of server set
// on another, isolation, and the builtin server's files.
func checkServer(c *schema.Config, add addFunc) {
	if c.Server.Env != nil && c.Server.Command == nil {
		add([]any{"server", "env"}, "env applies to command servers only")
	}
	if c.Server.InheritEnv && c.Server.Command == nil {
		add([]any{"server", "inherit_env"}, "inherit_env applies to command servers only")
	}
	if c.Server.Headers != nil && c.Server.URL == "" {
		add([]any{"server", "headers"}, "headers apply to url servers only")
	}
	if o := c.Server.OAuth; o != nil {
		switch {
		case c.Server.URL == "":
			add([]any{"server", "oauth"}, "oauth applies to url servers only")
		case os.Getenv(o.ClientSecretEnv) == "":
			add([]any{"server", "oauth", "client_secret_env"}, "environment variable %s (the OAuth client secret) is not set", o.ClientSecretEnv)
		}
	}
	checkIsolation(c.Server, add)
	if b := c.Server.Builtin; b != nil {
		for i, f := range b.Catalogs {
			if fi, err := os.Stat(f); err != nil {
				add([]any{"server", "builtin", "catalogs", i}, "catalog %s: %s", f, schema.ErrMsg(err))
			} else if !fi.Mode().IsRegular() {
				add([]any{"server", "builtin", "catalogs", i}, "catalog %s: %s", f, &schema.NotRegularError{What: "catalog file", Mode: fi.Mode()})
			}
		}
		if f := b.Corpus; f != "" {
			if fi, err := os.Stat(f); err != nil {
				add([]any{"server", "builtin", "corpus"}, "corpus %s: %s", f, schema.ErrMsg(err))
			} else if !fi.IsDir() && !fi.Mode().IsRegular() {
				add([]any{"server", "builtin", "corpus"}, "corpus %s: %s", f, &schema.NotRegularError{What: "JSON file or a directory", Mode: fi.Mode()})
			}
		}
	}
}

// checkCasePatterns checks that every case pattern matches case files
// within the size limit.
func checkCasePatterns(c *schema.Config, add addFunc) {
	for i, pat := range c.Cases {
		files, err := schema.Glob(pat)
		switch {
		case err != nil:
			add([]any{"cases", i}, "bad pattern %q: %v", pat, err)
		case len(files) == 0:
			add([]any{"cases", i}, "pattern %q matches no file; %s", pat, schema.NoMatchHint(pat, c.File))
		}
		for _, f := range files {
			if err := schema.CheckFile(f, "case file", schema.MaxCaseFileSize); err != nil {
				add([]any{"cases", i}, "%s: %s", f, schema.ErrMsg(err))
			}
		}
	}
}

// checkMatrix checks the matrix: tool subsets, and repeated values of
// every axis (positioned at the repeat; values compare as the axis
// formats them, so 0.7 repeats 0.70).
func checkMatrix(file string, c *schema.Config, pos positions, errs *schema.Errors, add addFunc) {
	for i, t := range c.Matrix.Tools {
		el := []any{"matrix", "tools", i}
		switch {
		case t.Count > 0 && t.Include != nil:
			add(el, "count and include are exclusive")
		case t.Count == 0 && t.Include == nil && t.Name != "needed" && t.Name != "all":
			add(append(el, "name"), "want \"needed\" or \"all\" for a subset without count or include, got %q", t.Name)
		}
	}
	for _, a := range cell.Axes {
		dupes(file, pos, errs, a, c.Matrix.Values(a.Name))
	}
}

// dupes reports repeated values of axis a, positioned in one pass over
// the list however many there are.
func dupes(file string, pos positions, errs *schema.Errors, a *cell.Axis, vals []string) {
	seen := make(map[string]bool, len(vals))
	var at []token.Pos
	for i, v := range vals {
		if !seen[v] {
			seen[v] = true
			continue
		}
		if at == nil {
			at = pos.elemPositions([]any{"matrix", a.Key})
		}
		show := v
		if !a.Numeric {
			show = strconv.Quote(v)
		}
		e := pos.at([]any{"matrix", a.Key}, "duplicate value "+show)
		e.Path = matchers.PathString([]any{"matrix", a.Key, i})
		if i < len(at) && at[i].IsValid() && at[i].Filename() == file {
			e.Line, e.Col = at[i].Line(), at[i].Column()
		}
		*errs = append(*errs, e)
	}
}

// checkDescriptionSets checks that every description set a cell names
// resolves to a readable file.
func checkDescriptionSets(c *schema.Config, add addFunc) {
	for name, f := range c.DescriptionSets {
		if msg := checkDescriptionFile(f); msg != "" {
			add([]any{"description_sets", name}, "%s", msg)
		}
	}
	for i, d := range c.Matrix.Values(cell.Descriptions) {
		if d == "default" {
			continue
		}
		if _, ok := c.DescriptionSets[d]; ok {
			continue // checked above
		}
		f := schema.DescriptionFile(c, d)
		if _, err := os.Stat(f); err != nil {
			add([]any{"matrix", "descriptions", i}, "description set %q: no description_sets entry and no file %s", d, f)
		} else if msg := checkDescriptionFile(f); msg != "" {
			add([]any{"matrix", "descriptions", i}, "%s", msg)
		}
	}
}

// checkLimitsAndBackends checks durations, and each backend (the job's,
// and the simulator's) as it is used (backendUses): its fields that CUE
// cannot judge, its host pool, and for Anthropic what the Messages API
// refuses.
func checkLimitsAndBackends(c *schema.Config, pos positions, errs *schema.Errors, add addFunc) {
	// Durations: CUE checks the shape; Go must be able to parse them.
	for _, d := range []struct {
		name string
		v    schema.Duration
	}{{"run_timeout", c.Limits.RunTimeout}, {"call_timeout", c.Limits.CallTimeout}, {"throttle_wait", c.Limits.ThrottleWait}} {
		if d.v.Duration < 0 {
			add([]any{"limits", d.name}, "want a duration >= 0")
		}
	}
	for _, u := range backendUses(c, pos, errs) {
		if u.own {
			checkBackend(u.at, u.b, add)
		}
		checkPools(u, pos, add)
		if a := u.b.Anthropic; a != nil {
			checkAnthropic(u, a, add)
		}
	}
}

// checkBackend checks what CUE cannot of the backend b at path at: no
// key in headers, a keep_alive Go can parse.
func checkBackend(at []any, b *schema.Backend, add addFunc) {
	el := func(more ...any) []any { return append(slices.Clone(at), more...) }
	const keyInHeaders = "a key in headers would be written to config.json; put it in an environment variable and name that in api_key_env"
	if o := b.OpenAI; o != nil {
		for k := range o.Headers {
			if strings.EqualFold(k, "Authorization") {
				add(el("openai", "headers", k), keyInHeaders)
			}
		}
	}
	if a := b.Anthropic; a != nil {
		for k := range a.Headers {
			if strings.EqualFold(k, "x-api-key") || strings.EqualFold(k, "Authorization") {
				add(el("anthropic", "headers", k), keyInHeaders)
			}
		}
	}
	if o := b.Ollama; o != nil && o.KeepAlive != "" {
		if _, err := time.ParseDuration(o.KeepAlive); err != nil {
			add(el("ollama", "keep_alive"), "%v", err)
		}
	}
}

// checkDescriptionFile checks that f is a YAML mapping of tool name to
// description, returning a message when it is not.
func checkDescriptionFile(f string) string {
	src, err := schema.ReadFile(f, "description set", schema.MaxDescriptionFileSize)
	if err != nil {
		return fmt.Sprintf("description set %s: %s", f, schema.ErrMsg(err))
	}
	var m map[string]string
	if err := yaml.Unmarshal(src, &m); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
		msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", ";")), " ")
		return fmt.Sprintf("description set %s: want a mapping of tool name to description (%s)", f, msg)
	}
	// The engine and the bundled server refuse an empty description too.
	for _, tool := range slices.Sorted(maps.Keys(m)) {
		if strings.TrimSpace(m[tool]) == "" {
			return fmt.Sprintf("description set %s: tool %q has an empty description", f, tool)
		}
	}
	return ""
}
