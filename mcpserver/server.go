package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/fixtures"
	"github.com/toolward/toolward/internal/userfile"
	"github.com/toolward/toolward/mcpserver/lookup"
	"github.com/toolward/toolward/mcpserver/search"
	"github.com/toolward/toolward/mcpserver/sqlbox"
)

// Version is reported to clients in the initialize handshake.
const Version = "0.1.0"

// Environment variables read by New when the matching Options field is
// empty.
const (
	EnvCorpus   = "TOOLWARD_CORPUS"
	EnvDriftURL = "TOOLWARD_DRIFT_URL"
	EnvRunsURL  = "TOOLWARD_RUNS_URL"
)

// Size limits of the data files a user may hand the server (the CUE
// config's builtin block, or serve's flags). Files are read once at start
// through userfile.Read: regular files only, never more than the limit.
const (
	MaxDataFileSize    = 64 << 20 // a database script (Options.Database)
	MaxCatalogFileSize = 8 << 20  // one tool catalog file
)

// Options configure a Server. The zero value serves the bundled data.
type Options struct {
	// Corpus is a JSON file {"source id": "text"} or a directory of .md and
	// .txt files, read once by New. Empty means $TOOLWARD_CORPUS, and if
	// that is empty too, the bundled fixtures/corpus.
	Corpus string
	// Catalogs are extra distractor catalog files (YAML lists of tools),
	// served beside the bundled fixtures/catalog/*.yaml.
	Catalogs []string
	// NoBundledCatalog leaves out the bundled distractors.
	NoBundledCatalog bool
	// Database is a SQL script to build each session's database from.
	// Empty means the bundled fixtures/db/company.sql.
	Database string
	// QuerySteps is query_database's budget of SQLite engine steps per
	// query, within sqlbox.MinSteps..sqlbox.MaxStepsLimit; 0 means
	// sqlbox.MaxSteps.
	QuerySteps int64
	// DriftURL and RunsURL are the base URLs of the services model_drift
	// and compare_runs query (see package lookup). Empty means
	// $TOOLWARD_DRIFT_URL / $TOOLWARD_RUNS_URL, and if those are empty
	// too, the bundled fixtures served in process.
	DriftURL, RunsURL string
	// HTTPClient makes the lookups against DriftURL and RunsURL. Nil means
	// a client with a 5 s timeout. It is not used for the bundled
	// fixtures.
	HTTPClient *http.Client
	// Descriptions replace tool descriptions by tool name (a named
	// description set). Names that match no tool are an error.
	Descriptions map[string]string
}

// Server is the bundled MCP server. It is safe for concurrent use by any
// number of sessions.
type Server struct {
	mcp       *server.MCPServer
	defs      []*ToolDef // real tools, then distractors
	real      map[string]bool
	index     *search.Index
	db        *sqlbox.Template
	drift     *lookup.Client
	runs      *lookup.Client
	sandboxes sync.Map  // session id → *sandbox
	streams   streamSet // open HTTP event streams, ended with their session
}

