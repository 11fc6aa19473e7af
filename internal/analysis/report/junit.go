package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/toolward/toolward/schema/record"
)

// JUnit document shapes, in the common Jenkins/GitLab schema: a
// <testsuites> root, one <testsuite> per cell, one <testcase> per case.

// JUnitSuites is the <testsuites> root element.
type JUnitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Name    string   `xml:"name,attr"`
	JUnitCounts
	Suites []JUnitSuite `xml:"testsuite"`
}

// JUnitCounts are the attributes of a <testsuites> or <testsuite> that
// count its tests, and its time.
type JUnitCounts struct {
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
}

// JUnitSuite is one cell.
type JUnitSuite struct {
	Name string `xml:"name,attr"`
	JUnitCounts
	Properties []JUnitProperty `xml:"properties>property"`
	Cases      []JUnitCase     `xml:"testcase"`
}

// JUnitProperty is a name/value pair of a suite.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one case in one cell, seeds pooled.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitProblem `xml:"failure,omitempty"`
	Error     *JUnitProblem `xml:"error,omitempty"`
}

// JUnitProblem is a <failure> or <error>.
type JUnitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"` // sanitized: no characters XML forbids
}

// JUnit converts the summary: a case passes only if every seed passed.
// When any seed failed the testcase has a <failure> whose message lists
// the reasons over seeds; when none failed but some errored it has an
// <error> (infrastructure, not the model).
func (s *Summary) JUnit() *JUnitSuites {
	root := &JUnitSuites{Name: "toolward " + s.Title}
	byCell := map[CellKey][]JUnitCase{}
	secs := map[CellKey]float64{}
	for _, c := range s.Cases {
		for _, cc := range c.Cells {
			byCell[cc.Cell] = append(byCell[cc.Cell], s.junitCase(c.ID, cc))
			secs[cc.Cell] += cc.Seconds
		}
	}
	var total float64
	for _, cell := range s.Cells {
		suite := s.junitSuite(cell, byCell[cell.Cell], secs[cell.Cell])
		total += secs[cell.Cell]
		root.Tests += suite.Tests
		root.Failures += suite.Failures
		root.Errors += suite.Errors
		root.Suites = append(root.Suites, suite)
	}
	root.Time = seconds(total)
	root.displaySafe()
	return root
}

// displaySafe makes every string of the document display-safe
// (displaySafe) before encoding/xml sees it: the encoder would turn a
// control character in an attribute into U+FFFD, hiding what it was.
func (root *JUnitSuites) displaySafe() {
	root.Name = displaySafe(root.Name)
	for i := range root.Suites {
		su := &root.Suites[i]
		su.Name = displaySafe(su.Name)
		for j := range su.Properties {
			su.Properties[j].Value = displaySafe(su.Properties[j].Value)
		}
		for j := range su.Cases {
			c := &su.Cases[j]
			c.Name, c.Classname = displaySafe(c.Name), displaySafe(c.Classname)
			c.Failure.displaySafe()
			c.Error.displaySafe()
		}
	}
}

func (p *JUnitProblem) displaySafe() {
	if p != nil {
		p.Message, p.Type, p.Text = displaySafe(p.Message), displaySafe(p.Type), xmlSafe(p.Text)
	}
}

// junitSuite is one cell's <testsuite>: its axes and pass rate as
// properties, and its cases.
func (s *Summary) junitSuite(cell CellSummary, cases []JUnitCase, secs float64) JUnitSuite {
	k := cell.Cell
	suite := JUnitSuite{Name: s.label(k), JUnitCounts: JUnitCounts{Time: seconds(secs)}}
	for _, a := range keyAxes() {
		suite.Properties = append(suite.Properties, JUnitProperty{a.Name, a.Format(k.Cell)})
	}
	suite.Properties = append(suite.Properties, JUnitProperty{"pass_rate", rateCI(cell.Tally)})
	for _, jc := range cases {
		suite.Tests++
		if jc.Failure != nil {
			suite.Failures++
		} else if jc.Error != nil {
			suite.Errors++
		}
		suite.Cases = append(suite.Cases, jc)
	}
	return suite
}

// junitCase is case id in one cell, seeds pooled.
func (s *Summary) junitCase(id string, cc CaseCell) JUnitCase {
	jc := JUnitCase{Name: id, Classname: "toolward." + sanitizeClass(s.Title) + "." + sanitizeClass(s.label(cc.Cell)), Time: seconds(cc.Seconds)}
	switch {
	case cc.Fail > 0:
		jc.Failure = junitFailure(cc)
	case cc.Error > 0:
		jc.Error = junitError(cc)
	}
	return jc
}

