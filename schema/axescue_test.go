package schema

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/toolward/toolward/schema/cell"
)

// The axis part of toolward.cue is generated from the axis table of
// package schema/cell, and cassette.schema.json (whose when selectors are
// the axes) from the cassette format: `go generate ./schema/...` rewrites
// both, then case.schema.json from the CUE (in schema/runconfig).
//
//go:generate go test -run ^(TestAxesCUEUpToDate|TestCaseFieldsCUEUpToDate|TestExpectFieldsCUEUpToDate|TestCassetteJSONSchemaUpToDate)$ -update .

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

// TestAxesCUEUpToDate: the axis part of toolward.cue is what the axis
// table generates.
func TestAxesCUEUpToDate(t *testing.T) {
	checkCUEBlock(t, axesBegin, axesEnd, axesCUE(), "axis part")
}

// checkCUEBlock checks that the part of toolward.cue from begin through
// end is want; with -update it writes want there instead. what names the
// part in the messages.
func checkCUEBlock(t *testing.T, begin, end string, want []byte, what string) {
	t.Helper()
	src, err := os.ReadFile(SchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(src, []byte(begin))
	j := bytes.Index(src, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q part", SchemaFile, begin, strings.TrimSpace(end))
	}
	j += len(end)
	if bytes.Equal(src[i:j], want) {
		return
	}
	if !*update {
		t.Fatalf("the %s of schema/%s is stale: run `go generate ./schema/...`", what, SchemaFile)
	}
	out := append(append(append([]byte(nil), src[:i]...), want...), src[j:]...)
	if err := os.WriteFile(SchemaFile, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
