package runconfig

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/plan"
)

// Options adds checks that need more than this package links.
type Options struct {
	// Catalog checks the tool catalog file at path (a list of tools the
	// bundled server serves) and returns its mistakes, or nil. Catalog
	// files are those named, found in a named directory, or listed by a
	// config's server.builtin.catalogs. Nil: catalog files are recognised
	// (so they are not read as cases) but not checked.
	Catalog func(path string) error
	// Warn receives each warning about a valid case (schema.Case.Warnings);
	// nil drops them. Warnings are not mistakes: they do not fail a check.
	Warn func(*schema.Error)
}

// Summary counts what CheckWith looked at.
type Summary struct {
	CaseFiles int // case files read
	Cases     int // valid case documents in them
	Configs   int // configs read
	// Cassettes counts the valid cassettes of the cassette files named
	// and of the configs' replay directories, each file once.
	Cassettes int
	Catalogs  int // tool catalog files recognised (and checked, with Options.Catalog)
}

// CheckWith checks case files (*.yaml, *.yml), cassette files and run
// configs (*.cue) named by paths; a directory is walked for such files
// (hidden directories are skipped). A YAML file whose first document has
// case or runs and no id is a replay cassette file (schema.IsCassetteFile).
// It reports every mistake: schema and matcher errors with positions,
// duplicate case ids across all the files, needs that omit an expected
// tool, golden trajectories the case's base expectations reject, config
// references that do not resolve, and, for each config, what a run of it
// would load: its cases (as if named too) and its replay cassettes, each
// of which must answer for one of the config's cases. The result is
// sorted and empty when all is well. A named directory that holds no
// case file, cassette or config is a mistake too: it is usually a wrong
// path, and a silent success would hide it.
//
// It returns what it looked at, for a summary line, and runs the extra
// checks of opts.
func CheckWith(paths []string, opts Options) (Summary, schema.Errors) {
	var v validation
	v.seen, v.catalogs = map[string]bool{}, map[string]bool{}
	for _, p := range paths {
		v.addPath(p)
	}
	// Each config brings the case files a run of it loads.
	var cfgs []*schema.Config
	for _, f := range v.configFiles {
		cfg, err := Load(f)
		if err != nil {
			v.fail(f, err)
			continue
		}
		cfgs = append(cfgs, cfg)
		if b := cfg.Server.Builtin; b != nil {
			for _, c := range b.Catalogs {
				v.addCatalog(c)
			}
		}
		for _, pat := range cfg.Cases {
			files, _ := schema.Glob(pat) // checkConfig reported bad patterns
			for _, cf := range files {
				v.addFile(cf, false)
			}
		}
	}
	cases, cerrs := schema.LoadCaseFiles(v.caseFiles)
	if opts.Warn != nil {
		for _, c := range cases {
			for _, w := range c.Warnings {
				opts.Warn(w)
			}
		}
	}
	v.errs = append(v.errs, cerrs...)
	sum := Summary{CaseFiles: len(v.caseFiles), Cases: len(cases), Configs: len(v.configFiles), Catalogs: len(v.catalogFiles)}
	if opts.Catalog != nil {
		for _, f := range v.catalogFiles {
			if err := opts.Catalog(f); err != nil {
				v.errs = append(v.errs, catalogErrors(f, err)...)
			}
		}
	}
	named, nerrs := schema.LoadCassetteFiles(v.cassetteFiles)
	v.errs = append(v.errs, nerrs...)
	sum.Cassettes = len(named)
	counted := map[string]bool{} // files whose cassettes are in sum
	for _, f := range v.cassetteFiles {
		counted[fileKey(f)] = true
	}
	for _, cfg := range cfgs {
		if mine, ok := configCases(cfg, cases, cerrs); ok {
			if e := StateIsolation(cfg, mine, 0); e != nil {
				v.errs = append(v.errs, e)
			}
		}
		if cfg.Simulator == nil {
			if mine, ok := configCases(cfg, cases, cerrs); ok {
				v.errs = append(v.errs, needSimulator(cfg, filterCases(cfg, mine))...)
			}
		}
		if cfg.Judge == nil {
			if mine, ok := configCases(cfg, cases, cerrs); ok {
				v.errs = append(v.errs, NeedJudge(cfg, filterCases(cfg, mine))...)
			}
		}
		if cfg.Backend.Ollama != nil {
			if mine, ok := configCases(cfg, cases, cerrs); ok {
				v.errs = append(v.errs, ollamaGoldens(cfg, mine)...)
			}
		}
		simDir := simulatorReplay(cfg)
		if simDir != "" && !samePath(simDir, cfg.Backend.Replay) {
			v.errs = append(v.errs, simulatorCassettes(cfg, simDir, cases, cerrs, counted, &sum)...)
		}
		dir := cfg.Backend.Replay
		if dir == "" {
			continue
		}
		if _, err := os.Stat(dir); err != nil {
			v.errs = append(v.errs, &schema.Error{File: cfg.File, Path: "backend.replay", Msg: fmt.Sprintf("cassette directory %s: %s", dir, schema.ErrMsg(err))})
			continue
		}
		cs, errs := schema.LoadCassettes(dir)
		v.errs = append(v.errs, errs...)
		for _, c := range cs {
			if f := fileKey(c.File); !counted[f] {
				counted[f] = true
				sum.Cassettes += countIn(cs, c.File)
			}
		}
		// Unknown ids are only told apart from cases that failed to load
		// once the config's case files are clean.
		if mine, ok := configCases(cfg, cases, cerrs); ok {
			unknown := schema.CheckCassettes(cs, mine)
			v.errs = append(v.errs, unknown...)
			// A cassette that does not load, or names a case wrongly, is
			// likely the missing one: reported as that, not twice.
			if len(errs) > 0 || len(unknown) > 0 {
				continue
			}
			selected := filterCases(cfg, mine)
			for _, c := range schema.UncoveredCases(cs, selected) {
				v.errs = append(v.errs, &schema.Error{File: cfg.File, Path: "backend.replay",
					Msg: fmt.Sprintf("case %s (%s:%d) has no cassette in %s: every run of it would fail as cassette_miss; "+
						"write one (case: %s), or record one with toolward run CONFIG --record DIR against a real model", c.ID, c.File, c.Line, dir, c.ID)})
			}
			v.errs = append(v.errs, modelCassettes(cfg, selected, cs, dir)...)
			if simDir != "" && samePath(simDir, dir) {
				v.errs = append(v.errs, userCassettes(cfg, selected, cs, dir)...)
			}
			v.errs = append(v.errs, judgeCassettes(cfg, selected, cs, dir)...)
		}
	}
	return sum, v.errs.Sort()
}