// New loads the tool definitions, catalogs, corpus, database template and
// lookup configuration, and builds the MCP server.
func New(opts Options) (*Server, error) {
	s := &Server{real: map[string]bool{}}
	if opts.QuerySteps != 0 {
		if err := sqlbox.CheckSteps(opts.QuerySteps); err != nil {
			return nil, fmt.Errorf("query steps: %w", err)
		}
	}

	defs, err := ParseToolDefs(toolsYAML, "mcpserver/tools.yaml")
	if err != nil {
		return nil, err
	}
	handlers := s.handlers()
	for _, d := range defs {
		if handlers[d.Name] == nil {
			return nil, fmt.Errorf("mcpserver/tools.yaml: tool %s has no handler", d.Name)
		}
		s.real[d.Name] = true
	}
	for name := range handlers {
		if !s.real[name] {
			return nil, fmt.Errorf("mcpserver/tools.yaml: no definition for tool %s", name)
		}
	}
	s.defs = defs

	distractors, err := loadCatalogs(opts, s.real)
	if err != nil {
		return nil, err
	}
	s.defs = append(s.defs, distractors...)

	if len(opts.Descriptions) > 0 {
		byName := map[string]*ToolDef{}
		for _, d := range s.defs {
			byName[d.Name] = d
		}
		for _, name := range slices.Sorted(maps.Keys(opts.Descriptions)) {
			d, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("description override for unknown tool %q", name)
			}
			desc := strings.TrimSpace(opts.Descriptions[name])
			if desc == "" {
				return nil, fmt.Errorf("description override for tool %q is empty", name)
			}
			d.Description = desc
		}
	}

	if s.index, err = loadCorpus(opts.Corpus); err != nil {
		return nil, err
	}

	script, err := readData(opts.Database, "db/company.sql")
	if err != nil {
		return nil, fmt.Errorf("reading database script: %w", err)
	}
	if s.db, err = sqlbox.NewTemplate(string(script)); err != nil {
		if opts.Database != "" {
			return nil, fmt.Errorf("%s: %w", opts.Database, err)
		}
		return nil, err
	}
	if opts.QuerySteps != 0 {
		if err := s.db.SetSteps(opts.QuerySteps); err != nil {
			return nil, err
		}
	}

	// Both services' fixtures live in one handler: build it at most once.
	fixture := sync.OnceValues(func() (*http.Client, error) { return lookup.FixtureClient(fixtureSub("drift")) })
	if s.drift, err = lookupClient(opts.DriftURL, EnvDriftURL, lookup.FixtureDriftURL, opts.HTTPClient, fixture); err != nil {
		return nil, err
	}
	if s.runs, err = lookupClient(opts.RunsURL, EnvRunsURL, lookup.FixtureRunsURL, opts.HTTPClient, fixture); err != nil {
		return nil, err
	}

	hooks := &server.Hooks{}
	hooks.AddOnRegisterSession(func(ctx context.Context, session server.ClientSession) {
		s.addSandbox(session.SessionID())
	})
	hooks.AddOnUnregisterSession(func(ctx context.Context, session server.ClientSession) {
		s.dropSandbox(session.SessionID())
		s.streams.end(session.SessionID())
	})
	serverOpts := append([]server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithHooks(hooks),
		server.WithInstructions("toolward's bundled test server: arithmetic, a document search, a read-only company database, answer grading, eval lookups and sandboxed side-effect tools, plus distractor tools from other domains. Every session works on its own copy of the data."),
	}, extraServerOptions...)
	s.mcp = server.NewMCPServer("toolward", Version, serverOpts...)
	tools := make([]server.ServerTool, 0, len(s.defs))
	for _, d := range s.defs {
		h := handlers[d.Name]
		if h == nil {
			h = s.templateHandler(d)
		}
		tools = append(tools, server.ServerTool{Tool: d.MCPTool(), Handler: s.wrap(d, h)})
	}
	s.mcp.AddTools(tools...)
	return s, nil
}

// extraServerOptions are added to every MCP server New builds; tests use
// it to turn on mcp-go's output-schema validation.
var extraServerOptions []server.ServerOption

// readData reads p from the filesystem, or the bundled fixture when p is
// empty.
func readData(p, bundled string) ([]byte, error) {
	if p != "" {
		return userfile.Read(p, "data file", MaxDataFileSize)
	}
	return fs.ReadFile(fixtures.FS, bundled)
}

func loadCorpus(p string) (*search.Index, error) {
	if p == "" {
		p = os.Getenv(EnvCorpus)
	}
	var docs map[string]string
	var err error
	if p == "" {
		docs, err = search.LoadFS(fixtures.FS, "corpus")
	} else {
		docs, err = search.LoadPath(p)
	}
	if err != nil {
		return nil, err
	}
	return search.New(docs, search.ChunkWords), nil
}

func loadCatalogs(opts Options, real map[string]bool) ([]*ToolDef, error) {
	type file struct {
		name string
		data []byte
	}
	var files []file
	if !opts.NoBundledCatalog {
		entries, err := fs.ReadDir(fixtures.FS, "catalog")
		if err != nil {
			return nil, fmt.Errorf("reading bundled catalog: %w", err)
		}
		for _, e := range entries {
			if e.IsDir() || (path.Ext(e.Name()) != ".yaml" && path.Ext(e.Name()) != ".yml") {
				continue
			}
			b, err := fs.ReadFile(fixtures.FS, "catalog/"+e.Name())
			if err != nil {
				return nil, err
			}
			files = append(files, file{"fixtures/catalog/" + e.Name(), b})
		}
	}
	for _, p := range opts.Catalogs {
		b, err := userfile.Read(p, "catalog file", MaxCatalogFileSize)
		if err != nil {
			return nil, fmt.Errorf("reading catalog: %w", err)
		}
		files = append(files, file{p, b})
	}
	var out []*ToolDef
	seen := map[string]string{}
	for _, f := range files {
		defs, err := ParseToolDefs(f.data, f.name)
		if err != nil {
			return nil, err
		}
		for _, d := range defs {
			if real[d.Name] {
				return nil, fmt.Errorf("%s: tool %s clashes with a real tool of the bundled server", d.where, d.Name)
			}
			if prev, ok := seen[d.Name]; ok {
				return nil, fmt.Errorf("%s: tool %s is already defined at %s", d.where, d.Name, prev)
			}
			if d.tmpl == nil {
				return nil, fmt.Errorf("%s: tool %s has no result template (catalog tools answer with their result)", d.where, d.Name)
			}
			seen[d.Name] = d.where
			out = append(out, d)
		}
	}
	return out, nil
}

