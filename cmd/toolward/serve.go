package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/toolward/toolward/engine/toolset"
	"github.com/toolward/toolward/mcpserver"
	"github.com/toolward/toolward/mcpserver/sqlbox"
)

func init() {
	register(&command{name: "serve", summary: "run the bundled MCP server (stdio, or --http 127.0.0.1:8765)", run: runServe})
}

// serveUsage is the help text; its limits are mcpserver's defaults.
var serveUsage = fmt.Sprintf(`usage: toolward serve [flags]

Runs the bundled MCP server: the real tools (calculate, search_documents,
list_documents, query_database, grade_answer, model_drift, compare_runs,
create_ticket, update_ticket, send_email, update_salary, delete_employee),
the probe-only state tools (state_tickets, state_outbox, state_table) and
the bundled distractor tools. Every session works on its own sandbox: a
private copy of the company database and its own tickets and emails.

By default it speaks MCP over stdin/stdout. With --http ADDR it serves
streamable HTTP at http://ADDR/mcp instead; ADDR must be a loopback
address unless --allow-remote is given. Requests whose Host (or Origin)
is not a loopback name are refused when serving on loopback.

Flags:
  --http ADDR           serve streamable HTTP on ADDR (e.g. 127.0.0.1:8765)
  --allow-remote        allow --http on a non-loopback address
  --token TOKEN         require "Authorization: Bearer TOKEN" (default $TOOLWARD_TOKEN)
  --catalog FILE        add a distractor catalog (YAML list of tools); repeatable
  --no-distractors      serve only the real tools
  --descriptions FILE   replace tool descriptions (YAML map: tool name -> description)
  --corpus PATH         documents for search_documents: a directory of .md/.txt
                        or a JSON {"id": "text"} file (default $TOOLWARD_CORPUS,
                        else the bundled corpus)
  --database FILE       SQL script each session's database is built from
  --query-steps N       query_database's budget of SQLite engine steps per query
                        (default %d; %d to %d), for databases whose
                        ordinary queries need more
  --drift-url URL       model_drift service (default $TOOLWARD_DRIFT_URL, else bundled data)
  --runs-url URL        compare_runs service (default $TOOLWARD_RUNS_URL, else bundled data)
  --max-body BYTES      largest HTTP request body (default %d)
  --max-sessions N      concurrent HTTP sessions; a request outside a session
                        counts as one while it runs (default %d: each session's
                        database may hold up to about %d MiB)
  --max-streams N       concurrently open GET event streams (default %d)
  --max-requests N      POST requests served at once (default %d)
  --max-conns N         open connections (default %d)
  --session-idle D      end HTTP sessions idle this long (default %v)

Over HTTP, a client has %v to send a request's headers and %v more for
its body; each write to a client must complete within %v, and keep-alive
connections idle for %v are closed. A request over a limit is answered
at once with the limit in its error: 413, 408, 503 for sessions,
requests and connections, and 405 for event streams (a client then
goes on without one). Over stdio, a line longer than %d bytes is answered with a
JSON-RPC error and skipped.
`,
	sqlbox.MaxSteps, sqlbox.MinSteps, sqlbox.MaxStepsLimit,
	mcpserver.DefaultMaxBodyBytes, mcpserver.DefaultMaxSessions, mcpserver.SessionMemory>>20,
	mcpserver.DefaultMaxStreams, mcpserver.DefaultMaxRequests, mcpserver.DefaultMaxConns, mcpserver.DefaultSessionIdleTTL,
	mcpserver.DefaultReadHeaderTimeout, mcpserver.DefaultBodyTimeout, mcpserver.DefaultWriteTimeout, mcpserver.DefaultIdleTimeout,
	mcpserver.DefaultMaxBodyBytes)

// repeated collects a repeatable string flag.
type repeated []string

