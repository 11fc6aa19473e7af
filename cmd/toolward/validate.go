package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/runconfig"
)

func init() {
	register(&command{name: "validate", summary: "check case files, cassettes and run configs (file:line:col errors; --online: tool names)", run: runValidate})
}

const validateUsage = `usage: toolward validate [--online] [--format text|json] [-t name=value]... [PATH...]

Checks case files (*.yaml, *.yml), replay cassette files and run configs
(*.cue) against the embedded schema. Directories are walked; the default
is cases/ configs/. A YAML file whose first document has case or runs and
no id is a cassette file. Beyond the schema it checks matchers, duplicate
case ids, needs that omit an expected tool, each case's golden trajectory
against its own expectations (in the default cell: temperature 0, tools
needed, confirm auto, descriptions default, options default), and the
files a config refers to. A config brings what a run of it loads: its cases are checked
as if named, and its replay cassettes too, each of which must answer for
one of its cases; each run must hold the model turns its replayed
conversation asks for and, when the simulated user is replayed as well,
the user turns (role: user). Golden arguments are judged as a model's: numbers
keep the text written (10.0 is not $int: 10); for a config on Ollama,
whose native API re-encodes every number through a float64, goldens are
judged that way too (an integer beyond 2^53 arrives rounded).

--online also connects to each config's MCP server (as run does, bounded
by --timeout) and checks every tool name the config's cases use (needs,
expected calls, forbid, avoid, when entries, golden calls) against the
tools the server lists, with a did-you-mean. Description-set keys and
cassette tool calls naming no tool are warnings (on stderr, exit status
unchanged). When the names are right, it also replays each case's golden
calls on a fresh server world and checks that the case's state probes
(expect.state) accept the end state the golden leaves. State probe tools
get a did-you-mean against every tool the server lists; for a config on
the bundled server (server: builtin) without --online too.

-t name=value (before the paths, repeatable) sets the config field
declared with @tag(name), as for run (docs/configs.md).

Prints one line per mistake, path:line:col: message, on stdout (or a JSON
array of {file, line, col, path, message} with --format json). In text
format, after 10 mistakes of one kind (the same message at the same path
of one file, but for list indexes and values) one line says how many
more there are; --format json lists them all. In text
format a one-line summary goes to stderr ("ok: 232 cases in 22 files, 11
configs, 195 cassettes, 7 tool catalogs" or "3 mistakes"). Warnings go to stderr in both
formats. Exits 0 when clean, 1 on any mistake, 2 on a usage error.
`

func runValidate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("validate", validateUsage, false, stderr)
	format := fs.String("format", "text", "output format: text or json")
	online := fs.Bool("online", false, "also check tool names against each config's live MCP server")
	timeout := fs.Duration("timeout", toolsTimeout, "with --online, give up connecting to a server after `D`")
	applyTags := tagFlag(fs, "validate", stderr)
	if err := fs.Parse(args); err != nil {
		return exitCode(err)
	}
	if !applyTags() {
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "toolward validate: --timeout must be positive, got %s\n", *timeout)
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "toolward validate: unknown --format %q (want text or json)\n", *format)
		return 2
	}
	paths := fs.Args()
	if len(paths) == 0 {
		for _, d := range []string{"cases", "configs"} {
			if _, err := os.Stat(d); err == nil {
				paths = append(paths, d)
			}
		}
		if len(paths) == 0 {
			fmt.Fprintln(stderr, "toolward validate: no cases/ or configs/ in the working directory; name the files to check")
			return 2
		}
	}
	var warnings schema.Errors
	sum, errs := runconfig.CheckWith(paths, runconfig.Options{Catalog: checkCatalog,
		Warn: func(e *schema.Error) { warnings = append(warnings, e) }})
	errs = append(errs, checkBuiltinProbes(paths, errs)...).Sort()
	if *online {
		oerrs, owarns := checkOnline(paths, errs, *timeout)
		// A bundled server's probe tools are checked offline and online.
		errs = slices.CompactFunc(append(errs, oerrs...).Sort(), func(a, b *schema.Error) bool { return a.Error() == b.Error() })
		warnings = append(warnings, owarns...)
	}
	for _, line := range warnings.Lines() {
		fmt.Fprintln(stderr, "toolward validate: warning:", line)
	}
	if *format == "json" {
		if errs == nil {
			errs = schema.Errors{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(errs); err != nil {
			fmt.Fprintln(stderr, "toolward validate:", err)
			return 1
		}
	} else {
		for _, line := range errs.Lines() {
			fmt.Fprintln(stdout, line)
		}
		if len(errs) > 0 {
			fmt.Fprintf(stderr, "toolward validate: %s\n", plural(len(errs), "mistake"))
		} else {
			fmt.Fprintf(stderr, "toolward validate: ok: %s\n", summaryLine(sum, *online))
		}
	}
	if len(errs) > 0 {
		return 1
	}
	return 0
}

// plural renders "1 case", "2 cases".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// summaryLine renders what validate checked: "46 cases in 10 files, 7
// configs, 9 cassettes, 7 tool catalogs" (cassettes and catalogs only
// when there were any), and ", tool names checked against the servers"
// with --online.
func summaryLine(sum runconfig.Summary, online bool) string {
	s := fmt.Sprintf("%s in %s, %s", plural(sum.Cases, "case"), plural(sum.CaseFiles, "file"), plural(sum.Configs, "config"))
	if sum.Cassettes > 0 {
		s += ", " + plural(sum.Cassettes, "cassette")
	}
	if sum.Catalogs > 0 {
		s += ", " + plural(sum.Catalogs, "tool catalog")
	}
	if online {
		s += ", tool names checked against the servers"
	}
	return s
}