// simulatorCassettes loads the cassettes of dir, the simulator's replay
// directory when it is not the config's, counts them in sum once per
// file and checks them against the config's simulated cases
// (userCassettes).
func simulatorCassettes(cfg *schema.Config, dir string, cases []*schema.Case, cerrs schema.Errors, counted map[string]bool, sum *Summary) schema.Errors {
	if _, err := os.Stat(dir); err != nil {
		return schema.Errors{&schema.Error{File: cfg.File, Path: "simulator.backend.replay", Msg: fmt.Sprintf("cassette directory %s: %s", dir, schema.ErrMsg(err))}}
	}
	cs, errs := schema.LoadCassettes(dir)
	for _, c := range cs {
		if f := fileKey(c.File); !counted[f] {
			counted[f] = true
			sum.Cassettes += countIn(cs, c.File)
		}
	}
	if mine, ok := configCases(cfg, cases, cerrs); ok && len(errs) == 0 {
		errs = append(errs, userCassettes(cfg, filterCases(cfg, mine), cs, dir)...)
	}
	return errs
}

// needSimulator reports the cases with a simulated user among cases, the
// cases of cfg, which has no simulator to play it (as a run refuses).
func needSimulator(cfg *schema.Config, cases []*schema.Case) schema.Errors {
	var errs schema.Errors
	for _, c := range cases {
		if c.User.Simulated() {
			errs = append(errs, &schema.Error{File: cfg.File, Path: "simulator",
				Msg: fmt.Sprintf("case %s (%s:%d) has a simulated user (user.instructions), but the config names no simulator: add simulator: {model: \"…\"}", c.ID, c.File, c.Line)})
		}
	}
	return errs
}

// NeedJudge reports the cases with a judged answer ({$judge: …}) among
// cases, the cases of cfg, which names no judge to decide them (as a run
// refuses).
func NeedJudge(cfg *schema.Config, cases []*schema.Case) schema.Errors {
	var errs schema.Errors
	if cfg.Judge != nil {
		return nil
	}
	for _, c := range cases {
		if c.Expectation != nil && c.Expectation.HasJudge() {
			errs = append(errs, &schema.Error{File: cfg.File, Path: "judge",
				Msg: fmt.Sprintf("case %s (%s:%d) has a judged answer ({$judge: …}), but the config names no judge: add judge: {model: \"…\"} (the judge model; its backend defaults to the config's)", c.ID, c.File, c.Line)})
		}
	}
	return errs
}

