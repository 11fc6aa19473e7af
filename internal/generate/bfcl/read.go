package bfcl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Limits on what Read accepts.
const (
	// MaxLineSize is the longest JSON line of a data file.
	MaxLineSize = 16 << 20
	// MaxEntries is the most entries Read takes from one directory.
	MaxEntries = 100_000
)

// Kind is how a category is judged.
type Kind int

// The kinds of single-turn category.
const (
	Simple           Kind = iota // exactly one call, to the one function
	Multiple                     // exactly one call, to the right one of several functions
	Parallel                     // several calls to one function, any order
	ParallelMultiple             // several calls to several functions, any order
	Irrelevance                  // no call at all
	Relevance                    // at least one call (live_relevance)
)

// Language is the language a category's functions are written in; it
// decides the types and how values are passed.
type Language string

// The languages of BFCL's categories.
const (
	Python     Language = "python"
	Java       Language = "java"
	JavaScript Language = "javascript"
)

// Category is one BFCL category as found in a data directory.
type Category struct {
	Name     string // e.g. "simple_python", "live_multiple"
	Kind     Kind
	Language Language
	File     string // the question file
	Entries  []Entry
	// Answers maps entry id to its ground truth (absent for irrelevance
	// and relevance, which have no answer file).
	Answers map[string][]map[string]map[string][]any
}

// Entry is one question: BFCL's {id, question, function}.
type Entry struct {
	ID       string      `json:"id"`
	Question [][]Message `json:"question"`
	Function []Function  `json:"function"`
}

