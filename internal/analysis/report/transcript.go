package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// Bounds of report.md's conversation transcripts; report.html has more of
// each text (maxShown) and runs.jsonl has all of it.
const (
	// maxMarkdownTranscripts bounds the transcripts in report.md.
	maxMarkdownTranscripts = 10
	// maxTranscriptItem bounds one user message, answer or text, in
	// characters.
	maxTranscriptItem = 400
	// maxTranscriptArgs bounds one call's arguments, in characters.
	maxTranscriptArgs = 200
	// maxTranscriptChars bounds the entries of one transcript, in
	// characters.
	maxTranscriptChars = 4000
)

// transcriptIndent starts every line of a transcript: an indented code
// block, whose lines Markdown shows as they are (no markup, links or
// HTML), whatever a model or a user wrote.
const transcriptIndent = "    "

// transcripts writes, for the conversation runs report.md drills into
// (the kept failing run of each failing cell of the cases in the failing
// table, then of the flaky cases' cells), the conversation in the order
// report.html shows it: user messages, the model's calls and answers per
// turn, and the verdict.
func (m *mdWriter) transcripts() {
	type pick struct {
		c     CaseSummary
		cc    CaseCell
		flaky bool
	}
	var picks []pick
	seen := map[string]bool{}
	add := func(c CaseSummary) {
		if seen[c.ID] {
			return
		}
		seen[c.ID] = true
		for _, cc := range c.Cells {
			if e := cc.Example; e != nil && len(e.Trace.Users) > 0 {
				picks = append(picks, pick{c: c, cc: cc, flaky: cc.Pass > 0 && cc.Pass < cc.Scored()})
			}
		}
	}
	for i, fc := range m.s.failingCases() {
		if i == maxMarkdownCases {
			break
		}
		add(fc.CaseSummary)
	}
	if m.t.Flaky != nil {
		for _, g := range groupFlaky(m.s) {
			for _, c := range m.s.Cases {
				if c.ID == g.Case {
					add(c)
				}
			}
		}
	}
	if len(picks) == 0 {
		return
	}
	m.p("## Conversation transcripts\n\nThe kept failing run of each failing cell of a conversation case: user messages, the model's calls and answers in order, and the verdict. " +
		"Texts are cut; report.html shows more and `toolward show` the whole run.\n\n")
	for i, pk := range picks {
		if i == maxMarkdownTranscripts {
			m.p("…and %d more conversations in report.html.\n\n", len(picks)-i)
			break
		}
		e := pk.cc.Example
		head := fmt.Sprintf("### %s", mdCode(pk.c.ID))
		if l := m.s.label(pk.cc.Cell); l != "" {
			head += " · " + mdCell(l)
		}
		head += fmt.Sprintf(" · seed %d · %s", e.Seed, e.Outcome)
		if pk.flaky {
			head += fmt.Sprintf(" · flaky (%d/%d passed)", pk.cc.Pass, pk.cc.Scored())
		}
		m.p("%s\n\n", head)
		show := "every seed of this cell: " + ShowCommand(m.s.Dir, pk.c.ID, pk.cc.Cell.Cell.Pool(cell.Seed).Values())
		ev := newExampleView("", e)
		m.w.WriteString(transcriptBlock(transcriptEntries(ev), maxTranscriptChars, verdictEntry(ev), show))
	}
}

// transcriptEntries lists one run's conversation in the order of its
// exampleView (newExampleView, which report.html renders): the user
// messages before each model turn, the turn's text or answer and calls,
// the user messages after the last turn and calls naming no turn. Each
// text is cut to its bound.
func transcriptEntries(ev exampleView) []string {
	var out []string
	for _, t := range ev.Turns {
		for _, u := range t.Users {
			out = append(out, userEntry(u))
		}
		if t.Content != "" {
			what := "text"
			if len(t.Calls) == 0 {
				what = "answer"
			}
			out = append(out, fmt.Sprintf("turn %d %s: %s", t.N, what, clipChars(t.Content, maxTranscriptItem)))
		}
		for _, c := range t.Calls {
			out = append(out, fmt.Sprintf("turn %d call %s", t.N, callEntry(c)))
		}
		if t.Content == "" && len(t.Calls) == 0 {
			out = append(out, fmt.Sprintf("turn %d: (no text, no calls)", t.N))
		}
	}
	for _, u := range ev.LastUsers {
		out = append(out, userEntry(u))
	}
	for _, c := range ev.Orphans {
		out = append(out, fmt.Sprintf("call %s (turn %d not recorded)", callEntry(c), c.Turn))
	}
	if ev.Trace.OutOfUserTurns {
		out = append(out, "(user.max_turns reached before the simulated user ended the conversation)")
	}
	return out
}

