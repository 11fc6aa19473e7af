package mcpserver

import (
	"errors"
	"os"
	"testing"

	"github.com/toolward/toolward/internal/userfile"
)

// TestDataFilesAreBounded: a catalog or database path naming a device is
// refused at start instead of being read until memory runs out.
func TestDataFilesAreBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	for name, opts := range map[string]Options{
		"catalog":  {Catalogs: []string{"/dev/zero"}},
		"database": {Database: "/dev/zero"},
	} {
		_, err := New(opts)
		var nr *userfile.NotRegularError
		if !errors.As(err, &nr) {
			t.Errorf("%s: got %v, want a NotRegularError", name, err)
		}
	}
}
