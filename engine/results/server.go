package results

// Server is the MCP server a job ran against, as recorded in config.json:
// what it says about itself and a digest of the tools it listed, so that
// two result directories that ran different tool lists can be told
// apart (toolward diff warns).
type Server struct {
	Name    string `json:"name"`    // serverInfo.name
	Version string `json:"version"` // serverInfo.version
	// ToolsDigest changes when a tool is added, removed or renamed, or
	// its description, input schema or confirm gate changes; the order
	// of the listing does not count (preflight.Digest).
	ToolsDigest string `json:"tools_digest"`
	Tools       int    `json:"tools"` // how many tools it listed
}