// maxTranscriptReasons bounds the reasons a transcript's verdict lists.
const maxTranscriptReasons = 5

// verdictEntry is the run's outcome with its first reasons, or its
// infrastructure error, each cut to maxTranscriptItem.
func verdictEntry(ev exampleView) string {
	v := "verdict: " + string(ev.Outcome)
	for i, r := range ev.Reasons {
		if i == maxTranscriptReasons {
			v += fmt.Sprintf("\n…and %d more reasons", len(ev.Reasons)-i)
			break
		}
		v += "\n" + clipChars(r.Code+": "+r.Detail, maxTranscriptItem)
	}
	if ie := ev.Error; ie != nil {
		v += "\n" + clipChars(ie.Kind+": "+ie.Message, maxTranscriptItem)
	}
	return v
}

// userEntry is one user message: who wrote it and what it said.
func userEntry(u record.UserTurn) string {
	who := "user"
	switch u.From {
	case record.UserFromCase:
		who += " (prompt)"
	case record.UserFromScript:
		who += " (scripted)"
	case record.UserFromSimulator:
		who += " (simulated"
		if u.Model != "" {
			who += " by " + clipChars(u.Model, 80)
		}
		who += ")"
	default:
		who += " (" + clipChars(u.From, 40) + ")"
	}
	switch {
	case u.Stop:
		who += " [stop, not sent]"
	case u.Unsent:
		who += " [not sent]"
	}
	return who + ": " + clipChars(u.Content, maxTranscriptItem)
}

// callEntry is a call's tool, its marks and its arguments as compact
// JSON (or the raw text the model sent), cut to maxTranscriptArgs.
func callEntry(c record.Call) string {
	marks := callMarks(c, false) // trace.go
	s := clipChars(c.Tool, 80)
	if len(marks) > 0 {
		s += " [" + strings.Join(marks, ", ") + "]"
	}
	args := "{}"
	switch {
	case c.Args != nil:
		var b strings.Builder
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false) // the code block shows < and > as they are
		if err := e.Encode(c.Args); err == nil {
			args = strings.TrimSuffix(b.String(), "\n")
		} else {
			args = fmt.Sprint(c.Args)
		}
	case c.RawArgs != "":
		args = c.RawArgs
	}
	return s + " " + clipChars(args, maxTranscriptArgs)
}

// clipChars cuts s to n characters, saying how many it left out.
func clipChars(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return fmt.Sprintf("%s… %d more characters", s[:j], total-n)
		}
		i++
	}
	return s
}

// transcriptBlock writes entries, then the trailer entries, as one
// indented code block, an entry's further lines indented under its
// first. Entries are kept whole while they fit in budget characters; the
// rest are counted, not written; the trailer is always written. The block
// ends with a blank line.
func transcriptBlock(entries []string, budget int, trailer ...string) string {
	var b strings.Builder
	line := func(j int, s string) {
		b.WriteString(transcriptIndent)
		if j > 0 {
			b.WriteString("  ")
		}
		b.WriteString(s)
		b.WriteString("\n")
	}
	used := 0
	for i, e := range entries {
		n := utf8.RuneCountInString(e)
		if used+n > budget && i > 0 {
			rest := 0
			for _, r := range entries[i:] {
				rest += utf8.RuneCountInString(r)
			}
			line(0, fmt.Sprintf("… %d more characters in %d more entries", rest, len(entries)-i))
			break
		}
		if n > budget { // a first entry larger than the whole budget
			e, n = clipChars(e, budget), budget
		}
		used += n
		for j, l := range strings.Split(e, "\n") {
			line(j, l)
		}
	}
	for _, e := range trailer {
		for j, l := range strings.Split(e, "\n") {
			line(j, l)
		}
	}
	b.WriteString("\n")
	return b.String()
}
