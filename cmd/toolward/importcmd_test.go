package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolward/toolward/internal/generate/bfcl"
	"github.com/toolward/toolward/schema"
)

var updateBFCL = flag.Bool("update-bfcl", false, "rewrite fixtures/bfcl/suite and configs/bfcl.cue")

// TestBFCLSuiteUpToDate keeps fixtures/bfcl/suite (the sample imported)
// and configs/bfcl.cue, which runs it, equal to what the importer writes
// now. Regenerate with: go test ./cmd/toolward -run TestBFCLSuiteUpToDate -update-bfcl
func TestBFCLSuiteUpToDate(t *testing.T) {
	d, err := bfcl.Read("../../fixtures/bfcl", nil)
	if err != nil {
		t.Fatal(err)
	}
	reserved, err := builtinToolNames()
	if err != nil {
		t.Fatal(err)
	}
	caseSchema := schema.CaseJSONSchema()
	tmp := t.TempDir()
	if _, err := bfcl.Write(bfcl.Convert(d, reserved), tmp, "fixtures/bfcl/suite", caseSchema); err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(tmp, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tmp, p)
		want := filepath.Join("../../fixtures/bfcl/suite", rel)
		if rel == "bfcl.cue" {
			want = "../../configs/bfcl.cue"
		}
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if *updateBFCL {
			os.MkdirAll(filepath.Dir(want), 0o755)
			return os.WriteFile(want, got, 0o644)
		}
		old, err := os.ReadFile(want)
		if err != nil || !bytes.Equal(old, got) {
			t.Errorf("%s is stale: run go test ./cmd/toolward -run TestBFCLSuiteUpToDate -update-bfcl", want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
