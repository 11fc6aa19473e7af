package mcpserver

import (
	"errors"
	"testing"
)

// A call still running when its session ends must not open a database
// copy that nobody would close.
func TestSandboxRefusesDatabaseAfterClose(t *testing.T) {
	sb := &sandbox{tmpl: shared(t).db}
	db, err := sb.database()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := sb.database(); again != db {
		t.Error("second database() made a new copy instead of reusing the session's")
	}
	sb.close()
	if db, err := sb.database(); !errors.Is(err, errSessionEnded) || db != nil {
		t.Errorf("database() after close = %v, %v; want nil, errSessionEnded", db, err)
	}
}
