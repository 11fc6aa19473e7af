package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/record"
)

// WriteTrace writes one run for a terminal: its identity and cell, every
// model turn (thinking, text, the tool calls it made with their
// arguments, confirm decision and result), the final answer and the
// verdict with every reason, or the infrastructure error; of a
// conversation, every user message with who wrote it; each state probe's
// call, result and verdict. Nothing is clipped but probe results (cut at
// report.html's bound; --format json has them whole). Turns are numbered from 0, as runs.jsonl's calls[].turn and
// the reports number them. Everything goes through the reports' display
// writer: control and bidirectional characters a model or a server wrote
// are shown as escapes, never sent to the terminal.
func WriteTrace(w io.Writer, rec *record.Record) error {
	dw := newDisplayWriter(w)
	var b strings.Builder
	writeTrace(&b, rec)
	if _, err := io.WriteString(dw, b.String()); err != nil {
		return err
	}
	return dw.Close()
}

func writeTrace(b *strings.Builder, rec *record.Record) {
	fmt.Fprintf(b, "run %s  case %s  %s\n", rec.ID, rec.Case, strings.ToUpper(string(rec.Outcome)))
	fmt.Fprintf(b, "cell: %s  (%d tools offered)\n", rec.Cell, rec.Cell.ToolCount)
	if len(rec.Tags) > 0 {
		fmt.Fprintf(b, "tags: %s\n", strings.Join(rec.Tags, ", "))
	}
	if len(rec.Trace.Offered) > 0 {
		fmt.Fprintf(b, "offered: %s\n", strings.Join(rec.Trace.Offered, ", "))
	}
	for i, sc := range rec.Trace.Setup {
		args, _ := json.Marshal(sc.Args)
		mark := ""
		if sc.IsError {
			mark = "  [isError]"
		}
		fmt.Fprintf(b, "setup %d: %s %s%s (not shown to the model)\n    result:\n%s\n", i, sc.Tool, args, mark, indent(sc.Result, "      "))
	}
	userAt := map[int][]int{} // model turn -> user messages before it
	for i, u := range rec.Trace.Users {
		userAt[u.Before] = append(userAt[u.Before], i)
	}
	byTurn := map[int][]int{}
	var orphans []int // calls naming no recorded turn
	for i, c := range rec.Trace.Calls {
		if c.Turn >= 0 && c.Turn < len(rec.Trace.Turns) {
			byTurn[c.Turn] = append(byTurn[c.Turn], i)
		} else {
			orphans = append(orphans, i)
		}
	}
	writeUsers := func(at int) {
		for _, ui := range userAt[at] {
			u := rec.Trace.Users[ui]
			note := ""
			switch {
			case u.Stop:
				note = ", ended the conversation (stop marker), not sent"
			case u.Unsent:
				note = ", not sent (user.max_turns reached)"
			}
			fmt.Fprintf(b, "\nuser %d (%s%s):\n%s\n", ui, userFrom(u), note, indent(u.Content, "    "))
			if len(u.Added) > 0 {
				fmt.Fprintf(b, "  tools added: %s\n", strings.Join(u.Added, ", "))
			}
		}
	}
	for i, t := range rec.Trace.Turns {
		writeUsers(i)
		fmt.Fprintf(b, "\nturn %d  %.0f ms  %d in / %d out", i, float64(t.Latency), t.Tokens.In, t.Tokens.Out)
		if t.DoneReason != "" {
			fmt.Fprintf(b, "  %s", t.DoneReason)
		}
		if t.Host != "" {
			fmt.Fprintf(b, "  %s", t.Host)
		}
		b.WriteString("\n")
		if t.Thinking != "" {
			fmt.Fprintf(b, "  thinking:\n%s\n", indent(t.Thinking, "    "))
		}
		if t.Content != "" {
			fmt.Fprintf(b, "  text:\n%s\n", indent(t.Content, "    "))
		}
		for _, ci := range byTurn[i] {
			writeCall(b, ci, rec.Trace.Calls[ci])
		}
	}
	writeUsers(len(rec.Trace.Turns))
	for _, ci := range orphans {
		writeCall(b, ci, rec.Trace.Calls[ci])
	}
	writeState(b, rec)
	b.WriteString("\nanswer:")
	if rec.Trace.Answer == "" {
		b.WriteString(" (none)\n")
	} else {
		fmt.Fprintf(b, "\n%s\n", indent(rec.Trace.Answer, "  "))
	}
	fmt.Fprintf(b, "\nverdict: %s", rec.Outcome)
	if rec.Attempts > 1 {
		fmt.Fprintf(b, " after %d attempts", rec.Attempts)
	}
	b.WriteString("\n")
	for _, r := range rec.Reasons {
		fmt.Fprintf(b, "  - %s: %s\n", r.Code, r.Detail)
	}
	for _, j := range rec.Judged {
		fmt.Fprintf(b, "  - %s\n", judgedLine(j, 0))
	}
	if e := rec.Error; e != nil {
		fmt.Fprintf(b, "  - %s: %s\n", e.Kind, e.Message)
	}
	for _, tr := range rec.Truncated {
		fmt.Fprintf(b, "  (stored in part: %s, %d bytes, %d items originally)\n", tr.Path, tr.Bytes, tr.Items)
	}
	fmt.Fprintf(b, "tokens: %d in / %d out; %.0f ms\n", rec.Tokens.In, rec.Tokens.Out, float64(rec.Duration))
}

