package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/toolward/toolward/schema/runconfig"
)

// newFlags returns subcommand name's flag set: its errors go to stderr,
// and -h prints usage there, then the flags' defaults when defaults is
// set (the usage texts of commands whose flags have none list them).
func newFlags(name, usage string, defaults bool, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		if defaults {
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseArgs parses args with fs, flags before or after the positional
// arguments (see parseInterspersed), and returns the positionals. When
// ok is false the command ends with code: 0 after -h, 2 after a bad
// flag (fs has said which).
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, exitCode(err), false
	}
	return pos, 0, true
}

// exitCode is the exit code of a command whose flags did not parse: 0
// for -h, 2 for a usage error.
func exitCode(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// parseInterspersed parses flags that may come before or after positional
// arguments ("run configs/x.cue -j 4"), returning the positionals. Every
// argument after a literal "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var tail []string
	for i, a := range args {
		if a == "--" {
			args, tail = args[:i], args[i+1:]
			break
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return append(pos, tail...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// tagFlag adds -t name=value to fs: a config value set from the command
// line, into the field the config declares with @tag(name) (as cue -t
// does). The returned func applies the values (runconfig.SetTags) once
// the flags are parsed, and says on stderr, with false, when one is
// malformed.
func tagFlag(fs *flag.FlagSet, prog string, stderr io.Writer) func() bool {
	var tags multiFlag
	fs.Var(&tags, "t", "set the config field declared with @tag(name) to `name=value` (repeatable), as cue -t does")
	return func() bool {
		if err := runconfig.SetTags(tags); err != nil {
			fmt.Fprintf(stderr, "toolward %s: %v\n", prog, err)
			return false
		}
		return true
	}
}