// filterCases returns the cases the config's own filters (case= and
// tag=) keep; a filter that does not parse keeps everything (the config
// check reports it).
func filterCases(cfg *schema.Config, cases []*schema.Case) []*schema.Case {
	var fs []plan.Filter
	for _, s := range cfg.Filter {
		f, err := plan.ParseFilter(s)
		if err != nil {
			return cases
		}
		fs = append(fs, f)
	}
	for _, f := range plan.Merge(fs) {
		if f.Key != plan.AxisCase && f.Key != "tag" {
			continue
		}
		sel, err := cell.NewSelector(f.Key, f.Globs...)
		if err != nil {
			return cases
		}
		cases = slices.DeleteFunc(slices.Clone(cases), func(c *schema.Case) bool {
			if f.Key == "tag" {
				return !slices.ContainsFunc(c.Tags, sel.Match)
			}
			return !sel.Match(c.ID)
		})
	}
	return cases
}

// ollamaGoldens checks the goldens of the cases of a config on the
// Ollama backend as they would reach the scorer through Ollama's native
// API, which decodes a model's arguments and encodes them again, every
// number through a float64: an integer beyond 2^53 arrives rounded (and
// 10.0 as 10). A case whose golden then fails could never pass a run of
// the config: one error at the config per such case.
func ollamaGoldens(cfg *schema.Config, cases []*schema.Case) schema.Errors {
	var errs schema.Errors
	for _, c := range cases {
		rs := c.GoldenRejections(throughFloat64)
		if len(rs) == 0 {
			continue
		}
		errs = append(errs, &schema.Error{File: cfg.File, Path: "backend.ollama",
			Msg: fmt.Sprintf("case %s (%s:%d): its golden fails as Ollama's native API delivers arguments, each number "+
				"re-encoded through a float64, exact only up to 2^53 (%s): write such a value as a string or use $approx, "+
				"or run the case on another backend", c.ID, c.File, c.Line, strings.Join(rs, "; "))})
	}
	return errs
}

// throughFloat64 returns v with every json.Number re-encoded as Go
// encodes a float64 (what Ollama does to a model's arguments).
func throughFloat64(args map[string]any) map[string]any {
	return reencode(args).(map[string]any)
}

func reencode(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = reencode(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = reencode(e)
		}
		return l
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return x
		}
		b, err := json.Marshal(f)
		if err != nil {
			return x
		}
		return json.Number(b)
	}
	return v
}

// countIn counts the cassettes of cs read from file.
func countIn(cs []*schema.Cassette, file string) int {
	n := 0
	for _, c := range cs {
		if c.File == file {
			n++
		}
	}
	return n
}

// configCases returns the cases of cfg among cases, and false when one of
// its case files has a mistake (in errs), so that its cases are not all
// known.
func configCases(cfg *schema.Config, cases []*schema.Case, errs schema.Errors) ([]*schema.Case, bool) {
	files := map[string]bool{}
	for _, pat := range cfg.Cases {
		m, err := schema.Glob(pat)
		if err != nil || len(m) == 0 {
			return nil, false
		}
		for _, f := range m {
			files[fileKey(f)] = true
		}
	}
	for _, e := range errs {
		if files[fileKey(e.File)] {
			return nil, false
		}
	}
	var out []*schema.Case
	for _, c := range cases {
		if files[fileKey(c.File)] {
			out = append(out, c)
		}
	}
	return out, true
}