// Message is one chat message of a question.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Function is one function schema in BFCL's notation.
type Function struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`

	rawParams json.RawMessage // Parameters as the file writes them, for key order
}

// UnmarshalJSON reads a function and keeps its parameters' JSON text.
func (fn *Function) UnmarshalJSON(b []byte) error {
	type plain Function
	var raw struct {
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(b, (*plain)(fn)); err != nil {
		return err
	}
	json.Unmarshal(b, &raw)
	fn.rawParams = raw.Parameters
	return nil
}

// Skipped is a file or entry Read or Convert left out, and why.
type Skipped struct {
	What   string // a file name or an entry id
	Reason string
}

// Data is what Read found.
type Data struct {
	Categories []*Category
	Skipped    []Skipped
}

var fileRE = regexp.MustCompile(`^BFCL_v(\d+)_(.+)\.json$`)

// outOfScope maps a category prefix to why it is not imported.
var outOfScope = []struct{ prefix, reason string }{
	{"multi_turn", "multi-turn categories are conversations against BFCL's back ends, which the import needs beside the data (a BFCL installation's bfcl_eval/data) with python3 and mpmath"},
	{"memory", "memory categories need BFCL's memory back end across turns; out of scope"},
	{"web_search", "web search categories need live web search and multi-turn state; out of scope"},
	{"format_sensitivity", "format sensitivity varies BFCL's prompt formats for prompting models; out of scope"},
}

// categoryKind returns the kind and language of a single-turn category,
// or ok false. Both v4 names (simple_python) and v3 names (simple, java,
// javascript) are accepted; live_ variants share their base's rules.
func categoryKind(name string) (Kind, Language, bool) {
	base := strings.TrimPrefix(name, "live_")
	switch base {
	case "simple", "simple_python":
		return Simple, Python, true
	case "simple_java", "java":
		return Simple, Java, name == base
	case "simple_javascript", "javascript":
		return Simple, JavaScript, name == base
	case "multiple":
		return Multiple, Python, true
	case "parallel":
		return Parallel, Python, true
	case "parallel_multiple":
		return ParallelMultiple, Python, true
	case "irrelevance":
		return Irrelevance, Python, true
	case "relevance":
		return Relevance, Python, name != base
	}
	return 0, "", false
}

// SupportedCategories lists the category names Read imports.
var SupportedCategories = []string{
	"simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple", "irrelevance",
	"live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance",
}

// Read reads the BFCL data in dir. only, when not empty, names the
// categories to import; a name that is neither supported nor present is
// an error. Files of other categories are reported in Data.Skipped.
func Read(dir string, only []string) (*Data, error) {
	names, err := filepath.Glob(filepath.Join(dir, "BFCL_v*_*.json"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no BFCL data files (BFCL_v4_<category>.json)", dir)
	}
	sort.Strings(names)
	found := map[string]string{}
	d := &Data{}
	want := map[string]bool{}
	for _, c := range only {
		want[c] = true
	}
	total := 0
	for _, p := range names {
		m := fileRE.FindStringSubmatch(filepath.Base(p))
		if m == nil {
			continue
		}
		cat := m[2]
		if prev, ok := found[cat]; ok {
			return nil, fmt.Errorf("%s: category %s is also in %s; keep one version", p, cat, prev)
		}
		found[cat] = p
		kind, lang, ok := categoryKind(cat)
		if !ok {
			if len(want) == 0 || want[cat] {
				d.Skipped = append(d.Skipped, Skipped{What: filepath.Base(p), Reason: skipReason(cat)})
			}
			continue
		}
		if len(want) > 0 && !want[cat] {
			continue
		}
		c := &Category{Name: cat, Kind: kind, Language: lang, File: p}
		if err := readJSONLines(p, func(line []byte) error {
			var e Entry
			if err := json.Unmarshal(line, &e); err != nil {
				return err
			}
			if e.ID == "" {
				return fmt.Errorf("entry without id")
			}
			c.Entries = append(c.Entries, e)
			total++
			if total > MaxEntries {
				return fmt.Errorf("more than %d entries", MaxEntries)
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if kind != Irrelevance && kind != Relevance {
			ap := filepath.Join(dir, "possible_answer", filepath.Base(p))
			if c.Answers, err = readAnswers(ap); err != nil {
				return nil, err
			}
		}
		d.Categories = append(d.Categories, c)
	}
	for _, c := range only {
		if _, ok := found[c]; ok {
			continue
		}
		known := sortedKeys(found)
		return nil, fmt.Errorf("category %q: no BFCL_v*_%s.json in %s (found: %s)", c, c, dir, strings.Join(known, ", "))
	}
	return d, nil
}

func skipReason(cat string) string {
	for _, o := range outOfScope {
		if strings.HasPrefix(cat, o.prefix) {
			return o.reason
		}
	}
	return "unknown category (supported: " + strings.Join(SupportedCategories, ", ") + ")"
}

// readAnswers reads a possible_answer file: id -> ground truth.
func readAnswers(p string) (map[string][]map[string]map[string][]any, error) {
	out := map[string][]map[string]map[string][]any{}
	err := readJSONLines(p, func(line []byte) error {
		var a struct {
			ID          string                      `json:"id"`
			GroundTruth []map[string]map[string]any `json:"ground_truth"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber() // 10 and 10.0 are different answers to BFCL
		if err := dec.Decode(&a); err != nil {
			return err
		}
		if a.ID == "" {
			return fmt.Errorf("answer without id")
		}
		out[a.ID] = acceptable(a.GroundTruth)
		return nil
	})
	if os.IsNotExist(err) {
		return nil, fmt.Errorf("%s: missing: every category but irrelevance and relevance has a possible_answer file", p)
	}
	return out, err
}

// acceptable makes every parameter's answer a list of acceptable values;
// a bare value (BFCL always writes lists) is a list of one.
func acceptable(gt []map[string]map[string]any) []map[string]map[string][]any {
	out := make([]map[string]map[string][]any, len(gt))
	for i, call := range gt {
		out[i] = map[string]map[string][]any{}
		for fn, params := range call {
			m := map[string][]any{}
			for k, v := range params {
				if l, ok := v.([]any); ok {
					m[k] = l
				} else {
					m[k] = []any{v}
				}
			}
			out[i][fn] = m
		}
	}
	return out
}

// readJSONLines calls fn for every non-blank line of the file p; an error
// names the file and line.
func readJSONLines(p string, fn func([]byte) error) error {
	f, err := os.Open(p)
	if err != nil {
		if os.IsNotExist(err) {
			return err
		}
		return fmt.Errorf("reading %s: %w", p, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineSize)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("%s:%d: %v", p, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %v (lines are limited to %d MiB)", p, n+1, err, MaxLineSize>>20)
	}
	return nil
}
