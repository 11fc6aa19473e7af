package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/cell"
	"github.com/toolward/toolward/schema/record"
)

// convRecord is a record of one conversation run in a fixed cell.
func convRecord(i int, kase string, seed int, outcome record.Outcome, tr record.Trace, reasons ...string) *record.Record {
	rec := &record.Record{
		ID: fmt.Sprintf("%s-%d", kase, seed), Case: kase,
		Cell:    record.Cell{Model: "qwen3:4b", Seed: seed, Tools: "needed", ToolCount: 2, Confirm: cell.ConfirmMode("auto"), Descriptions: "default"},
		Outcome: outcome, Attempts: 1, Started: t0.Add(time.Duration(i) * time.Second), Duration: 900,
		Trace: tr,
	}
	for _, r := range reasons {
		code, detail, _ := strings.Cut(r, ": ")
		rec.Reasons = append(rec.Reasons, matchers.Reason{Code: code, Detail: detail})
	}
	return rec
}

// writeRecords writes recs as the runs.jsonl of a new result directory.
func writeRecords(t *testing.T, recs ...*record.Record) string {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, RunsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// markdownOf is report.md of dir.
func markdownOf(t *testing.T, dir string) string {
	t.Helper()
	s, err := Summarize(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Title = "conversations"
	var buf bytes.Buffer
	if err := s.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// transcriptSection is report.md's "Conversation transcripts" section,
// up to the next level-2 heading; "" when there is none.
func transcriptSection(md string) string {
	_, rest, ok := strings.Cut(md, "\n## Conversation transcripts\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i+1]
	}
	return "## Conversation transcripts\n" + rest
}

// ticketTrace is a two-turn scripted conversation whose second turn
// forgets the update: the user's prompt, a create_ticket call, the
// answer, the scripted correction, an answer without the update.
func ticketTrace() record.Trace {
	answer := "Done, TCK-1001 now has high priority."
	return record.Trace{
		Offered: []string{"create_ticket", "update_ticket"},
		Users: []record.UserTurn{
			{Before: 0, From: record.UserFromCase, Content: "Please open a ticket for the nightly backup job that failed on db-2.\nMedium priority is fine."},
			{Before: 2, From: record.UserFromScript, Content: "Sorry, make it high priority."},
		},
		Turns: []record.Turn{
			{ToolCalls: 1},
			{Content: "I opened ticket TCK-1001 with medium priority."},
			{Content: answer},
		},
		Calls:  []record.Call{{Turn: 0, Tool: "create_ticket", Args: map[string]any{"title": "Nightly backup failed on db-2", "priority": "medium"}, Result: `{"ticket_id":"TCK-1001"}`}},
		Answer: answer,
	}
}

// simTrace is a simulated user who withholds the project until asked and
// ends with the stop marker.
func simTrace() record.Trace {
	return record.Trace{
		Offered: []string{"query_database"},
		Users: []record.UserTurn{
			{Before: 0, From: record.UserFromCase, Content: "Hi, can you tell me the budget of the project?"},
			{Before: 1, From: record.UserFromSimulator, Model: "qwen3:4b", Content: "The Atlas Search Revamp, please."},
			{Before: 3, From: record.UserFromSimulator, Model: "qwen3:4b", Content: "Thanks! ###STOP###", Stop: true, Unsent: true},
		},
		Turns: []record.Turn{
			{Content: "Which project do you mean?"},
			{ToolCalls: 1, Content: "Let me look that up."},
			{Content: "The Atlas Search Revamp has a budget of 400,000."},
		},
		Calls:  []record.Call{{Turn: 1, Tool: "query_database", Args: map[string]any{"sql": "SELECT budget FROM projects WHERE name = 'Atlas Search Revamp'"}, Result: `[{"budget": 450000}]`}},
		Answer: "The Atlas Search Revamp has a budget of 400,000.",
	}
}

// TestMarkdownTranscriptGolden pins report.md's transcripts of a two-turn
// scripted conversation (flaky: one seed passed) and a simulated user who
// stops; the failing single request gets none. Rewrite
// testdata/golden/conversation.md with -update after a deliberate change.
func TestMarkdownTranscriptGolden(t *testing.T) {
	t.Parallel()
	single := record.Trace{Turns: []record.Turn{{Content: "No idea."}}, Answer: "No idea."}
	dir := writeRecords(t,
		convRecord(0, "conv-ticket-priority-corrected", 1, record.Fail, ticketTrace(),
			"missing_call: expect.turns[1].calls[0] (update_ticket): update_ticket was not called in this turn"),
		convRecord(1, "conv-ticket-priority-corrected", 2, record.Pass, ticketTrace()),
		convRecord(2, "conv-sim-withholds-project", 1, record.Fail, simTrace(),
			`answer_mismatch: answer: want string matching /450[,. ]?000/, got "The Atlas Search Revamp has a budget of 400,000."`),
		convRecord(3, "single-request", 1, record.Fail, single, `answer_mismatch: answer: want string containing "42", got "No idea."`),
	)
	md := markdownOf(t, dir)
	got := strings.ReplaceAll(transcriptSection(md), "toolward show "+dir+" ", "toolward show DIR ")
	if got == "" {
		t.Fatalf("report.md has no transcripts:\n%s", md)
	}
	if strings.Index(md, "## Failing cases") > strings.Index(md, "## Conversation transcripts") {
		t.Error("the transcripts come before the failing cases they drill into")
	}
	if strings.Contains(got, "single-request") {
		t.Errorf("a single request got a transcript:\n%s", got)
	}
	golden := filepath.Join("testdata", "golden", "conversation.md")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Errorf("transcripts differ from %s; run with -update and review the diff.\ngot:\n%s", golden, got)
	}
}

// TestMarkdownTranscriptHostile feeds the transcript what a model or a
// user could write to break report.md: backtick fences, HTML, a link
// with a javascript: target, a heading and a code fence after a newline,
// a bare carriage return, a 100 KB answer, and more entries than one
// transcript holds. Every such text must land inside the indented code
// block (CommonMark shows its lines literally: no markup, links or HTML),
// each text cut to its bound, saying how much it left out.
func TestMarkdownTranscriptHostile(t *testing.T) {
	t.Parallel()
	hostile := "```\n</pre><script>alert(1)</script>\n# pwned\n[click](javascript:alert(1)) `x` ``y``\r<img src=x onerror=alert(1)>\n\n~~~\nafter"
	huge := strings.Repeat("A`<script>", 10_000) // 100,000 characters
	args := map[string]any{"q": hostile, "big": huge}
	tr := record.Trace{
		Users: []record.UserTurn{{Before: 0, From: record.UserFromCase, Content: hostile}},
		Turns: []record.Turn{{ToolCalls: 1, Content: hostile}, {Content: huge}},
		Calls: []record.Call{{Turn: 0, Tool: "evil`](javascript:x)", Args: args}},
	}
	// More user turns than one transcript has room for.
	for i := 2; i <= 20; i++ {
		tr.Users = append(tr.Users, record.UserTurn{Before: i, From: record.UserFromSimulator, Model: "sim`<b>", Content: hostile + strings.Repeat("z", 300)})
		tr.Turns = append(tr.Turns, record.Turn{Content: hostile})
	}
	tr.Answer = hostile
	kase := "conv-`<b>](javascript:x)"
	dir := writeRecords(t, convRecord(0, kase, 1, record.Fail, tr, "answer_mismatch: answer: got "+huge))
	md := markdownOf(t, dir)
	sec := transcriptSection(md)
	if sec == "" {
		t.Fatalf("no transcript:\n%.3000s", md)
	}
	if strings.Contains(md, "\r") {
		t.Error("a bare carriage return reached report.md (a Markdown line ending)")
	}
	// The bounds: one transcript's entries, its verdict and its trailer.
	if n := len([]rune(sec)); n > maxTranscriptChars+(maxTranscriptReasons+2)*(maxTranscriptItem+100)+1000 {
		t.Errorf("transcript section is %d characters", n)
	}
	for what, cut := range map[string]string{
		"the 100 KB answer":  fmt.Sprintf("turn 1 answer: %s… %d more characters\n", huge[:maxTranscriptItem], 100_000-maxTranscriptItem),
		"the call arguments": fmt.Sprintf("… %d more characters\n", len([]rune(mustJSON(t, args)))-maxTranscriptArgs),
		"the reason":         fmt.Sprintf("… %d more characters\n", len("answer_mismatch: answer: got ")+100_000-maxTranscriptItem),
		"the transcript":     " more entries\n",
	} {
		if !strings.Contains(sec, cut) {
			t.Errorf("%s: no %q in\n%s", what, cut, sec)
		}
	}
	// The structure: after the section's intro, every line is blank, a
	// transcript heading, or a line of an indented code block that a blank
	// line opened.
	lines := strings.Split(sec, "\n")
	inBlock := false
	for i := 3; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l == "":
			inBlock = false
		case strings.HasPrefix(l, "    "): // four spaces: CommonMark's indented code
			if !inBlock && lines[i-1] != "" {
				t.Errorf("line %d opens a code block without a blank line before it: %q", i, l)
			}
			inBlock = true
		case strings.HasPrefix(l, "### ") && !inBlock:
			for _, bad := range []string{"<", "](", "javascript"} {
				if !insideCodeSpan(l, bad) {
					t.Errorf("heading carries %q outside a code span: %q", bad, l)
				}
			}
		default:
			t.Errorf("line %d is outside the code block: %q", i, l)
		}
	}
	if strings.Count(sec, "<script>") == 0 {
		t.Fatal("the hostile text is not shown at all")
	}
	// Outside the transcripts (the failing table), report.md shows the
	// same texts in code spans.
	for _, l := range strings.Split(strings.Replace(md, sec, "", 1), "\n") {
		for _, bad := range []string{"<script>", "](javascript:"} {
			if !insideCodeSpan(l, bad) {
				t.Errorf("report.md carries %q outside a code span: %.200q", bad, l)
			}
		}
	}
}

// mustJSON is v as compact JSON, < > & unescaped.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// insideCodeSpan reports whether every occurrence of sub in the line l
// is inside a single-backtick code span (a backslash escapes a backtick
// outside one).
func insideCodeSpan(l, sub string) bool {
	in := false
	for i := 0; i < len(l); i++ {
		if !in && l[i] == '\\' {
			i++
			continue
		}
		if l[i] == '`' {
			in = !in
			continue
		}
		if !in && strings.HasPrefix(l[i:], sub) {
			return false
		}
	}
	return true
}
