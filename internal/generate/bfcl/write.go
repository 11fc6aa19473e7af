package bfcl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toolward/toolward/schema"
)

// Budgets for one written file, below the loaders' limits (cases 4 MiB,
// catalogs 8 MiB, cassettes 64 MiB): a category that needs more is split
// into numbered parts.
const (
	caseFileBudget     = 3 << 20
	catalogFileBudget  = 6 << 20
	cassetteFileBudget = 32 << 20
)

// Layout names what Write wrote, relative to the output directory.
type Layout struct {
	CaseFiles     []string
	CatalogFiles  []string
	CassetteFiles []string
	Config        string
	Schema        string
	Cases, Tools  int
}

// Write writes the suite under dir: cases/<category>.yaml,
// catalog/<category>.yaml, cassettes/<category>.yaml, case.schema.json
// (caseSchema) and bfcl.cue, a config that runs the cases against the
// bundled server with the catalog, replaying the goldens. configDir is dir
// as the config should spell it (paths in configs are relative to the
// working directory). dir must not exist or be empty.
func Write(s *Suite, dir, configDir string, caseSchema []byte) (*Layout, error) {
	if err := CheckEmpty(dir); err != nil {
		return nil, err
	}
	l := &Layout{Schema: "case.schema.json", Config: "bfcl.cue"}
	files := map[string][]byte{l.Schema: caseSchema}
	header := "# yaml-language-server: $schema=../case.schema.json\n# Imported by `toolward import bfcl`; regenerate rather than edit.\n"
	for _, cat := range s.Categories {
		var caseDocs, tapeDocs [][]byte
		for i := range s.Cases[cat] {
			c := &s.Cases[cat][i]
			b, err := marshal(c)
			if err != nil {
				return nil, fmt.Errorf("case %s: %v", c.ID, err)
			}
			caseDocs = append(caseDocs, b)
			tape, err := cassetteOf(c)
			if err == nil {
				b, err = marshal(tape)
			}
			if err != nil {
				return nil, fmt.Errorf("cassette %s: %v", c.ID, err)
			}
			tapeDocs = append(tapeDocs, b)
		}
		l.Cases += len(caseDocs)
		l.CaseFiles = append(l.CaseFiles, addParts(files, "cases", cat, header, caseDocs, caseFileBudget)...)
		l.CassetteFiles = append(l.CassetteFiles, addParts(files, "cassettes", cat, "", tapeDocs, cassetteFileBudget)...)
		var tools []*Tool
		for _, t := range s.Tools {
			if t.category == cat {
				tools = append(tools, t)
			}
		}
		l.Tools += len(tools)
		var chunks [][]*Tool
		size := 0
		for _, t := range tools {
			b, err := marshal([]*Tool{t})
			if err != nil {
				return nil, fmt.Errorf("tool %s: %v", t.Name, err)
			}
			if len(chunks) == 0 || size+len(b) > catalogFileBudget {
				chunks = append(chunks, nil)
				size = 0
			}
			chunks[len(chunks)-1] = append(chunks[len(chunks)-1], t)
			size += len(b)
		}
		for i, ch := range chunks {
			name := partName("catalog", cat, i)
			b, err := marshal(ch)
			if err != nil {
				return nil, err
			}
			files[name] = append([]byte("# BFCL "+cat+" functions as tools of the bundled server (stub results).\n"), b...)
			l.CatalogFiles = append(l.CatalogFiles, name)
		}
	}
	files[l.Config] = []byte(configText(configDir, l))
	return l, writeFiles(dir, files)
}

// writeFiles writes each file under dir, by its slash-separated name.
func writeFiles(dir string, files map[string][]byte) error {
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// CheckEmpty says why dir cannot take an import: it is not empty.
func CheckEmpty(dir string) error {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s is not empty: import into a new directory (or remove it first)", dir)
	}
	return nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// addParts joins YAML documents into files of at most budget bytes
// (a single larger document gets a file of its own).
func addParts(files map[string][]byte, sub, cat, header string, docs [][]byte, budget int) []string {
	var names []string
	var cur []byte
	flush := func() {
		name := partName(sub, cat, len(names))
		files[name] = append([]byte(header), cur...)
		names = append(names, name)
		cur = nil
	}
	for _, d := range docs {
		if len(cur) > 0 && len(cur)+len(d) > budget {
			flush()
		}
		if len(cur) > 0 {
			cur = append(cur, "---\n"...)
		}
		cur = append(cur, d...)
	}
	if len(cur) > 0 {
		flush()
	}
	return names
}

func partName(sub, cat string, i int) string {
	if i == 0 {
		return sub + "/" + cat + ".yaml"
	}
	return fmt.Sprintf("%s/%s-%d.yaml", sub, cat, i+1)
}

// cassetteOf scripts a model that answers with the case's golden.
func cassetteOf(c *Case) (*schema.Cassette, error) {
	var turns []schema.CassetteTurn
	if c.Golden == nil { // a case no output passes (TagUnpassable)
		return &schema.Cassette{Case: c.ID, Runs: []schema.CassetteRun{{Turns: []schema.CassetteTurn{{Content: answerAfterCalls}}}}}, nil
	}
	if len(c.Golden.Calls) > 0 {
		t := schema.CassetteTurn{}
		for _, gc := range c.Golden.Calls {
			args := json.RawMessage("{}")
			if len(gc.Args) > 0 {
				var err error
				if args, err = json.Marshal(gc.Args); err != nil {
					return nil, err
				}
			}
			t.ToolCalls = append(t.ToolCalls, schema.CassetteCall{Name: gc.Tool, Arguments: args})
		}
		turns = append(turns, t)
	}
	turns = append(turns, schema.CassetteTurn{Content: c.Golden.Answer})
	return &schema.Cassette{Case: c.ID, Runs: []schema.CassetteRun{{Turns: turns}}}, nil
}

// configText is bfcl.cue for the written layout.
func configText(dir string, l *Layout) string {
	j := func(p string) string { return strconv.Quote(filepath.ToSlash(filepath.Join(dir, p))) }
	var cats []string
	for _, f := range l.CatalogFiles {
		cats = append(cats, "\t"+j(f)+",")
	}
	return fmt.Sprintf(`// BFCL single-turn categories imported by `+"`toolward import bfcl`"+`.
// As written it replays each case's golden (the first acceptable BFCL
// answer) from cassettes, offline. For a real model, replace the backend,
// e.g. backend: ollama: {num_ctx: 8192} and models: ["qwen3:0.6b"].
// Paths are relative to the directory toolward runs in.
name:  "bfcl"
cases: [%s]
server: builtin: catalogs: [
%s
]
backend: replay: %s
matrix: {
	models: ["bfcl-golden"]
	// BFCL offers exactly the entry's functions, in its order.
	tools: [{name: "needed", order: "given"}]
}
limits: {max_iterations: 4, run_timeout: "60s", concurrency: 2, retries: 1}
`, j("cases/*.yaml"), strings.Join(cats, "\n"), j("cassettes"))
}
