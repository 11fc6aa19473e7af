package engine

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Build describes the toolward binary, from runtime/debug.ReadBuildInfo.
type Build struct {
	// Version is the module version: a tag such as v0.3.0 for `go install
	// …@v0.3.0`, a pseudo-version for a build from a checkout, "devel"
	// when the toolchain recorded none (go run, go test).
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from, "" when not
	// recorded (go run, go test, -buildvcs=false, or go install from the
	// module proxy); Time is its commit time.
	Commit string `json:"commit,omitempty"`
	Time   string `json:"commit_time,omitempty"`
	// Modified: the working tree had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// Go is the toolchain version, e.g. go1.26.8.
	Go       string `json:"go"`
	Platform string `json:"platform"` // GOOS/GOARCH
}

// BuildInfo returns how this binary was built.
func BuildInfo() Build {
	b := Build{Version: "devel", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	if bi.GoVersion != "" {
		b.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one-line form recorded in config.json: the version, then
// the commit (12 hex digits, "+modified" for a dirty tree) when known,
// and the Go version, e.g. "v0.3.0 (commit 3129bf7c1a2b, go1.26.8)".
func (b Build) String() string {
	parts := make([]string, 0, 2)
	if b.Commit != "" {
		c := "commit " + b.Commit[:min(12, len(b.Commit))]
		if b.Modified {
			c += "+modified"
		}
		parts = append(parts, c)
	}
	parts = append(parts, b.Go)
	return fmt.Sprintf("%s (%s)", b.Version, strings.Join(parts, ", "))
}

// Version returns toolward's version as built, with its commit and Go
// version: BuildInfo().String(). It is recorded in every config.json and
// sent as the MCP client version.
func Version() string { return BuildInfo().String() }
