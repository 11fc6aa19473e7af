package runconfig

import (
	"fmt"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/toolward/toolward/schema"
)

// source is the embedded schema's text.
var source = schema.Source()

// compiled is the schema compiled once per process. A cue.Context is not
// safe for concurrent use, so every use holds mu.
var compiled struct {
	once   sync.Once
	mu     sync.Mutex
	ctx    *cue.Context
	root   cue.Value
	err    error
	spans  []span // source ranges of default values (*x) and matchN alternatives
	config cue.Value
	caseV  cue.Value
}

type span struct{ start, end int } // byte offsets in the schema source

// load compiles the embedded schema, once per process.
func load() error {
	compiled.once.Do(func() {
		compiled.ctx = cuecontext.New()
		compiled.root = compiled.ctx.CompileBytes(source, cue.Filename(schema.SchemaFile))
		if err := compiled.root.Err(); err != nil {
			compiled.err = fmt.Errorf("schema: embedded schema does not compile: %w", err)
			return
		}
		compiled.config = compiled.root.LookupPath(cue.ParsePath("#Config"))
		compiled.caseV = compiled.root.LookupPath(cue.ParsePath("#Case"))
		f, err := parser.ParseFile(schema.SchemaFile, source)
		if err != nil {
			compiled.err = err
			return
		}
		ast.Walk(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.UnaryExpr:
				if n.Op == token.MUL {
					compiled.spans = append(compiled.spans, span{n.X.Pos().Offset(), n.End().Offset()})
				}
			case *ast.CallExpr:
				// The alternatives of matchN(1, [...]) each fail on their
				// own; only matchN's own verdict is worth reporting.
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "matchN" && len(n.Args) == 2 {
					compiled.spans = append(compiled.spans, span{n.Args[1].Pos().Offset(), n.Args[1].End().Offset()})
				}
			}
			return true
		}, nil)
	})
	return compiled.err
}

// inDefault reports whether a schema position lies inside a default
// value (`*[1]` in `*[1] | [...int]`) or a matchN alternative: errors
// there come from a branch the user's value did not choose.
func inDefault(p token.Pos) bool {
	if p.Filename() != schema.SchemaFile {
		return false
	}
	off := p.Offset()
	for _, s := range compiled.spans {
		if off >= s.start && off < s.end {
			return true
		}
	}
	return false
}
