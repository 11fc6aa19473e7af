package results

import "fmt"

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

// String names a recorded server: "name version (N tools, digest
// 0123456789ab)".
func (s *Server) String() string {
	name := s.Name
	if s.Version != "" {
		name += " " + s.Version
	}
	if name == "" {
		name = "unnamed server"
	}
	return fmt.Sprintf("%s (%d tools, digest %.12s)", name, s.Tools, s.ToolsDigest)
}

// mergedServer returns the server the shards of one job ran against, as
// recorded in their config.json: an error naming two shards that listed
// different tools (a different ToolsDigest), since their runs are not
// one job's; nil when any shard recorded none, as nothing can be said
// for the whole.
func mergedServer(dirs []string, metas []*Meta) (*Server, error) {
	var known *Server
	at := ""
	all := true
	for i, m := range metas {
		s := m.Server
		if s == nil {
			all = false
			continue
		}
		if known == nil {
			known, at = s, dirs[i]
			continue
		}
		if s.ToolsDigest != known.ToolsDigest {
			return nil, fmt.Errorf("merge: %s and %s ran different tool lists (%s, %s): tool names, descriptions, schemas or gates differ; "+
				"run every shard against the same server (`toolward tools CONFIG` shows a server's tools)", at, dirs[i], known, s)
		}
	}
	if !all {
		return nil, nil
	}
	return known, nil
}