// callMarks lists what happened to call c besides its result: its
// confirm decision, malformed, not offered, not executed (with why when
// detail is set) and isError.
func callMarks(c record.Call, detail bool) []string {
	var marks []string
	if c.Confirm != "" {
		marks = append(marks, c.Confirm)
	}
	if c.Malformed {
		marks = append(marks, "malformed")
	}
	if c.NotOffered {
		marks = append(marks, "not offered")
	}
	if c.Unoffered {
		marks = append(marks, "not offered, executed")
	}
	if c.NotExecuted != "" {
		if detail {
			marks = append(marks, "not executed: "+c.NotExecuted)
		} else {
			marks = append(marks, "not executed")
		}
	}
	if c.IsError {
		marks = append(marks, "isError")
	}
	return marks
}

func writeCall(b *strings.Builder, i int, c record.Call) {
	fmt.Fprintf(b, "  call %d: %s", i, c.Tool)
	marks := callMarks(c, true)
	for _, e := range c.Elicitations {
		marks = append(marks, "elicitation "+e)
	}
	if len(marks) > 0 {
		fmt.Fprintf(b, "  [%s]", strings.Join(marks, ", "))
	}
	fmt.Fprintf(b, "  %.0f ms\n", float64(c.Latency))
	args := c.RawArgs
	if c.Args != nil || args == "" {
		if j, err := json.MarshalIndent(c.Args, "", "  "); err == nil && c.Args != nil {
			args = string(j)
		} else if args == "" {
			args = "{}"
		}
	}
	fmt.Fprintf(b, "    args:\n%s\n", indent(args, "      "))
	fmt.Fprintf(b, "    result:\n%s\n", indent(c.Result, "      "))
	if c.Structured != nil {
		if j, err := json.MarshalIndent(c.Structured, "", "  "); err == nil {
			fmt.Fprintf(b, "    structured:\n%s\n", indent(string(j), "      "))
		}
	}
}

// indent prefixes every line of s with p.
func indent(s, p string) string {
	return p + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+p)
}

// userFrom says who wrote a user message, as report.html does.
func userFrom(u record.UserTurn) string {
	switch u.From {
	case record.UserFromCase:
		return "the case's prompt"
	case record.UserFromScript:
		return "scripted reply"
	case record.UserFromSimulator:
		if u.Model != "" {
			return "simulated by " + u.Model
		}
		return "simulated"
	}
	return u.From
}

// writeState writes what the harness's probes saw: the end state and,
// per user turn, the turn probes (each with its call, its result, bounded
// as in report.html, and its verdict, from the run's state_mismatch
// reasons) and how many golden results there were to find.
func writeState(b *strings.Builder, rec *record.Record) {
	st := rec.State
	if st == nil {
		return
	}
	probe := func(at string, j int, p record.Probe) {
		args, _ := json.Marshal(p.Args)
		if p.Args == nil {
			args = []byte("{}")
		}
		mark := ""
		if p.Got.IsError {
			mark = "  [isError]"
		}
		fmt.Fprintf(b, "  probe %d: %s %s%s\n", j, p.Tool, args, mark)
		if p.Want != nil {
			fmt.Fprintf(b, "    want (the same probe on a fresh server):\n%s\n", indent(probeText(p.Want.Value), "      "))
		}
		fmt.Fprintf(b, "    result:\n%s\n", indent(probeText(p.Got.Value), "      "))
		fmt.Fprintf(b, "    verdict: %s\n", probeVerdict(rec, fmt.Sprintf("%sstate[%d] (%s): ", at, j, p.Tool), at+"state: "))
	}
	if len(st.Probes) > 0 {
		b.WriteString("\nend state (probes, not shown to the model):\n")
		for j, p := range st.Probes {
			probe("", j, p)
		}
	}
	for i, ps := range st.Turns {
		if ps == nil {
			continue
		}
		fmt.Fprintf(b, "\nstate after user turn %d (probes, not shown to the model):\n", i)
		for j, p := range ps {
			probe(fmt.Sprintf("expect.turns[%d].", i), j, p)
		}
	}
	for i, rs := range st.GoldenResults {
		if len(rs) > 0 {
			fmt.Fprintf(b, "\ngolden results of user turn %d (to be found among the run's):\n", i)
			for _, r := range rs {
				fmt.Fprintf(b, "%s\n", indent(r, "    "))
			}
		}
	}
}

// probeText renders a probe result as indented JSON (a text result as
// it is), cut at maxShown as report.html cuts it.
func probeText(v any) string {
	if str, ok := v.(string); ok {
		return truncate(str, maxShown)
	}
	j, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(j), maxShown)
}

// probeVerdict is one probe's verdict: its state_mismatch reasons (their
// details start with prefix, or, for a reason about all the probes,
// with whole), else ok; not judged for a run that ended in an error.
func probeVerdict(rec *record.Record, prefix, whole string) string {
	var bad []string
	for _, r := range rec.Reasons {
		if r.Code != matchers.ReasonStateMismatch {
			continue
		}
		if d, ok := strings.CutPrefix(r.Detail, prefix); ok {
			bad = append(bad, d)
		} else if d, ok := strings.CutPrefix(r.Detail, whole); ok {
			bad = append(bad, d)
		}
	}
	switch {
	case len(bad) > 0:
		return "mismatch: " + strings.Join(bad, "; ")
	case rec.Outcome == record.Error:
		return "not judged (the run ended in an error)"
	}
	return "ok"
}
