package runconfig

import (
	"fmt"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/scanner"
	"cuelang.org/go/cue/token"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
)

// MaxCUEElements bounds the values of one list, and the fields of one
// struct, written in a config. CUE (v0.17) adds each element to a node by
// scanning the ones before it, so evaluating a list takes time quadratic
// in its length: 10,000 seeds evaluate in about 0.1 s, 100,000 in about
// 10 s. Configs stay far below the limit; toolward's own handling of an
// axis is linear.
const MaxCUEElements = 10000

// MaxCUEDepth bounds how deeply a config nests: each label (a: b: c: 1
// is three levels) and each bracket counts. CUE's parser recurses once
// per level without a bound for labels (300,000 levels overflow the
// stack, a crash no recover can catch) and its closedness checks take
// time quadratic in the depth. Configs nest less than ten deep.
const MaxCUEDepth = 100

// checkCUESize refuses, before CUE parses or evaluates src, a config
// nested more than MaxCUEDepth deep and a list or struct literal with
// more than MaxCUEElements elements. A file that does not parse passes:
// CUE reports its syntax error.
func checkCUESize(file string, src []byte) schema.Errors {
	if e := checkCUEDepth(file, src); e != nil {
		return schema.Errors{e}
	}
	f, err := parser.ParseFile(file, src)
	if err != nil {
		return nil
	}
	return checkCUEElements(file, f)
}

// checkCUEDepth scans src token by token (no recursion) and returns an
// error at the first token nested more than MaxCUEDepth deep, counting
// open brackets and the labels of each bracket's current field.
func checkCUEDepth(file string, src []byte) *schema.Error {
	var s scanner.Scanner
	s.Init(token.NewFile(file, -1, len(src)), src, nil, 0)
	type frame struct {
		labels int  // labels of the current field at this level
		interp bool // the parenthesis of a string interpolation
	}
	stack := []frame{{}}
	labels := 0 // sum of the frames' labels
	interpNext := false
	for {
		pos, tok, _ := s.Scan()
		top := &stack[len(stack)-1]
		switch tok {
		case token.EOF:
			return nil
		case token.LBRACE, token.LBRACK, token.LPAREN:
			stack = append(stack, frame{interp: tok == token.LPAREN && interpNext})
		case token.RBRACE, token.RBRACK, token.RPAREN:
			if len(stack) == 1 {
				continue // unbalanced: the parser reports it
			}
			labels -= top.labels
			stack = stack[:len(stack)-1]
			if top.interp {
				// The rest of the string, up to its end or the next \(.
				interpNext = strings.HasSuffix(s.ResumeInterpolation(), "(")
				continue
			}
		case token.COMMA:
			labels -= top.labels
			top.labels = 0
		case token.COLON:
			top.labels++
			labels++
		}
		// An interpolation's expression opens with the next token.
		interpNext = tok == token.INTERPOLATION
		if depth := len(stack) - 1 + labels; depth > MaxCUEDepth {
			return &schema.Error{File: file, Line: pos.Line(), Col: pos.Column(),
				Msg: fmt.Sprintf("nested more than %d levels deep (labels and brackets)", MaxCUEDepth)}
		}
	}
}

// checkCUEElements refuses list and struct literals with more than
// MaxCUEElements elements.
func checkCUEElements(file string, f *ast.File) schema.Errors {
	var errs schema.Errors
	var path []any // labels of the fields enclosing the node
	tooMany := func(n ast.Node, count int, what string) {
		pos := n.Pos()
		errs = append(errs, &schema.Error{File: file, Line: pos.Line(), Col: pos.Column(), Path: matchers.PathString(path),
			Msg: fmt.Sprintf("%d %s, over the limit of %d (write fewer, or split the experiment into several configs)", count, what, MaxCUEElements)})
	}
	before := func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			name, _, _ := ast.LabelName(n.Label)
			path = append(path, name)
		case *ast.ListLit:
			if len(n.Elts) > MaxCUEElements {
				tooMany(n, len(n.Elts), "values in one list")
				return false
			}
		case *ast.StructLit:
			if len(n.Elts) > MaxCUEElements {
				tooMany(n, len(n.Elts), "fields in one struct")
				return false
			}
		}
		return true
	}
	after := func(n ast.Node) {
		if _, ok := n.(*ast.Field); ok {
			path = path[:len(path)-1]
		}
	}
	if len(f.Decls) > MaxCUEElements {
		tooMany(f, len(f.Decls), "top-level fields")
		return errs
	}
	ast.Walk(f, before, after)
	return errs
}
