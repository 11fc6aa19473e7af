package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/toolward/toolward/engine/record"
)

// Output file names, written into the result directory.
const (
	RunsFile     = "runs.jsonl"
	ConfigFile   = "config.json"
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
	s, err := summarize(dir)
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
	return summarize(dir)
}

func summarize(dir string) (*Summary, error) {
	path := filepath.Join(dir, RunsFile)
	// Pass 1: the last line of each run id wins (a resumed or re-run
	// record appended later supersedes the earlier one).
	last := map[string]int{}
	var bad []string
	n := 0
	err := scan(path, func(i int, rec *record.Record, err error) {
		n++
		if err != nil {
			bad = append(bad, err.Error())
			return
		}
		last[rec.ID] = i
	})
	if err != nil {
		return nil, err
	}
	dups := 0
	a := newAggregator()
	err = scan(path, func(i int, rec *record.Record, err error) {
		if err != nil {
			return
		}
		if last[rec.ID] != i {
			dups++
			return
		}
		a.add(rec)
	})
	if err != nil {
		return nil, err
	}
	s := a.summary()
	s.BadLines = len(bad)
	s.Duplicates = dups
	var pre []string
	for i, b := range bad {
		if i == maxLineWarnings {
			pre = append(pre, fmt.Sprintf("%d more lines of %s were not records", len(bad)-i, RunsFile))
			break
		}
		pre = append(pre, "skipped "+b)
	}
	if dups > 0 {
		pre = append(pre, fmt.Sprintf("%d run id(s) occurred more than once; the last record of each was used", dups))
	}
	if s.Totals.Runs == 0 {
		pre = append(pre, "no runs")
	}
	s.Warnings = append(pre, s.Warnings...)
	s.Title = defaultTitle(dir)
	if err := s.readConfig(filepath.Join(dir, ConfigFile)); err != nil {
		s.Warnings = append(s.Warnings, err.Error())
	}
	return s, nil
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

// scan calls fn for every record or syntax error of the file, with the
// record's ordinal among non-blank lines.
func scan(path string, fn func(i int, rec *record.Record, err error)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer f.Close()
	r := record.NewReader(f, filepath.Base(path))
	for i := 0; r.Scan(); i++ {
		rec, err := r.Record()
		fn(i, rec, err)
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("report: reading %s: %w", path, err)
	}
	return nil
}

// readConfig takes the title and a few facts from config.json: the
// resolved config, possibly wrapped with versions and model digests. Its
// absence is not an error; a file that is not JSON is a warning.
func (s *Summary) readConfig(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		return fmt.Errorf("report: %s is not a JSON object, ignored: %v", path, err)
	}
	cfg := top
	if inner, ok := top["config"].(map[string]any); ok {
		cfg = inner
	}
	if name, ok := cfg["name"].(string); ok && name != "" {
		s.Title = name
		s.Meta = append(s.Meta, Field{"config", name})
	}
	if be, ok := cfg["backend"].(map[string]any); ok {
		if o, ok := be["ollama"].(map[string]any); ok {
			host, _ := o["host"].(string)
			s.Meta = append(s.Meta, Field{"backend", strings.TrimSpace("ollama " + host)})
		} else if r, ok := be["replay"].(string); ok && r != "" {
			s.Meta = append(s.Meta, Field{"backend", "replay " + r})
		}
	}
	if sv, ok := cfg["server"].(map[string]any); ok {
		switch {
		case sv["builtin"] != nil:
			s.Meta = append(s.Meta, Field{"server", "builtin"})
		case sv["url"] != nil:
			s.Meta = append(s.Meta, Field{"server", fmt.Sprint(sv["url"])})
		case sv["command"] != nil:
			if cmd, ok := sv["command"].([]any); ok {
				parts := make([]string, len(cmd))
				for i, p := range cmd {
					parts[i] = fmt.Sprint(p)
				}
				s.Meta = append(s.Meta, Field{"server", strings.Join(parts, " ")})
			}
		}
	}
	// Other top-level scalars (versions, stamps) and string maps (model
	// digests) of the wrapper or the config, sorted by name.
	skip := map[string]bool{"name": true, "backend": true, "server": true, "config": true, "output": true}
	var extra []Field
	for _, m := range []map[string]any{top, cfg} {
		for k, v := range m {
			if skip[k] {
				continue
			}
			switch v := v.(type) {
			case string, float64, bool:
				extra = append(extra, Field{k, fmt.Sprint(v)})
			case map[string]any:
				for sk, sv := range v {
					if str, ok := sv.(string); ok {
						extra = append(extra, Field{k + "." + sk, str})
					}
				}
			}
		}
		if len(cfg) == len(top) {
			break // not wrapped: one pass
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].Name < extra[j].Name })
	s.Meta = append(s.Meta, dedupFields(extra)...)
	return nil
}

func dedupFields(fs []Field) []Field {
	var out []Field
	for i, f := range fs {
		if i > 0 && fs[i-1] == f {
			continue
		}
		out = append(out, f)
	}
	return out
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
