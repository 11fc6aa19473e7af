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
	caseFieldsBegin   = "// BEGIN case fields"
	caseFieldsEnd     = "// END case fields\n"
	expectFieldsBegin = "// BEGIN expect fields"
	expectFieldsEnd   = "// END expect fields\n"
)

// cueDef is one CUE definition generated from a Go struct type: each of
// its fields with a cue tag. With doc, the type's doc comment (its first
// paragraph) documents the definition too; the others are documented
// where toolward.cue joins their fields into the whole struct (#Case,
// #User, #Golden, #Probe).
type cueDef struct {
	def, goType string
	doc         bool
}

// caseDefs are the CUE definitions generated from the case types of
// types.go, in the order they are written.
var caseDefs = []cueDef{
	{"#CaseFields", "Case", false},
	{"#UserFields", "User", false},
	{"#GoldenFields", "Golden", false},
	{"#GoldenCall", "GoldenCall", true},
	{"#GoldenTurn", "GoldenTurn", true},
	{"#Message", "Message", true},
}

// expectDefs are the CUE definitions generated from the expectation
// types of package matchers (matchers/format.go).
var expectDefs = []cueDef{
	{"#Expect", "Expect", true},
	{"#Rules", "Rules", true},
	{"#TurnRules", "TurnRules", true},
	{"#Call", "ExpectedCall", true},
	{"#ProbeFields", "StateProbe", false},
}

// caseFieldsCUE renders the case field definitions from the Go types in
// types.go.
func caseFieldsCUE() ([]byte, error) {
	return fieldsCUE("types.go", caseFieldsBegin+`: generated from schema.Case and the types
// it uses (their yaml and cue tags and doc comments, in types.go) by
// `+"`go generate ./schema/...`"+`; edit the Go types, not this.
`, caseDefs, caseFieldsEnd)
}

// expectFieldsCUE renders the expectation's definitions from the Go types
// of matchers/format.go.
func expectFieldsCUE() ([]byte, error) {
	return fieldsCUE("../matchers/format.go", expectFieldsBegin+`: generated from matchers.Expect and the
// types it uses (their yaml and cue tags and doc comments, in
// matchers/format.go) by `+"`go generate ./schema/...`"+`; edit the Go
// types, not this.
`, expectDefs, expectFieldsEnd)
}

// fieldsCUE renders defs from the Go struct types of file, between
// header and end: for each field with a cue tag, its yaml key, required
// (!) when the yaml tag has no omitempty (a writer always writes it) and
// optional (?) with it, the cue tag as the constraint, and the field's
// doc comment as its CUE comment. An inline embedded struct (yaml
// ",inline") is the embedding of the definition its cue tag names. A
// field's trailing line comment is for Go readers only and is not
// copied.
func fieldsCUE(file, header string, defs []cueDef, end string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
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
	b.WriteString(header)
	for _, d := range defs {
		ts := types[d.goType]
		if ts == nil {
			return nil, fmt.Errorf("%s has no type %s", file, d.goType)
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
			if len(fd.Names) == 0 {
				if name != "" || opts != "inline" || !strings.HasPrefix(constraint, "#") {
					return nil, fmt.Errorf("%s: an embedded field with a cue tag needs yaml \",inline\" and a definition", fset.Position(fd.Pos()))
				}
				lines = append(lines, [3]string{"", "", constraint})
				continue
			}
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
	b.WriteString(end)
	return b.Bytes(), nil
}

// writeFields writes doc, label: value lines indented by a tab, each
// doc line for line as given (a Go doc comment breaks it as CUE's would:
// a struct field is indented by one tab in both), and the values of
// fields without a doc aligned, as cue fmt writes them. A line without a
// label is an embedding: its value alone.
func writeFields(b *bytes.Buffer, lines [][3]string) {
	w := 0
	for _, l := range lines {
		w = max(w, len(l[1]))
	}
	for _, l := range lines {
		if l[1] == "" {
			b.WriteString("\t" + l[2] + "\n")
			continue
		}
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

// TestExpectFieldsCUEUpToDate: the expectation part of toolward.cue is
// what the Go expectation types of package matchers generate.
func TestExpectFieldsCUEUpToDate(t *testing.T) {
	want, err := expectFieldsCUE()
	if err != nil {
		t.Fatal(err)
	}
	checkCUEBlock(t, expectFieldsBegin, expectFieldsEnd, want, "expectation part")
}
