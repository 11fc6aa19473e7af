package report

import (
	"bytes"
	"html"
	"path/filepath"
	"strings"
	"testing"
)

// TestTablesRenderedByBoth: report.md and report.html lay out the same
// table model: every cell of every table appears in both.
func TestTablesRenderedByBoth(t *testing.T) {
	s, err := Summarize(filepath.Join("testdata", "basic"))
	if err != nil {
		t.Fatal(err)
	}
	var md, page bytes.Buffer
	if err := s.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	// HTML text without tags, unescaped.
	text := html.UnescapeString(stripTags(page.String()))
	tb := s.Tables()
	all := append([]*Table{tb.Models, tb.Comparisons, tb.ToolCurve, tb.SeedSpread, tb.Confirm, tb.Reasons, tb.ErrorKinds, tb.Flaky, tb.Cells}, tb.Breakdowns...)
	n := 0
	for _, table := range all {
		if table == nil {
			continue
		}
		if !strings.Contains(page.String(), `id="`+table.ID+`"`) {
			t.Errorf("report.html has no table %s", table.ID)
		}
		for _, row := range table.Rows {
			for i, c := range row {
				n++
				if !strings.Contains(md.String(), mdText(c)) {
					t.Errorf("%s row %v col %d: report.md lacks %q", table.ID, row[0].Text(), i, mdText(c))
				}
				want := c.Text()
				if c.Rate != nil {
					want = pct(c.Rate.Rate) // HTML shows the rate and draws the interval
					if c.Rate.Scored() == 0 {
						want = "—"
					}
				}
				if !strings.Contains(text, want) {
					t.Errorf("%s row %v col %d: report.html lacks %q", table.ID, row[0].Text(), i, want)
				}
			}
		}
	}
	if n < 100 {
		t.Errorf("checked only %d cells", n)
	}
}

func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestMarkdownAlignsEveryNumberColumn: a breakdown with more values than
// report.md used to have alignment letters for (24) right-aligns all its
// rate columns, not only the first ones.
func TestMarkdownAlignsEveryNumberColumn(t *testing.T) {
	var rs []run
	for seed := 1; seed <= 30; seed++ {
		for _, k := range []string{"a", "b"} {
			rs = append(rs, run{model: "m", tools: "needed", toolCount: 1, confirm: "auto", desc: "default", seed: seed, kase: k, outcome: "pass"})
		}
	}
	dir := t.TempDir()
	writeRuns(t, filepath.Join(dir, RunsFile), encode(t, rs))
	s, err := Summarize(dir)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := s.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(md.String(), "## Pass rate by seed\n")
	if !ok {
		t.Fatalf("no seed breakdown:\n%s", md.String())
	}
	lines := strings.Split(rest, "\n")
	var align string
	for i, l := range lines {
		if strings.HasPrefix(l, "| model |") {
			align = lines[i+1]
			break
		}
	}
	if want := "| --- |" + strings.Repeat(" --: |", 30); align != want {
		t.Errorf("alignment row\n got  %s\n want %s", align, want)
	}
	if got := strings.Count(align, "--:"); got != 30 {
		t.Errorf("%d right-aligned columns, want 30", got)
	}
}
