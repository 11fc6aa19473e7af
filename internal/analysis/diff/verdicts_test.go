package diff

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema/record"
)

func writeRuns(t *testing.T, recs ...*record.Record) string {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "runs.jsonl"), buf.Bytes(), 0o644)
	return dir
}

// TestVerdictChanges: every paired run whose verdict changed is listed
// with its cause, told apart by run id, start time and rules digest;
// unchanged verdicts and error pairs are not.
func TestVerdictChanges(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	rec := func(c string, seed int, id string, started time.Time, rules string, outcome record.Outcome, reasons ...string) *record.Record {
		r := &record.Record{ID: id, Case: c, Cell: record.Cell{Model: "m", Seed: seed}, Started: started, Rules: rules, Outcome: outcome}
		for _, code := range reasons {
			r.Reasons = append(r.Reasons, matchers.Reason{Code: code, Detail: code})
		}
		return r
	}
	base := writeRuns(t,
		rec("rescored", 1, "a1", t0, "r1", record.Pass),
		rec("reasons", 1, "b1", t0, "r1", record.Fail, "wrong_args"),
		rec("prompt", 1, "c1", t0, "r1", record.Pass),
		rec("again", 1, "d1", t0, "r1", record.Pass),
		rec("same", 1, "e1", t0, "r1", record.Pass),
		rec("err", 1, "f1", t0, "r1", record.Pass),
	)
	nw := writeRuns(t,
		rec("rescored", 1, "a1", t0, "r2", record.Fail, "answer_mismatch"),
		rec("reasons", 1, "b1", t0, "r2", record.Fail, "missing_call"),
		rec("prompt", 1, "c2", t0.Add(time.Hour), "r1", record.Fail, "answer_mismatch"),
		rec("again", 1, "d1", t0.Add(time.Hour), "r1", record.Fail, "answer_mismatch"),
		rec("same", 1, "e1", t0.Add(time.Hour), "r1", record.Pass),
		&record.Record{ID: "f1", Case: "err", Cell: record.Cell{Model: "m", Seed: 1}, Outcome: record.Error},
	)
	r, err := Compare(base, nw, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	got := r.Verdicts
	want := map[string]string{"rescored": WhyRules, "reasons": WhyRules, "prompt": WhyPrompt, "again": WhyRanAgain}
	if len(got) != len(want) {
		t.Fatalf("%d changes, want %d: %+v", len(got), len(want), got)
	}
	for _, v := range got {
		if want[v.Case] != v.Why {
			t.Errorf("%s: why %q, want %q", v.Case, v.Why, want[v.Case])
		}
	}
	flips, groups, reasonsOnly := groupVerdicts(got)
	if len(flips) != 3 || len(groups) != 3 || len(reasonsOnly) != 1 || reasonsOnly[0].Case != "reasons" || groups[2].String() != "1 pass → fail" {
		t.Errorf("groups %+v, reasons only %+v", groups, reasonsOnly)
	}
	// A failing run that fails with other reasons kept its verdict: it is
	// counted apart, not among the changed verdicts.
	var text strings.Builder
	writeVerdictsText(func(f string, a ...any) { fmt.Fprintf(&text, f, a...) }, got)
	for _, want := range []string{"\nchanged verdicts: 3 (scoring rules changed: 1; the case changed what the model sees: 1; ran again: 1)\n",
		"\nsame verdict, other reasons (failing runs that fail with other reasons): 1 (scoring rules changed: 1)\n  reasons  "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "  reasons: ") {
		t.Errorf("the reason-only change is counted as a changed verdict:\n%s", text.String())
	}
	if v := got[len(got)-1]; v.Case != "rescored" || verdictString(v.Base) != "pass" || verdictString(v.New) != "fail [answer_mismatch]" {
		t.Errorf("last change %+v", v)
	}
}

// TestLegacyIDsNotCompared: against a directory of config.json format 1,
// whose run ids hashed the scoring rules too, differing ids do not mark
// a case as changed; a warning says so.
func TestLegacyIDsNotCompared(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	mk := func(id string, started time.Time, outcome record.Outcome) *record.Record {
		return &record.Record{ID: id, Case: "c", Cell: record.Cell{Model: "m", Seed: 1}, Started: started, Outcome: outcome}
	}
	base := writeRuns(t, mk("old-id", t0, record.Pass))
	nw := writeRuns(t, mk("new-id", t0.Add(time.Hour), record.Fail))
	os.WriteFile(filepath.Join(base, "config.json"), []byte(`{"toolward":"v0.8.0","config":{"name":"x"}}`), 0o644)
	os.WriteFile(filepath.Join(nw, "config.json"), []byte(`{"version":2,"toolward":"v0.9.0","config":{"name":"x"}}`), 0o644)
	r, err := Compare(base, nw, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Changed) != 0 || len(r.Verdicts) != 1 || r.Verdicts[0].Why != WhyRanAgain {
		t.Errorf("changed %v, verdicts %+v", r.Changed, r.Verdicts)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "config.json format 1") {
		t.Errorf("warnings %q", r.Warnings)
	}
}
