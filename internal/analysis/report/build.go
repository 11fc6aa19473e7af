package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
	"github.com/toolward/toolward/schema/results"
)

// File names in a result directory: the two the engine writes (see
// package results), which Build reads, and the four Build writes.
const (
	RunsFile     = results.RunsFile
	ConfigFile   = results.ConfigFile
	SummaryFile  = "summary.json"
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
	JUnitFile    = "junit.xml"
)

// Build reads dir/runs.jsonl (and dir/config.json when present, for the
// title and metadata), and writes dir/summary.json, report.md, report.html
// and junit.xml. Lines that are not records become warnings and are
// skipped; a missing or unreadable runs.jsonl is an error.
func Build(dir string) (*Summary, error) {
	s, err := Summarize(dir)
	if err != nil {
		return nil, err
	}
	if err := s.writeAll(dir); err != nil {
		return nil, err
	}
	return s, nil
}

// Summarize computes the summary of dir without writing anything.
func Summarize(dir string) (*Summary, error) {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("report: %s is a file; give the result directory that holds %s", dir, RunsFile)
	}
	path := filepath.Join(dir, RunsFile)
	if err := results.CheckRuns(dir); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	// One record per run id, by the rule of results.Runs (the first
	// pass or fail record, else the first other one).
	a := newAggregator()
	cfg := readConfigFile(dir)
	a.configure(cfg)
	members, unchecked := cfg.planMembers()
	var foreign results.Foreign
	add := func(rec *record.Record, whole func() (*record.Record, error)) error {
		if !members.Holds(rec) {
			foreign.Add(rec)
			return nil
		}
		a.addSummary(rec, whole)
		return nil
	}
	st, err := results.RunsSummary(add, dir)
	if err != nil {
		return nil, fmt.Errorf("report: reading %s: %w", path, err)
	}
	return a.finish(dir, cfg, st, &foreign, unchecked), nil
}

// Stream builds a directory's reports from records handed to it one at
// a time, for a command that writes the directory's runs.jsonl (merge)
// and would otherwise read back what it just wrote.
type Stream struct {
	a *aggregator
	n int
}

// NewStream returns an empty Stream for records run under the config
// that dir/config.json records: the shards merged, or the directory
// re-scored (what the records are counted with, such as prices, comes
// from it; Build takes the rest from the reports' own directory).
func NewStream(dir string) *Stream {
	a := newAggregator()
	a.configure(readConfigFile(dir))
	return &Stream{a: a}
}

// Add folds in one record, as results.RunsSummary gives it.
func (st *Stream) Add(rec *record.Record, whole func() (*record.Record, error)) {
	st.a.addSummary(rec, whole)
	st.n++
}

// Build writes dir's reports as Build does, from the records added:
// they must be the records dir/runs.jsonl holds, in order, each a run of
// the plan dir/config.json records with its own run id, and each the
// view of the line as written. The summary is then Build's.
func (st *Stream) Build(dir string) (*Summary, error) {
	cfg := readConfigFile(dir)
	_, unchecked := cfg.planMembers()
	s := st.a.finish(dir, cfg, &results.ReadStats{Records: st.n}, &results.Foreign{}, unchecked)
	if err := s.writeAll(dir); err != nil {
		return nil, err
	}
	return s, nil
}

// configure takes from config.json what records are counted with.
func (a *aggregator) configure(cfg *configFile) {
	if m := cfg.meta(); m != nil {
		a.cost.prices, a.cost.local = m.Config.Prices, schema.LocalBackend(m.Config.Backend)
		a.judge.configure(m.Config)
	}
}

// finish computes the summary of the records a has, read from dir with
// the stats st, leaving out foreign; unchecked is planMembers' warning.
func (a *aggregator) finish(dir string, cfg *configFile, st *results.ReadStats, foreign *results.Foreign, unchecked string) *Summary {
	a.subsetOrder = cfg.toolOrder()
	s := a.summary()
	s.BadLines = st.BadLines
	s.Duplicates = st.Duplicates
	s.Foreign = foreign.N
	var pre []string
	if w := foreign.String(); w != "" {
		pre = append(pre, w)
	}
	if unchecked != "" {
		pre = append(pre, unchecked)
	}
	for i, b := range st.Bad {
		if i == maxLineWarnings {
			break
		}
		pre = append(pre, "skipped "+lineError(b))
	}
	if shown := min(len(st.Bad), maxLineWarnings); st.BadLines > shown {
		pre = append(pre, fmt.Sprintf("%d more lines of %s were not records", st.BadLines-shown, RunsFile))
	}
	dups := st.Duplicates
	if dups > 0 {
		pre = append(pre, fmt.Sprintf("%d run id(s) occurred more than once; each run's first pass or fail record was used (else its first record)", dups))
	}
	if s.Totals.Runs == 0 {
		pre = append(pre, "no runs")
	}
	s.Warnings = append(pre, s.Warnings...)
	s.Title = defaultTitle(dir)
	s.Dir = filepath.Clean(dir)
	if err := s.readConfig(cfg); err != nil {
		s.Warnings = append(s.Warnings, err.Error())
	}
	return s
}

// configFile is dir/config.json as a report reads it: once.
type configFile struct {
	dir, path string
	b         []byte
	err       error // of reading it
}

