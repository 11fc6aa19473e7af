package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/internal/generate/bfcl"
	"github.com/toolward/toolward/mcpserver"
	"github.com/toolward/toolward/schema"
)

func init() {
	register(&command{name: "import", summary: "convert a benchmark into cases: import bfcl DATA_DIR --out DIR", run: runImport})
}

const importUsage = `usage: toolward import bfcl DATA_DIR --out DIR [--categories C,C…]

Converts the single-turn categories of the Berkeley Function Calling
Leaderboard (BFCL v4 data in its own layout: BFCL_v4_<category>.json
question files and possible_answer/) into a toolward suite under DIR:

  cases/<category>.yaml      one case per entry; the case id is the BFCL id
  catalog/<category>.yaml    the functions, as tools of the bundled server
  cassettes/<category>.yaml  a replayed model that gives each golden
  bfcl.cue                   a config running all of it offline
  case.schema.json           the case JSON Schema, for editors

Imported: simple_python, simple_java, simple_javascript, multiple,
parallel, parallel_multiple, irrelevance and their live_ variants
(live_relevance passes when the model makes a call). Memory, web search
and format sensitivity are out of scope: their files are skipped and
listed. DIR must not exist or be empty. Then:

  toolward validate DIR/cases DIR/bfcl.cue
  toolward run DIR/bfcl.cue

The multi-turn categories (multi_turn_base, _miss_func, _miss_param,
_long_context) become conversations against BFCL's own back-end classes,
run by a small Python MCP server; they need DATA_DIR to be a BFCL
installation's bfcl_eval/data (a gorilla checkout or pip install
bfcl-eval) and python3 with mpmath, else they are skipped, saying why:

  cases/multi_turn/<category>.yaml   one conversation per entry
  multi_turn_cassettes/              a replayed model that gives each golden
  server/bfcl_mcp.py, tools.json     the server and the tools it serves
  bfcl_multi_turn.cue                a config running them (toolward run it)

docs/bfcl.md lists where toolward's verdicts differ from BFCL's checker.

Flags:
`

func runImport(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, importUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] != "bfcl" {
		fmt.Fprintf(stderr, "toolward import: unknown format %q (known: bfcl)\n", args[0])
		return 2
	}
	fs := newFlags("import bfcl", importUsage, true, stderr)
	out := fs.String("out", "", "write the suite to `DIR` (must not exist or be empty)")
	cats := fs.String("categories", "", "import only these comma-separated `categories` (default: every single-turn one found)")
	pos, code, ok := parseArgs(fs, args[1:])
	if !ok {
		return code
	}
	switch {
	case len(pos) != 1:
		fmt.Fprintln(stderr, "toolward import bfcl: want one DATA_DIR (see -h)")
		return 2
	case *out == "":
		fmt.Fprintln(stderr, "toolward import bfcl: --out DIR is required")
		return 2
	}
	var only []string
	for _, c := range strings.Split(*cats, ",") {
		if c = strings.TrimSpace(c); c != "" {
			only = append(only, c)
		}
	}
	if err := importBFCL(pos[0], *out, only, stdout); err != nil {
		fmt.Fprintln(stderr, "toolward import bfcl:", err)
		return 1
	}
	return 0
}

func importBFCL(dataDir, out string, only []string, stdout io.Writer) error {
	d, err := bfcl.Read(dataDir, only)
	if err != nil {
		return err
	}
	reserved, err := builtinToolNames()
	if err != nil {
		return err
	}
	s := bfcl.Convert(d, reserved)
	caseSchema := schema.CaseJSONSchema()
	var l *bfcl.Layout
	if len(s.Categories) > 0 || !bfcl.WantsMultiTurn(dataDir, only) {
		if l, err = bfcl.Write(s, out, out, caseSchema); err != nil {
			return err
		}
	} else if err := bfcl.CheckEmpty(out); err != nil {
		return err
	}
	for _, c := range s.Categories {
		fmt.Fprintf(stdout, "%-24s %4d cases\n", c, len(s.Cases[c]))
	}
	mt, err := importMultiTurn(dataDir, out, only, s, stdout)
	if err != nil {
		return err
	}
	if l == nil && mt != nil { // multi-turn categories only
		if err := os.WriteFile(filepath.Join(out, "case.schema.json"), caseSchema, 0o644); err != nil {
			return err
		}
	}
	if r := s.Renamed(); len(r) > 0 {
		fmt.Fprintf(stdout, "renamed %d functions whose name a different definition or a bundled tool holds (each case's description says which):", len(r))
		for _, t := range r {
			fmt.Fprintf(stdout, " %s=%s", t.Name, t.BFCLName())
		}
		fmt.Fprintln(stdout)
	}
	for _, sk := range s.Skipped {
		fmt.Fprintf(stdout, "skipped %s: %s\n", report.DisplayLine(sk.What), report.DisplayLine(sk.Reason))
	}
	if l != nil {
		fmt.Fprintf(stdout, "wrote %d cases and %d tools to %s; run: toolward run %s/bfcl.cue\n", l.Cases, l.Tools, out, strings.TrimSuffix(out, "/"))
	}
	if mt != nil {
		n := 0
		for _, c := range mt.Categories {
			n += mt.Cases[c]
		}
		fmt.Fprintf(stdout, "wrote %d multi-turn conversations and %d tools of BFCL's back ends (%s); run: toolward run %s/%s\n", n, mt.Tools, mt.Root, strings.TrimSuffix(out, "/"), bfcl.MultiTurnConfig)
	}
	return nil
}

// importMultiTurn imports BFCL's multi-turn categories after the
// single-turn suite, replacing their "skipped" lines with what it wrote;
// when python3, mpmath or BFCL's back ends are missing it says so and
// leaves them out (an error only when they were asked for by name).
func importMultiTurn(dataDir, out string, only []string, s *bfcl.Suite, stdout io.Writer) (*bfcl.MultiTurnLayout, error) {
	if !bfcl.WantsMultiTurn(dataDir, only) {
		return nil, nil
	}
	mt, err := bfcl.ImportMultiTurn(dataDir, out, out, "python3", only)
	if err != nil {
		for _, c := range only {
			if slices.Contains(bfcl.MultiTurnCategories, c) {
				return nil, fmt.Errorf("multi-turn categories: %w", err)
			}
		}
		fmt.Fprintf(stdout, "multi-turn categories NOT imported: %v\n", err)
		return nil, nil
	}
	s.Skipped = slices.DeleteFunc(s.Skipped, func(sk bfcl.Skipped) bool {
		for _, c := range mt.Categories {
			if strings.HasSuffix(sk.What, "_"+c+".json") {
				return true
			}
		}
		return false
	})
	s.Skipped = append(s.Skipped, mt.Skipped...)
	for _, c := range mt.Categories {
		fmt.Fprintf(stdout, "%-24s %4d conversations\n", c, mt.Cases[c])
	}
	return mt, nil
}

// builtinToolNames returns the tools the bundled server has before a
// catalog is added, which imported tools must not reuse.
func builtinToolNames() (map[string]bool, error) {
	srv, err := mcpserver.New(mcpserver.Options{})
	if err != nil {
		return nil, fmt.Errorf("starting the bundled server to list its tools: %w", err)
	}
	names := map[string]bool{}
	for _, n := range srv.ToolNames() {
		names[n] = true
	}
	return names, nil
}
