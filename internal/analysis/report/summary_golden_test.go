package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestSummaryGolden pins the summary.json format (SummaryVersion) on the
// basic fixture. A diff here is a format change: bump SummaryVersion if a
// reader could misread the new file, and regenerate with -update.
func TestSummaryGolden(t *testing.T) {
	s, err := Summarize(filepath.Join("testdata", "basic"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden", "basic.summary.json")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("summary.json (version %d) differs from %s; run with -update and review the diff.\ngot:\n%s", SummaryVersion, golden, buf.String())
	}
}