func readConfigFile(dir string) *configFile {
	b, err := results.ReadMetaBytes(dir)
	return &configFile{dir: dir, path: filepath.Join(dir, ConfigFile), b: b, err: err}
}

// meta decodes the file as results.ReadMeta does; nil when it cannot.
func (c *configFile) meta() *results.Meta {
	if c.err != nil {
		return nil
	}
	m, err := results.DecodeMeta(c.dir, c.b)
	if err != nil {
		return nil
	}
	return m
}

// planMembers returns the test of which records are runs of the plan
// dir/config.json records, nil when there is no config.json to check
// against (reports of a bare runs.jsonl count every record), or when it
// cannot be read (readConfig warns) or its plan cannot be rebuilt (the
// second result says so, for a warning).
func (c *configFile) planMembers() (*results.Members, string) {
	m := c.meta()
	if m == nil {
		return nil, ""
	}
	ms, err := m.Members()
	if err != nil {
		return nil, fmt.Sprintf("records not checked against the plan: %v", err)
	}
	return ms, ""
}

// lineError is a bad line's error with the file named by its base name
// (the report is of one directory and should not carry a machine's path).
func lineError(err error) string {
	var se *record.SyntaxError
	if errors.As(err, &se) {
		short := *se
		short.File = filepath.Base(se.File)
		return short.Error()
	}
	return err.Error()
}

// defaultTitle names a result directory by its last two path elements,
// results/<config name>/<stamp> giving "<config name>/<stamp>".
func defaultTitle(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Base(dir)
	}
	parent := filepath.Base(filepath.Dir(abs))
	if parent == "/" || parent == "." {
		return filepath.Base(abs)
	}
	return parent + "/" + filepath.Base(abs)
}

// readConfig takes the title (the config name) and the facts worth a
// reader's attention from config.json (results.Meta, written by the
// engine): config file, server, backend and model digests, toolward
// version, plan size, shard, filters and merged shards. The time span
// comes from the runs themselves. Case digests stay in config.json. Its absence is not an
// error; a file that does not decode, or has no config, is a warning.
func (s *Summary) readConfig(c *configFile) error {
	b, err, path := c.b, c.err, c.path
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var m results.Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("report: %s is not a toolward config.json, ignored: %v", path, err)
	}
	if m.Config == nil {
		return fmt.Errorf("report: %s has no \"config\" object (not written by toolward run?), ignored", path)
	}
	add := func(name, value string) {
		if value != "" {
			s.Meta = append(s.Meta, Field{name, value})
		}
	}
	if m.Config.Name != "" {
		s.Title = m.Config.Name
	}
	add("server", serverName(m.Config.Server))
	add("config file", m.ConfigFile)
	if m.Backend != nil {
		add("backend", m.Backend.Server)
		models := slices.Sorted(maps.Keys(m.Backend.Digests))
		for _, model := range models {
			add("digest "+model, shortDigest(m.Backend.Digests[model]))
		}
		if m.Backend.Unseeded {
			add("seeds", "not sent: the backend takes no seed, so the runs of a cell differ only by sampling and none can be repeated exactly")
		}
	}
	if sim := m.Simulator; sim != nil {
		add("simulator backend", sim.Server)
		for _, model := range slices.Sorted(maps.Keys(sim.Digests)) {
			add("simulator digest "+model, shortDigest(sim.Digests[model]))
		}
	}
	add("toolward", m.Toolward)
	if m.Planned > 0 {
		add("planned runs", strconv.FormatInt(m.Planned, 10))
	}
	add("shard", m.Shard)
	add("filters", strings.Join(m.Filters, " "))
	if len(m.MergedFrom) > 0 {
		add("merged from", strconv.Itoa(len(m.MergedFrom))+" shards")
	}
	if m.ScoredFrom != "" {
		s.Rescored = &Rescored{From: m.ScoredFrom, At: m.Created}
	}
	return nil
}

// serverName says which MCP server a config talks to.
func serverName(sv schema.Server) string {
	switch {
	case sv.Builtin != nil:
		return "builtin"
	case sv.URL != "":
		return sv.URL
	case len(sv.Command) > 0:
		return strings.Join(sv.Command, " ")
	}
	return ""
}

// shortDigest keeps a digest recognisable without filling the header:
// "sha256:0123456789ab".
func shortDigest(d string) string {
	algo, hex, ok := strings.Cut(d, ":")
	if !ok {
		algo, hex = "", d
	}
	if len(hex) > 12 {
		hex = hex[:12]
	}
	if algo == "" {
		return hex
	}
	return algo + ":" + hex
}

func (s *Summary) writeAll(dir string) error {
	outs := []struct {
		name  string
		write func(io.Writer) error
	}{
		{SummaryFile, s.WriteJSON},
		{MarkdownFile, s.WriteMarkdown},
		{HTMLFile, s.WriteHTML},
		{JUnitFile, s.WriteJUnit},
	}
	for _, o := range outs {
		var buf bytes.Buffer
		if err := o.write(&buf); err != nil {
			return fmt.Errorf("report: rendering %s: %w", o.name, err)
		}
		if err := writeFileAtomic(filepath.Join(dir, o.name), buf.Bytes()); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	return nil
}

// WriteJSON writes the summary as indented JSON (summary.json).
func (s *Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