// junitFailure says which seeds failed and why; its type is the kept
// example's first reason code.
func junitFailure(cc CaseCell) *JUnitProblem {
	msg := fmt.Sprintf("failed %d of %d seeds", cc.Fail, cc.Runs)
	if len(cc.Reasons) > 0 {
		msg += ": " + strings.Join(cc.Reasons, ", ")
	}
	if cc.Error > 0 {
		msg += fmt.Sprintf(" (%d errored)", cc.Error)
	}
	typ := "fail"
	if cc.Example != nil && len(cc.Example.Reasons) > 0 {
		typ = cc.Example.Reasons[0].Code
	}
	if cc.Example != nil && judgedFailure(cc.Example) {
		msg += " (judged: a model's verdict on a rubric)"
	}
	return &JUnitProblem{Message: msg, Type: typ, Text: exampleText(cc.Example)}
}

// junitError says how many seeds hit infrastructure errors; its type is
// the kept example's error kind.
func junitError(cc CaseCell) *JUnitProblem {
	msg := fmt.Sprintf("%d of %d seeds hit infrastructure errors", cc.Error, cc.Runs)
	typ := "error"
	if cc.Example != nil && cc.Example.Error != nil {
		typ = cc.Example.Error.Kind
		msg += ": " + cc.Example.Error.Message
	}
	return &JUnitProblem{Message: msg, Type: typ, Text: exampleText(cc.Example)}
}

// WriteJUnit writes junit.xml, display-safe (displayWriter).
func (s *Summary) WriteJUnit(w io.Writer) error {
	return writeDisplaySafe(w, s.writeJUnit)
}

func (s *Summary) writeJUnit(w io.Writer) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s.JUnit()); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// xmlSafe makes s display-safe (displaySafe: control characters shown as
// escapes, invalid UTF-8 as U+FFFD) and replaces the noncharacters XML
// 1.0 does not allow with U+FFFD, since model output may hold any.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == 0xFFFE || r == 0xFFFF {
			return '\uFFFD'
		}
		return r
	}, displaySafe(s))
}

func seconds(f float64) string { return fmt.Sprintf("%.3f", f) }

// sanitizeClass makes a cell label usable as a dotted class name segment.
func sanitizeClass(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '.', '/', '\\':
			return '_'
		}
		return r
	}, s)
}

// argsLine renders a call's arguments as one line of JSON, or the raw text
// the model sent when they were not an object.
func argsLine(c record.Call) string {
	if c.Args == nil {
		return truncate(c.RawArgs, maxShown)
	}
	b, err := json.Marshal(c.Args)
	if err != nil {
		return fmt.Sprint(c.Args)
	}
	return truncate(string(b), maxShown)
}

// exampleText describes the kept failing run for a failure body.
func exampleText(e *Example) string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "run %s (seed %d, %d tools offered): %s\n", e.RunID, e.Seed, e.ToolCount, e.Outcome)
	for _, r := range e.Reasons {
		fmt.Fprintf(&b, "  %s: %s\n", r.Code, r.Detail)
	}
	for _, j := range e.Judged {
		fmt.Fprintf(&b, "  %s\n", judgedLine(j, 400))
	}
	if e.Error != nil {
		fmt.Fprintf(&b, "  %s: %s\n", e.Error.Kind, e.Error.Message)
	}
	users := e.Trace.Users
	user := func(before int) { // the user messages of a conversation before model turn before
		for ; len(users) > 0 && users[0].Before <= before; users = users[1:] {
			u := users[0]
			note := ""
			if u.Unsent {
				note = " (not sent)"
			}
			fmt.Fprintf(&b, "  user (%s)%s: %s\n", u.From, note, truncate(u.Content, 400))
		}
	}
	for _, c := range e.Trace.Calls {
		user(c.Turn)
		fmt.Fprintf(&b, "  call %s %s", c.Tool, argsLine(c))
		if c.Confirm != "" {
			fmt.Fprintf(&b, " [%s]", c.Confirm)
		}
		b.WriteString("\n")
	}
	user(len(e.Trace.Turns))
	if e.Trace.Answer != "" {
		fmt.Fprintf(&b, "  answer: %s\n", truncate(e.Trace.Answer, 400))
	}
	return b.String()
}
