// Command toolward measures how well language models use tools.
//
// Each subcommand lives in its own file (validate.go, run.go, …) and
// registers itself with register; a subcommand parses its flags and calls
// the library packages, nothing more.
package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/toolward/toolward/matchers"
)

// command is one subcommand.
type command struct {
	name    string
	summary string // one line for the usage text
	// run executes the subcommand and returns the process exit code:
	// 0 success, 1 failure (e.g. validation errors), 2 usage error.
	run func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

func main() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) }

// Main runs toolward with args (without the program name).
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "--version", "-version", "-v":
		args = append([]string{"version"}, args[1:]...)
	case "help":
		// help CMD is CMD -h.
		if len(args) == 1 {
			usage(stderr)
			return 0
		}
		if _, ok := commands[args[1]]; ok {
			args = []string{args[1], "-h"}
		} else {
			return unknownCommand(args[1], stderr)
		}
	}
	c, ok := commands[args[0]]
	if !ok {
		return unknownCommand(args[0], stderr)
	}
	return c.run(args[1:], stdout, stderr)
}

// unknownCommand reports name with a did-you-mean and the usage; it
// returns the usage error's exit code.
func unknownCommand(name string, stderr io.Writer) int {
	msg := fmt.Sprintf("toolward: unknown command %q", name)
	if s := matchers.Suggest(name, slices.Sorted(maps.Keys(commands))); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	fmt.Fprintf(stderr, "%s\n\n", msg)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: toolward <command> [arguments]")
	fmt.Fprintln(w)
	for _, n := range slices.Sorted(maps.Keys(commands)) {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'toolward help <command>' (or 'toolward <command> -h') for a command's flags;")
	fmt.Fprintln(w, "'toolward --version' prints the version.")
}