// fileKey names the file p names however it is spelt: its absolute path
// with symbolic links resolved (else the cleaned absolute path, else p).
func fileKey(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// validation collects the files Check looks at.
type validation struct {
	caseFiles, cassetteFiles, configFiles, catalogFiles []string
	seen, catalogs                                      map[string]bool
	errs                                                schema.Errors
	// spelt maps the fileKey of each file met to the spelling first met.
	spelt map[string]string
}

// canonical returns the spelling under which p's file was first met (p,
// cleaned, when it is new): a config's pattern and a path on the
// command line may name one file as a/b.yaml, ./a/b.yaml, /abs/a/b.yaml
// or through a link, and it must be loaded once, not reported as a
// duplicate of itself.
func (v *validation) canonical(p string) string {
	p = filepath.Clean(p)
	k := fileKey(p)
	if first, ok := v.spelt[k]; ok {
		return first
	}
	if v.spelt == nil {
		v.spelt = map[string]string{}
	}
	v.spelt[k] = p
	return p
}

func (v *validation) fail(file string, err error) {
	if es, ok := err.(schema.Errors); ok {
		v.errs = append(v.errs, es...)
	} else {
		v.errs = append(v.errs, &schema.Error{File: file, Msg: err.Error()})
	}
}

// addFile adds p if it is a case file, cassette file or config and
// reports whether it is one. A YAML file is sniffed for cassettes only
// when sniff is set: a config's case patterns name case files.
func (v *validation) addFile(p string, sniff bool) bool {
	ext := strings.ToLower(filepath.Ext(p))
	if ext != ".yaml" && ext != ".yml" && ext != ".cue" {
		return false
	}
	p = v.canonical(p)
	if v.seen[p] {
		if !sniff && slices.Contains(v.cassetteFiles, p) && !slices.Contains(v.caseFiles, p) {
			// A config's case pattern matches a cassette file: a run
			// loads it as cases, so validate it as cases too.
			v.caseFiles = append(v.caseFiles, p)
		}
		return true
	}
	v.seen[p] = true
	kind := caseKind
	if ext == ".cue" {
		kind = configKind
	} else if sniff {
		kind = sniffYAML(p)
	}
	switch kind {
	case configKind:
		v.configFiles = append(v.configFiles, p)
	case cassetteKind:
		v.cassetteFiles = append(v.cassetteFiles, p)
	case catalogKind:
		v.addCatalog(p)
	default:
		v.caseFiles = append(v.caseFiles, p)
	}
	return true
}

// The kinds of file validate tells apart.
const (
	caseKind = iota
	configKind
	cassetteKind
	catalogKind
)

// sniffYAML reads the YAML file at p once and tells whether it holds
// cassettes, a tool catalog or (otherwise) cases. A file that cannot be
// read is a case file: loading it reports why.
func sniffYAML(p string) int {
	src, err := schema.ReadFile(p, "YAML file", schema.MaxCassetteFileSize)
	switch {
	case err != nil:
		return caseKind
	case schema.IsCassetteFile(src):
		return cassetteKind
	case schema.IsCatalogFile(src):
		return catalogKind
	}
	return caseKind
}

// addCatalog adds the catalog file a config names, once.
func (v *validation) addCatalog(p string) {
	p = v.canonical(p)
	if v.catalogs[p] {
		return
	}
	v.catalogs[p] = true
	v.catalogFiles = append(v.catalogFiles, p)
}

// catalogErrors places a catalog checker's errors: one per error joined
// in err (errors.Join), so every refused tool of a file is listed. A
// message that already starts with the file's name ("path: …",
// "path:line: …" or "path:line:col: …") is split into the error's
// position and text.
func catalogErrors(file string, err error) []*schema.Error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*schema.Error
		for _, e := range j.Unwrap() {
			out = append(out, catalogErrors(file, e)...)
		}
		return out
	}
	e := &schema.Error{File: file, Msg: err.Error()}
	rest, ok := strings.CutPrefix(e.Msg, file+":")
	if !ok {
		return []*schema.Error{e}
	}
	e.Msg = strings.TrimSpace(rest)
	for _, pos := range []*int{&e.Line, &e.Col} {
		num, msg, ok := strings.Cut(rest, ":")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n <= 0 {
			break
		}
		*pos, rest, e.Msg = n, msg, strings.TrimSpace(msg)
	}
	return []*schema.Error{e}
}

// addPath adds a named file, or the files of a named directory.
func (v *validation) addPath(p string) {
	fi, err := os.Stat(p)
	if err != nil {
		v.errs = append(v.errs, &schema.Error{File: p, Msg: schema.ErrMsg(err)})
		return
	}
	if !fi.IsDir() {
		if !v.addFile(p, true) {
			v.errs = append(v.errs, &schema.Error{File: p, Msg: "not a case file, cassette file (.yaml, .yml) or config (.cue)"})
		}
		return
	}
	found := false
	err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			v.errs = append(v.errs, &schema.Error{File: q, Msg: schema.ErrMsg(err)})
			return nil
		}
		if d.IsDir() {
			if q != p && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if v.addFile(q, true) {
			found = true
		}
		return nil
	})
	if err != nil {
		v.errs = append(v.errs, &schema.Error{File: p, Msg: err.Error()})
	}
	if !found {
		v.errs = append(v.errs, &schema.Error{File: p, Msg: "no case files, cassette files (.yaml, .yml) or configs (.cue) in this directory"})
	}
}
