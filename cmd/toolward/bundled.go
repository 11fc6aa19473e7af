package main

import (
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/internal/userfile"
	"github.com/toolward/toolward/mcpserver"
	"github.com/toolward/toolward/schema"
)

// bundledServer builds the bundled MCP server (package mcpserver) for a
// config's server: builtin. The engine does not import mcpserver; this
// command hands it in (engine.Options.Builtin, session.Options.Builtin),
// so only the runtime's callers link the server and its SQLite.
func bundledServer(b schema.Builtin) (*server.MCPServer, error) {
	s, err := mcpserver.New(mcpserver.Options{Corpus: b.Corpus, Catalogs: b.Catalogs})
	if err != nil {
		return nil, err
	}
	return s.MCPServer(), nil
}

// checkCatalog checks a tool catalog file as the bundled server reads it
// at start, for validate (runconfig.Options.Catalog).
func checkCatalog(path string) error {
	src, err := userfile.Read(path, "catalog file", mcpserver.MaxCatalogFileSize)
	if err != nil {
		return err
	}
	_, err = mcpserver.ParseToolDefs(src, path)
	return err
}
