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
//     sandbox, keyed by session id, from its registration to its
//     unregistration: tickets and emails in memory and, created on first
//     use, a private copy of the company database. Runs never see each
//     other's writes. (Streamable HTTP on protocol 2026-07-28 has no
//     sessions: there every request gets a fresh sandbox.)
//  3. Every call's arguments are checked against the tool's input schema
//     first; a missing or ill-typed argument gets an isError result saying
//     what is wrong (see Server.wrap for why not a JSON-RPC error), an
//     unknown tool a JSON-RPC error (-32602). A tool that fails (bad SQL,
//     division by zero, service down) answers with an isError result the
//     model can read. A panicking handler is recovered into a JSON-RPC
//     error (-32603) and the server keeps serving.
//  4. Side-effect tools (create_ticket, send_email, update_salary,
//     delete_employee) ask the client to confirm through MCP elicitation
//     when it declared that capability, as a multi round-trip request that
//     mcp-go turns into elicitation/create for clients before 2026-07-28;
//     a decline changes nothing and yields an isError result saying so.
//  5. ServeStdio and HTTPHandler put the same server on stdio or
//     streamable HTTP (loopback only unless allowed, optional bearer
//     token, Host-header checks, body size limit).
package mcpserver
