package schema

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

const (
	caseFieldsBegin = "// BEGIN case fields"
	caseFieldsEnd   = "// END case fields\n"
)

// caseDefs are the CUE definitions generated from the case types of
// types.go, in the order they are written: each type's fields with a cue
// tag. With doc, the type's doc comment (its first paragraph) documents
// the definition too; the others are documented where toolward.cue joins
// their fields into the whole struct (#Case, #User, #Golden).
var caseDefs = []struct {
	def, goType string
	doc         bool
}{
	{"#CaseFields", "Case", false},
	{"#UserFields", "User", false},
	{"#GoldenFields", "Golden", false},
	{"#GoldenCall", "GoldenCall", true},
	{"#GoldenTurn", "GoldenTurn", true},
	{"#Message", "Message", true},
}

// caseFieldsCUE renders the case field definitions from the Go types in
// types.go: for each field with a cue tag, its yaml key, required (!)
// when the yaml tag has no omitempty (a writer always writes it) and
// optional (?) with it, the cue tag as the constraint, and the field's
// doc comment as its CUE comment. A field's trailing line comment is for
// Go readers only and is not copied.
func caseFieldsCUE() ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "types.go", nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	types := map[string]*ast.TypeSpec{}
	docs := map[string]*ast.CommentGroup{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			ts := s.(*ast.TypeSpec)
			types[ts.Name.Name] = ts
			docs[ts.Name.Name] = ts.Doc
			if docs[ts.Name.Name] == nil {
				docs[ts.Name.Name] = g.Doc
			}
		}
	}
	var b bytes.Buffer
	b.WriteString(caseFieldsBegin + `: generated from schema.Case and the types
// it uses (their yaml and cue tags and doc comments, in types.go) by
// ` + "`go generate ./schema/...`" + `; edit the Go types, not this.
`)
	for _, d := range caseDefs {
		ts := types[d.goType]
		if ts == nil {
			return nil, fmt.Errorf("types.go has no type %s", d.goType)
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return nil, fmt.Errorf("%s is not a struct", d.goType)
		}
		b.WriteString("\n")
		if d.doc {
			doc := docs[d.goType]
			if doc == nil {
				return nil, fmt.Errorf("type %s has no doc comment", d.goType)
			}
			for i, c := range doc.List {
				text := strings.TrimPrefix(c.Text, "//")
				if strings.TrimSpace(text) == "" {
					break // the first paragraph only
				}
				if i == 0 {
					text = strings.Replace(text, " "+d.goType, " "+d.def, 1)
				}
				b.WriteString("//" + text + "\n")
			}
		}
		b.WriteString(d.def + ": {\n")
		var lines [][3]string
		for _, fd := range st.Fields.List {
			if fd.Tag == nil {
				continue
			}
			raw, err := strconv.Unquote(fd.Tag.Value)
			if err != nil {
				return nil, err
			}
			tag := reflect.StructTag(raw)
			constraint, ok := tag.Lookup("cue")
			if !ok {
				continue
			}
			name, opts, _ := strings.Cut(tag.Get("yaml"), ",")
			if name == "" || name == "-" || constraint == "" {
				return nil, fmt.Errorf("%s: a field with a cue tag needs a yaml key and a constraint", fset.Position(fd.Pos()))
			}
			label := name + "!:"
			if strings.Contains(","+opts+",", ",omitempty,") {
				label = name + "?:"
			}
			doc := ""
			if fd.Doc != nil {
				doc = fd.Doc.Text()
			}
			lines = append(lines, [3]string{doc, label, constraint})
		}
		writeFields(&b, lines)
		b.WriteString("}\n")
	}
	b.WriteString(caseFieldsEnd)
	return b.Bytes(), nil
}

// writeFields writes doc, label: value lines indented by a tab, each
// doc line for line as given (a Go doc comment breaks it as CUE's would:
// a struct field is indented by one tab in both), and the values of
// fields without a doc aligned, as cue fmt writes them.
func writeFields(b *bytes.Buffer, lines [][3]string) {
	w := 0
	for _, l := range lines {
		w = max(w, len(l[1]))
	}
	for _, l := range lines {
		if l[0] == "" {
			b.WriteString("\t" + l[1] + strings.Repeat(" ", w-len(l[1])) + " " + l[2] + "\n")
			continue
		}
		for _, line := range strings.Split(strings.TrimSuffix(l[0], "\n"), "\n") {
			b.WriteString(strings.TrimRight("\t// "+line, " ") + "\n")
		}
		b.WriteString("\t" + l[1] + " " + l[2] + "\n") // a comment ends the aligned block
	}
}

// TestCaseFieldsCUEUpToDate: the case field part of toolward.cue is what
// the Go case types generate.
func TestCaseFieldsCUEUpToDate(t *testing.T) {
	want, err := caseFieldsCUE()
	if err != nil {
		t.Fatal(err)
	}
	checkCUEBlock(t, caseFieldsBegin, caseFieldsEnd, want, "case field part")
}
