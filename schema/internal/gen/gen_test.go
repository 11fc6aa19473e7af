package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesCurrent: every committed generated file of schema/
// is what gen writes from the sources now.
func TestGeneratedFilesCurrent(t *testing.T) {
	files, err := generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join("../..", f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.data) {
			t.Errorf("schema/%s is stale: run `go generate ./schema/...`", f.name)
		}
	}
}
