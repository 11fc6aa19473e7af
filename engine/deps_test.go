package engine_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/toolward/toolward/"

// The stages' dependency rules (see the package doc): each entry says
// which packages (of the module, by import path prefix) must not reach
// which others, directly or through any chain of imports.
var depRules = []struct {
	why       string
	from      []string // import paths; a path ending in "/" is a prefix
	forbidden []string
}{
	{
		why: "analysis (score, report, diff, statistics) reads results and cases; it must not link the runtime, the bundled server or CUE",
		from: []string{
			mod + "engine/score", mod + "engine/report", mod + "engine/report/", mod + "engine/diff",
			mod + "engine/results", mod + "engine/record", mod + "engine/plan", mod + "schema", mod + "matchers",
		},
		forbidden: []string{
			"cuelang.org/", mod + "schema/runconfig",
			mod + "mcpserver", mod + "mcpserver/", "github.com/ncruces/go-sqlite3", "github.com/ncruces/go-sqlite3/",
			"github.com/mark3labs/mcp-go/", "github.com/ollama/ollama/",
			mod + "engine", mod + "engine/agent", mod + "engine/session", mod + "engine/preflight",
			mod + "engine/progress", mod + "engine/toolset", mod + "engine/backend/",
		},
	},
	{
		why: "the runtime must not import the bundled server: cmd/toolward hands it in (engine.Options.Builtin)",
		from: []string{
			mod + "engine", mod + "engine/agent", mod + "engine/session", mod + "engine/backend", mod + "engine/backend/",
			mod + "engine/preflight", mod + "engine/toolset", mod + "engine/score", mod + "engine/plan",
		},
		forbidden: []string{mod + "mcpserver", mod + "mcpserver/", "github.com/ncruces/go-sqlite3", "github.com/ncruces/go-sqlite3/"},
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
