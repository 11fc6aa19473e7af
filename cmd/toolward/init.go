package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolward/toolward/engine"
	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/internal/generate/scaffold"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
)

func init() {
	register(&command{name: "init", summary: "scaffold a suite for your MCP server: one case skeleton per tool", run: runInit})
}

const initUsage = `usage: toolward init DIR --server-command 'CMD ARG…' [--env K=V]…
       toolward init DIR [flags] -- CMD [ARG…]
       toolward init DIR --url URL [--header K=V]…

Connects to your MCP server, lists its tools, and writes a suite you keep
in your own repository under DIR (which must not exist or be empty):

  toolward.cue             a config: your server, a local model via Ollama
  replay.cue               the same suite offline, replaying cassettes/
  cases/<tool>.yaml        one case skeleton per tool: needs, an expected
                           call with $any for each required parameter, and
                           a golden to fill in ("todo": validate reports
                           "fill in the golden" until you remove it)
  cassettes/<tool>.yaml    a scripted model to edit (todo until written:
                           validate reports it, replay refuses it); it
                           calls the tool with placeholders only if the
                           server marks the tool read-only
  case.schema.json         the case JSON Schema (each case's first line
                           points editors at it)
  .pre-commit-config.yaml  a pre-commit hook running toolward validate
  README.md                the next steps

A --server-command argument or --env value naming {run_dir} makes the
configs say isolation: "run": each run starts its own server process in
a fresh directory that {run_dir} names.

Paths in the configs are DIR as given: run toolward from the directory
you ran init in. --server-command is split at spaces; use -- CMD ARG… for
arguments with spaces.

Flags:
`

type initFlags struct {
	dir     string
	command []string
	url     string
	headers multiFlag
	env     multiFlag
	tools   string
	model   string
	timeout time.Duration
}

func runInit(args []string, stdout, stderr io.Writer) int {
	f, code := parseInitFlags(args, stderr)
	if code >= 0 {
		return code
	}
	if err := doInit(f, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "toolward init:", err)
		return 1
	}
	return 0
}

func parseInitFlags(args []string, stderr io.Writer) (*initFlags, int) {
	f := &initFlags{}
	fs := newFlags("init", initUsage, true, stderr)
	serverCommand := fs.String("server-command", "", "start the server as the stdio subprocess `'CMD ARG…'` (split at spaces)")
	fs.StringVar(&f.url, "url", "", "connect to the streamable HTTP server at `URL`")
	fs.Var(&f.headers, "header", "send HTTP header `K=V` with --url (repeatable; written to the configs)")
	fs.Var(&f.env, "env", "set `K=V` in the command server's environment (repeatable; written to the configs)")
	fs.StringVar(&f.tools, "tools", "", "scaffold only these comma-separated `tools` (default: every tool)")
	fs.StringVar(&f.model, "model", "qwen3:0.6b", "the Ollama `model` toolward.cue runs")
	fs.DurationVar(&f.timeout, "timeout", toolsTimeout, "give up connecting and listing after `D`")
	var cmd []string
	for i, a := range args {
		if a == "--" {
			args, cmd = args[:i], args[i+1:]
			if len(cmd) == 0 {
				fmt.Fprintln(stderr, "toolward init: want a COMMAND after --")
				return nil, 2
			}
			break
		}
	}
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return nil, code
	}
	if *serverCommand != "" {
		if len(cmd) > 0 {
			fmt.Fprintln(stderr, "toolward init: give --server-command or -- CMD, not both")
			return nil, 2
		}
		cmd = strings.Fields(*serverCommand)
	}
	f.command = cmd
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "toolward init: want one DIR (see -h)")
		return nil, 2
	}
	f.dir = pos[0]
	if msg := f.check(); msg != "" {
		fmt.Fprintln(stderr, "toolward init:", msg)
		return nil, 2
	}
	return f, -1
}

