package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/toolward/toolward/engine"
)

func init() {
	register(&command{name: "version", summary: "print toolward's version, commit and Go version", run: runVersion})
}

const versionUsage = `usage: toolward version [--format text|json]

Prints the module version (a tag for "go install …@vX.Y.Z", a
pseudo-version for a build from a checkout, "devel" under go run), the VCS
commit and its time when the build recorded them, and the Go version and
platform. The same, on one line, is recorded as "toolward" in every
result directory's config.json.
`

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", versionUsage, false, stderr)
	format := fs.String("format", "text", "")
	if err := fs.Parse(args); err != nil {
		return exitCode(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "toolward version: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	b := engine.BuildInfo()
	switch *format {
	case "json":
		out, _ := json.MarshalIndent(b, "", "  ")
		fmt.Fprintf(stdout, "%s\n", out)
	case "text":
		fmt.Fprintf(stdout, "toolward %s\n", b.Version)
		if b.Commit != "" {
			dirty := ""
			if b.Modified {
				dirty = " (uncommitted changes)"
			}
			fmt.Fprintf(stdout, "commit   %s %s%s\n", b.Commit, b.Time, dirty)
		} else {
			fmt.Fprintln(stdout, "commit   unknown (not recorded in this build)")
		}
		fmt.Fprintf(stdout, "go       %s %s\n", b.Go, b.Platform)
	default:
		fmt.Fprintf(stderr, "toolward version: --format must be text or json, got %q\n", *format)
		return 2
	}
	return 0
}