func (r *repeated) String() string     { return fmt.Sprint(*r) }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", serveUsage, false, stderr)
	var catalogs repeated
	httpAddr := fs.String("http", "", "")
	allowRemote := fs.Bool("allow-remote", false, "")
	token := fs.String("token", os.Getenv("TOOLWARD_TOKEN"), "")
	fs.Var(&catalogs, "catalog", "")
	noDistractors := fs.Bool("no-distractors", false, "")
	descriptions := fs.String("descriptions", "", "")
	corpus := fs.String("corpus", "", "")
	database := fs.String("database", "", "")
	querySteps := fs.Int64("query-steps", sqlbox.MaxSteps, "")
	driftURL := fs.String("drift-url", "", "")
	runsURL := fs.String("runs-url", "", "")
	maxBody := fs.Int64("max-body", mcpserver.DefaultMaxBodyBytes, "")
	maxSessions := fs.Int("max-sessions", mcpserver.DefaultMaxSessions, "")
	maxStreams := fs.Int("max-streams", mcpserver.DefaultMaxStreams, "")
	maxRequests := fs.Int("max-requests", mcpserver.DefaultMaxRequests, "")
	maxConns := fs.Int("max-conns", mcpserver.DefaultMaxConns, "")
	sessionIdle := fs.Duration("session-idle", mcpserver.DefaultSessionIdleTTL, "")
	if err := fs.Parse(args); err != nil {
		return exitCode(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "toolward serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := sqlbox.CheckSteps(*querySteps); err != nil {
		fmt.Fprintf(stderr, "toolward serve: --query-steps: %v\n", err)
		return 2
	}
	if *httpAddr == "" {
		var httpOnly []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "token", "allow-remote", "max-body", "max-sessions", "max-streams", "max-requests", "max-conns", "session-idle":
				httpOnly = append(httpOnly, "--"+f.Name)
			}
		})
		if len(httpOnly) > 0 {
			fmt.Fprintf(stderr, "toolward serve: %s: only meaningful with --http\n", strings.Join(httpOnly, ", "))
			return 2
		}
	} else {
		if err := mcpserver.CheckListenAddr(*httpAddr, *allowRemote); err != nil {
			fmt.Fprintf(stderr, "toolward serve: %v\n", err)
			return 2
		}
		if *maxBody <= 0 || *maxSessions <= 0 || *maxStreams <= 0 || *maxRequests <= 0 || *maxConns <= 0 || *sessionIdle <= 0 {
			fmt.Fprintln(stderr, "toolward serve: --max-body, --max-sessions, --max-streams, --max-requests, --max-conns and --session-idle must be positive")
			return 2
		}
	}
	opts := mcpserver.Options{
		Corpus: *corpus, Catalogs: catalogs, NoBundledCatalog: *noDistractors, Database: *database,
		QuerySteps: *querySteps, DriftURL: *driftURL, RunsURL: *runsURL,
	}
	if *descriptions != "" {
		d, err := toolset.LoadDescriptions(*descriptions)
		if err != nil {
			fmt.Fprintf(stderr, "toolward serve: %v\n", err)
			return 1
		}
		opts.Descriptions = d
	}
	srv, err := mcpserver.New(opts)
	if err != nil {
		fmt.Fprintf(stderr, "toolward serve: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *httpAddr == "" {
		if err := srv.ServeStdio(ctx, os.Stdin, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "toolward serve: %v\n", err)
			return 1
		}
		return 0
	}
	hopts := mcpserver.HTTPOptions{
		Token: *token, MaxBodyBytes: *maxBody, AllowRemote: *allowRemote,
		MaxSessions: *maxSessions, MaxStreams: *maxStreams, MaxRequests: *maxRequests, MaxConns: *maxConns,
		SessionIdleTTL: *sessionIdle,
	}
	err = srv.ListenAndServeHTTP(ctx, *httpAddr, hopts, func(a net.Addr) {
		auth := "no token"
		if *token != "" {
			auth = "bearer token required"
		}
		fmt.Fprintf(stderr, "toolward serve: MCP streamable HTTP at http://%s%s (%s, %d tools)\n", a, mcpserver.Path, auth, len(srv.ToolNames()))
	})
	if err != nil {
		fmt.Fprintf(stderr, "toolward serve: %v\n", err)
		return 1
	}
	return 0
}
