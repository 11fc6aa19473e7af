package diff

import (
	"fmt"

	"github.com/toolward/toolward/schema/results"
)

// serverWarnings compares the MCP servers two result directories
// recorded in config.json (results.Meta.Server) and warns when they
// listed different tools: a changed description or schema can move pass
// rates as much as a different model. Directories from before servers
// were recorded, or without a readable config.json, give no warning.
func serverWarnings(baseDir, newDir string) []string {
	b, errB := results.ReadMeta(baseDir)
	n, errN := results.ReadMeta(newDir)
	if errB != nil || errN != nil || b.Server == nil || n.Server == nil {
		return nil
	}
	if b.Server.ToolsDigest == n.Server.ToolsDigest {
		return nil
	}
	return []string{fmt.Sprintf("the two directories ran different tool lists: base %s, new %s; tool names, descriptions, schemas or gates differ, so changes may come from the server rather than the model (`toolward tools CONFIG` shows a server's tools)",
		b.Server, n.Server)}
}
