package layout_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/toolward/toolward/"

// The rooms' dependency rules (see the package doc): each entry says
// which packages (of the module, by import path; a path ending in "/" is
// a prefix) must not reach which others, directly or through any chain
// of imports.
var depRules = []struct {
	why       string
	from      []string
	forbidden []string
}{
	{
		why:       "the cell is the lowest package of the module",
		from:      []string{mod + "schema/cell"},
		forbidden: []string{mod},
	},
	{
		why:       "the matcher language stands on the cell alone",
		from:      []string{mod + "matchers", mod + "matchers/textcall"},
		forbidden: []string{mod + "schema", mod + "schema/plan", mod + "schema/record", mod + "schema/results", mod + "schema/runconfig", mod + "engine", mod + "engine/", mod + "internal/analysis/", mod + "internal/generate/", mod + "mcpserver"},
	},
	{
		why:  "formats, judging and analysis read and write files; they link neither the runtime, the bundled server, MCP, model clients nor CUE",
		from: []string{mod + "schema", mod + "schema/cell", mod + "schema/plan", mod + "schema/record", mod + "schema/results", mod + "matchers", mod + "matchers/", mod + "internal/analysis/"},
		forbidden: []string{
			mod + "engine", mod + "engine/", mod + "mcpserver", mod + "mcpserver/", mod + "internal/generate/", mod + "schema/runconfig",
			"cuelang.org/", "github.com/mark3labs/mcp-go/", "github.com/ollama/ollama/", "github.com/ncruces/go-sqlite3", "github.com/ncruces/go-sqlite3/",
		},
	},
	{
		why:       "formats and judging do not import analysis",
		from:      []string{mod + "schema", mod + "schema/", mod + "matchers", mod + "matchers/"},
		forbidden: []string{mod + "internal/analysis/"},
	},
	{
		why:       "the runtime does not import the bundled server (cmd/toolward hands it in: engine.Options.Builtin), analysis or the generators",
		from:      []string{mod + "engine", mod + "engine/"},
		forbidden: []string{mod + "mcpserver", mod + "mcpserver/", mod + "internal/analysis/", mod + "internal/generate/", "github.com/ncruces/go-sqlite3", "github.com/ncruces/go-sqlite3/"},
	},
	{
		why:       "the generators write suites as data; they do not run them",
		from:      []string{mod + "internal/generate/"},
		forbidden: []string{mod + "engine", mod + "engine/", mod + "mcpserver", mod + "mcpserver/", mod + "internal/analysis/"},
	},
	{
		why:       "the bundled server is a server of its own: it shares only the user-file reader and the embedded fixtures",
		from:      []string{mod + "mcpserver", mod + "mcpserver/"},
		forbidden: []string{mod + "engine", mod + "engine/", mod + "schema", mod + "schema/", mod + "matchers", mod + "matchers/", mod + "internal/analysis/", mod + "internal/generate/"},
	},
	{
		why:       "test fakes are never linked into the binary",
		from:      []string{mod + "cmd/", mod + "engine", mod + "engine/", mod + "schema", mod + "schema/", mod + "matchers", mod + "matchers/", mod + "mcpserver", mod + "mcpserver/", mod + "internal/", mod + "fixtures"},
		forbidden: []string{mod + "fixtures/fakes/"},
	},
}

// TestDependencyRules checks depRules against the module's import graph,
// as `go list -deps` reports it (test files do not count: a test may
// build the bundled server).
func TestDependencyRules(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(gobin, "list", "-e", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", mod+"...").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	g := parseImports(out)
	for _, r := range depRules {
		for _, p := range r.from {
			if _, ok := g[p]; !ok && !strings.HasSuffix(p, "/") {
				t.Errorf("depRules names %s, which is not a package of the module: update the rule", p)
			}
		}
		for _, pkg := range packagesMatching(g, r.from) {
			if chain := importChain(g, pkg, r.forbidden); chain != nil {
				t.Errorf("%s imports %s:\n\t%s\nRule: %s", pkg, chain[len(chain)-1], strings.Join(chain, "\n\t-> "), r.why)
			}
		}
	}
}

// TestImportChain: the graph walk finds an indirect forbidden import and
// names the chain, so TestDependencyRules can fail.
func TestImportChain(t *testing.T) {
	g := parseImports([]byte("a b c\nb d\nc\nd x/y\nx/y\n"))
	if got, want := importChain(g, "a", []string{"x/"}), []string{"a", "b", "d", "x/y"}; !slices.Equal(got, want) {
		t.Errorf("chain = %v, want %v", got, want)
	}
	if got := importChain(g, "c", []string{"x/"}); got != nil {
		t.Errorf("c: chain %v, want none", got)
	}
	if got := importChain(g, "a", []string{"x"}); got != nil {
		t.Errorf("exact path x matched x/y: %v", got)
	}
}

// parseImports reads lines "pkg imp1 imp2 …" into a graph.
func parseImports(out []byte) map[string][]string {
	g := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 {
			g[f[0]] = f[1:]
		}
	}
	return g
}

// matches reports whether path is one of pats, a pattern ending in "/"
// matching every path below it.
func matches(path string, pats []string) bool {
	for _, p := range pats {
		if path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

func packagesMatching(g map[string][]string, pats []string) []string {
	var out []string
	for p := range g {
		if matches(p, pats) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// importChain returns the shortest import chain from pkg to a package
// matching forbidden, or nil when there is none.
func importChain(g map[string][]string, pkg string, forbidden []string) []string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p != pkg && matches(p, forbidden) {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, q := range g[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}
