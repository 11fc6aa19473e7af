package engine

import (
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolward/toolward/mcpserver"
	"github.com/toolward/toolward/schema"
)

// Bundled builds the bundled MCP server for the tests, as cmd/toolward's
// bundledServer does for the binary: the engine itself does not import
// package mcpserver.
func Bundled(b schema.Builtin) (*server.MCPServer, error) {
	s, err := mcpserver.New(mcpserver.Options{Corpus: b.Corpus, Catalogs: b.Catalogs})
	if err != nil {
		return nil, err
	}
	return s.MCPServer(), nil
}
