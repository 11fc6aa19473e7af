package engine

import (
	"runtime"
	"strings"
	"testing"
)

func TestBuildString(t *testing.T) {
	for _, tc := range []struct {
		b    Build
		want string
	}{
		{Build{Version: "v0.3.0", Commit: "3129bf7c1a2b3c4d5e6f", Go: "go1.26.8"}, "v0.3.0 (commit 3129bf7c1a2b, go1.26.8)"},
		{Build{Version: "v0.0.0-20261201085844-3129bf7c1a2b+dirty", Commit: "3129bf7c1a2b3c4d5e6f", Modified: true, Go: "go1.26.8"}, "v0.0.0-20261201085844-3129bf7c1a2b+dirty (commit 3129bf7c1a2b+modified, go1.26.8)"},
		{Build{Version: "devel", Go: "go1.26.8"}, "devel (go1.26.8)"},
	} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
	// A test binary records no module version or commit.
	if b := BuildInfo(); b.Version != "devel" || !strings.HasPrefix(b.Go, "go") || b.Platform != runtime.GOOS+"/"+runtime.GOARCH || Version() != b.String() {
		t.Errorf("BuildInfo() = %+v, Version() = %q", b, Version())
	}
}
