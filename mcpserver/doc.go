// Package mcpserver is toolward's bundled MCP server: a fixed set of real
// tools (calculate, search_documents, list_documents, query_database,
// grade_answer, model_drift, compare_runs and four side-effect tools)
// plus distractor tools from YAML catalogs, built on
// github.com/mark3labs/mcp-go.
//
// Steps:
//
//  1. New loads everything once: tool definitions (tools.yaml, embedded:
//     descriptions, schemas and annotations are data), the catalogs, the
//     corpus index, the database template and the lookup services.
//  2. MCPServer returns one mcp-go server. Each MCP session gets its own
//     sandbox, keyed by session id: tickets and emails in memory and,
//     created on first use, a private copy of the company database. A
//     sandbox is dropped when its session unregisters, so runs never see
//     each other's writes.
//  3. Every call's arguments are checked against the tool's input schema
//     first; a missing or ill-typed argument is a JSON-RPC error, as is an
//     unknown tool. A tool that fails (bad SQL, division by zero, service
//     down) answers with an isError result the model can read. A panicking
//     handler is recovered into a JSON-RPC error.
//  4. Side-effect tools (create_ticket, send_email, update_salary,
//     delete_employee) ask the client to confirm through MCP elicitation
//     when it declared that capability; a decline changes nothing and
//     yields an isError result saying so.
//  5. ServeStdio and HTTPHandler put the same server on stdio or
//     streamable HTTP (loopback only unless allowed, optional bearer
//     token, Host-header checks, body size limit).
package mcpserver
