package toolset

import (
	"errors"
	"os"
	"testing"

	"github.com/toolward/toolward/schema"
)

// TestLoadDescriptionsRefusesDevice: `serve --descriptions /dev/zero`
// used to read until memory ran out; the file is refused by name.
func TestLoadDescriptionsRefusesDevice(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := LoadDescriptions("/dev/zero")
	var nr *schema.NotRegularError
	if !errors.As(err, &nr) {
		t.Fatalf("got %v, want a NotRegularError", err)
	}
}