// lookupClient returns the client of one lookup service: base, else $env,
// else fixtureURL reached through the client fixture returns.
func lookupClient(base, env, fixtureURL string, hc *http.Client, fixture func() (*http.Client, error)) (*lookup.Client, error) {
	if base == "" {
		base = os.Getenv(env)
	}
	if base == "" {
		fc, err := fixture()
		if err != nil {
			return nil, err
		}
		base, hc = fixtureURL, fc
	} else if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("lookup service URL %q must start with http:// or https://", base)
	}
	c := &lookup.Client{HTTP: hc}
	if env == EnvDriftURL {
		c.DriftURL = base
	} else {
		c.RunsURL = base
	}
	return c, nil
}

func fixtureSub(dir string) fs.FS {
	sub, err := fs.Sub(fixtures.FS, dir)
	if err != nil {
		panic(err) // dir is a constant naming an embedded directory
	}
	return sub
}

// hasSession reports whether id names a live (registered) session.
func (s *Server) hasSession(id string) bool {
	if id == "" {
		return false
	}
	_, ok := s.sandboxes.Load(id)
	return ok
}

// MCPServer returns the mcp-go server. Connect in process with
// client.NewInProcessClientWithOptions(s.MCPServer(), …): each such client
// is its own session with its own sandbox.
func (s *Server) MCPServer() *server.MCPServer { return s.mcp }

// ToolNames lists the real tools (in tools.yaml order), then the
// distractors (in catalog order).
func (s *Server) ToolNames() []string {
	names := make([]string, len(s.defs))
	for i, d := range s.defs {
		names[i] = d.Name
	}
	return names
}

// RealToolNames lists only the real tools.
func (s *Server) RealToolNames() []string {
	var names []string
	for _, d := range s.defs {
		if s.real[d.Name] {
			names = append(names, d.Name)
		}
	}
	return names
}

// toolFunc is a tool's Go implementation, given validated arguments (with
// defaults filled in) and the calling session's sandbox.
type toolFunc func(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error)

// wrap validates arguments and finds the session's sandbox before calling
// the tool.
//
// Arguments that do not fit the input schema are answered with an isError
// result naming the problem, so the model can correct its call (see the
// package documentation for why not a JSON-RPC error).
func (s *Server) wrap(d *ToolDef, fn toolFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := map[string]any{}
		switch a := req.Params.Arguments.(type) {
		case nil:
		case map[string]any:
			maps.Copy(args, a) // checkArgs fills in defaults: never write to the request
		default:
			return invalidArgs(d.Name, errors.New("arguments must be a JSON object")), nil
		}
		if err := d.checkArgs(args); err != nil {
			return invalidArgs(d.Name, err), nil
		}
		sb, release := s.sandbox(ctx)
		defer release()
		return fn(context.WithValue(ctx, requestKey{}, &req), sb, args)
	}
}

// requestKey carries the *mcp.CallToolRequest being served.
type requestKey struct{}

// InvalidArgumentsPrefix starts the text of every result that rejects a
// call's arguments.
const InvalidArgumentsPrefix = "invalid arguments for tool "

func invalidArgs(tool string, err error) *mcp.CallToolResult {
	return mcp.NewToolResultError(InvalidArgumentsPrefix + tool + ": " + err.Error())
}

// templateHandler answers a catalog tool with its result template.
func (s *Server) templateHandler(d *ToolDef) toolFunc {
	return func(ctx context.Context, sb *sandbox, args map[string]any) (*mcp.CallToolResult, error) {
		text, err := d.render(args)
		if err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("%s failed: %v", d.Name, err)), nil
		}
		return mcp.NewToolResultText(text), nil
	}
}
