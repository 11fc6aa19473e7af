package search

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolward/toolward/internal/userfile"
)

// TestLoadPathRefusesDevice: a corpus path naming a device is refused
// before it is read (it used to read /dev/zero until memory ran out).
func TestLoadPathRefusesDevice(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := LoadPath("/dev/zero")
	var nr *userfile.NotRegularError
	if !errors.As(err, &nr) {
		t.Fatalf("got %v, want a NotRegularError", err)
	}
}

// TestLoadPathDirectoryBudget: the documents of a corpus directory share
// one budget, and a device among them is refused.
func TestLoadPathDirectoryBudget(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("alpha beta"), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := LoadPath(dir)
	if err != nil || docs["a"] != "alpha beta" {
		t.Fatalf("got %v, %v", docs, err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "z.txt")); err != nil {
		t.Skip(err)
	}
	_, err = LoadPath(dir)
	var nr *userfile.NotRegularError
	if !errors.As(err, &nr) {
		t.Fatalf("got %v, want a NotRegularError", err)
	}
}