func (f *initFlags) check() string {
	switch {
	case (len(f.command) > 0) == (f.url != ""):
		return "want exactly one of --server-command, -- CMD, --url (see -h)"
	case f.url != "" && !strings.HasPrefix(f.url, "http://") && !strings.HasPrefix(f.url, "https://"):
		return fmt.Sprintf("--url must start with http:// or https://, got %q", f.url)
	case len(f.headers) > 0 && f.url == "":
		return "--header applies to --url only"
	case len(f.env) > 0 && len(f.command) == 0:
		return "--env applies to a command server only"
	case f.timeout <= 0:
		return fmt.Sprintf("--timeout must be positive, got %s", f.timeout)
	}
	if _, err := keyValues(f.env, "--env"); err != nil {
		return err.Error()
	}
	if _, err := keyValues(f.headers, "--header"); err != nil {
		return err.Error()
	}
	return ""
}

func doInit(f *initFlags, stdout, stderr io.Writer) error {
	env, _ := keyValues(f.env, "--env") // checked by check
	headers, _ := keyValues(f.headers, "--header")
	srv := schema.Server{Command: f.command, Env: env, URL: f.url, Headers: headers}
	if srv.NamesRunDir() { // the placeholder must not reach the server as text
		srv.Isolation = schema.IsolationRun
	}
	if err := scaffold.CheckFree(f.dir); err != nil {
		return err // before starting a server
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	src, err := session.Open(ctx, session.Options{Server: srv, ClientVersion: engine.Version()})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s: %w", f.timeout, err)
		}
		return fmt.Errorf("connecting to the MCP server: %w", err)
	}
	defer src.Close()
	tools, err := pickTools(src, f.tools)
	if err != nil {
		return err
	}
	info := src.Info()
	caseSchema := schema.CaseJSONSchema()
	files, skipped, err := scaffold.Files(scaffold.Options{
		Dir: f.dir, Server: scaffold.Server{Command: srv.Command, Env: env, URL: srv.URL, Headers: headers, Isolation: srv.Isolation},
		ServerName: info.Name, ServerVersion: info.Version, Tools: tools, Model: f.model,
		CaseSchema: caseSchema, Rev: releaseTag(),
	})
	if err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintln(stderr, "toolward init: skipped tool", report.DisplayLine(s))
	}
	if err := scaffold.Write(f.dir, files); err != nil {
		return err
	}
	n := len(tools) - len(skipped)
	plural := "s"
	if n == 1 {
		plural = ""
	}
	fmt.Fprintf(stdout, "wrote %d case skeleton%s for %s %s to %s\n", n, plural, report.DisplayLine(info.Name), report.DisplayLine(info.Version), f.dir)
	if srv.Isolation != "" {
		fmt.Fprintf(stdout, "isolation: run (the server names %s: each run starts its own process in a fresh directory)\n", schema.RunDirVar)
	}
	fmt.Fprintf(stdout, "next: fill in each golden, then toolward validate %s/cases %s/toolward.cue\n", strings.TrimSuffix(f.dir, "/"), strings.TrimSuffix(f.dir, "/"))
	return nil
}

// pickTools returns the server's tools, or those named in list (comma
// separated); an unknown name is an error with a suggestion.
func pickTools(src *session.Source, list string) ([]scaffold.Tool, error) {
	var all []scaffold.Tool
	var names []string
	listed := src.Listed()
	for i, t := range src.Tools() {
		ro := listed[i].Annotations.ReadOnlyHint
		all = append(all, scaffold.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, ReadOnly: ro != nil && *ro})
		names = append(names, t.Name)
	}
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	var out []scaffold.Tool
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		i := -1
		for j, t := range all {
			if t.Name == n {
				i = j
			}
		}
		if i < 0 {
			msg := fmt.Sprintf("--tools: the server has no tool %q", n)
			if s := matchers.Suggest(n, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return nil, errors.New(msg)
		}
		out = append(out, all[i])
	}
	return out, nil
}

// releaseTag is toolward's module version when it is a release tag.
func releaseTag() string {
	v := engine.BuildInfo().Version
	if strings.HasPrefix(v, "v") && !strings.Contains(v, "-") && !strings.Contains(v, "+") {
		return v
	}
	return ""
}
