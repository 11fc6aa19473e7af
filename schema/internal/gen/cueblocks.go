package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/toolward/toolward/schema/cell"
)

// cueBlocks returns the CUE source src with its generated blocks
// rewritten: the axis part from cell.Axes, the case field part from the
// types of dir/types.go, the expect field part from those of
// dir/../matchers/format.go.
func cueBlocks(dir string, src []byte) ([]byte, error) {
	caseFields, err := caseFieldsCUE(dir)
	if err != nil {
		return nil, err
	}
	expectFields, err := expectFieldsCUE(dir)
	if err != nil {
		return nil, err
	}
	for _, b := range []struct {
		begin, end string
		text       []byte
	}{
		{axesBegin, axesEnd, axesCUE()},
		{caseFieldsBegin, caseFieldsEnd, caseFields},
		{expectFieldsBegin, expectFieldsEnd, expectFields},
	} {
		if src, err = replaceBlock(src, b.begin, b.end, b.text); err != nil {
			return nil, err
		}
	}
	return src, nil
}

// replaceBlock returns src with its part from begin through end
// replaced by text.
func replaceBlock(src []byte, begin, end string, text []byte) ([]byte, error) {
	i := bytes.Index(src, []byte(begin))
	j := bytes.Index(src, []byte(end))
	if i < 0 || j < i {
		return nil, fmt.Errorf("toolward.cue has no %q … %q part", begin, strings.TrimSpace(end))
	}
	j += len(end)
	return append(append(append([]byte(nil), src[:i]...), text...), src[j:]...), nil
}

const (
	axesBegin = "// BEGIN axes"
	axesEnd   = "// END axes\n"
)

// axesCUE renders #Matrix (a field per axis under its Key: a list of
// values of its Type, with its Default, or required without one),
// #Selectors (a field per Scoring axis: one value or a list; numbers on a
// numeric axis, the enum on a Closed one, else a non-empty pattern) and
// the enum of each Closed axis. The tools axis's values are #ToolSubset
// objects, named by their name: its default is written as such.
func axesCUE() []byte {
	var b bytes.Buffer
	b.WriteString(axesBegin + `: generated from the axis table of package schema/cell
// (cell.Axes) by ` + "`go generate ./schema/...`" + `; edit the table, not this.

// #Matrix is a run config's matrix: the values of each axis, whose cross
// product, times the cases, is the plan.
#Matrix: {
`)
	literal := func(a *cell.Axis, v string) string {
		switch {
		case a.Numeric:
			return v
		case a.Name == cell.Tools:
			return fmt.Sprintf("{name: %s}", strconv.Quote(v))
		}
		return strconv.Quote(v)
	}
	var lines [][3]string
	for _, a := range cell.Axes {
		doc := strings.Join(wrap("\t", "Each value is "+a.Doc+"."), "\n")
		list := fmt.Sprintf("[%s, ...%s]", a.Type, a.Type)
		if len(a.Default) == 0 {
			lines = append(lines, [3]string{doc, a.Key + "!:", list})
			continue
		}
		vals := make([]string, len(a.Default))
		for i, v := range a.Default {
			vals[i] = literal(a, v)
		}
		lines = append(lines, [3]string{doc, a.Key + ":", fmt.Sprintf("*[%s] | %s", strings.Join(vals, ", "), list)})
	}
	writeFields(&b, lines)
	b.WriteString(`}

// #Selectors are the fields of a when entry that select cells: one per
// axis a verdict may depend on.
#Selectors: {
`)
	lines = nil
	for _, a := range cell.Axes {
		if !a.Scoring {
			continue
		}
		typ := "#Sel"
		switch {
		case a.Numeric:
			typ = "number"
		case a.Closed:
			typ = a.Type
		}
		lines = append(lines, [3]string{"", a.Name + "?:", fmt.Sprintf("%s | [%s, ...%s]", typ, typ, typ)})
	}
	writeFields(&b, lines)
	b.WriteString("}\n")
	for _, a := range cell.Axes {
		if !a.Closed {
			continue
		}
		vals := make([]string, len(a.Known))
		for i, v := range a.Known {
			vals[i] = strconv.Quote(v)
		}
		fmt.Fprintf(&b, "\n%s%s: %s\n", comment("", a.Type+" is "+a.Doc+"."), a.Type, strings.Join(vals, " | "))
	}
	b.WriteString(axesEnd)
	return b.Bytes()
}

// comment writes text as // lines of at most 72 columns, indented.
func comment(indent, text string) string {
	var b strings.Builder
	for _, line := range wrap(indent, text) {
		b.WriteString(indent + "// " + line + "\n")
	}
	return b.String()
}

// wrap breaks text into the lines of a comment of at most 72 columns
// indented by indent (tabs).
func wrap(indent, text string) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(indent)*8+3+len(line)+1+len(w) > 72 {
			out = append(out, line)
			line = ""
		}
		line = strings.TrimPrefix(line+" "+w, " ")
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

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
	{"#Labelled", "Labelled", true},
	{"#AddTools", "AddTools", true},
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
// dir/types.go.
func caseFieldsCUE(dir string) ([]byte, error) {
	return fieldsCUE(filepath.Join(dir, "types.go"), caseFieldsBegin+`: generated from schema.Case and the types
// it uses (their yaml and cue tags and doc comments, in types.go) by
// `+"`go generate ./schema/...`"+`; edit the Go types, not this.
`, caseDefs, caseFieldsEnd)
}

// expectFieldsCUE renders the expectation's definitions from the Go types
// of matchers/format.go.
func expectFieldsCUE(dir string) ([]byte, error) {
	return fieldsCUE(filepath.Join(dir, "../matchers/format.go"), expectFieldsBegin+`: generated from matchers.Expect and the
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
			name, opts, _ := strings.Cut(tag.Get("yaml"), ",")
			if !ok {
				if name != "" && name != "-" && len(fd.Names) > 0 && fd.Names[0].IsExported() {
					// The loader would refuse the key its writers write.
					return nil, fmt.Errorf("%s: field %s has yaml key %q and no cue tag", fset.Position(fd.Pos()), fd.Names[0].Name, name)
				}
				continue
			}
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
