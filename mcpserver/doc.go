// Package mcpserver is toolward's bundled MCP server: a fixed set of real
// tools (calculate, search_documents, list_documents, query_database,
// grade_answer, model_drift, compare_runs, five side-effect tools and
// three probe-only state tools) plus distractor tools from YAML catalogs,
// built on
// github.com/mark3labs/mcp-go.
//
// Steps:
//
//  1. New loads everything once: tool definitions (tools.yaml, embedded:
//     descriptions, schemas and annotations are data), the catalogs, the
//     corpus index, the database template and the lookup services.
//  2. MCPServer returns one mcp-go server. Each MCP session gets its own
//     sandbox, keyed by session id, from its registration to its
//     unregistration: tickets and emails in memory (bounded by
//     MaxStoredItems and MaxStoredBytes; past either an isError result,
//     nothing stored) and,
//     created on first use, a private copy of the company database. Runs
//     never see each other's writes. (Streamable HTTP on protocol
//     2026-07-28 has no sessions: there every request gets a fresh
//     sandbox.)
//  3. Every call's arguments are checked against the tool's input schema
//     first; a missing or ill-typed argument gets an isError result saying
//     what is wrong, an unknown tool a JSON-RPC error (-32602). The
//     schemas of tools.yaml bound the text a tool stores or quotes back
//     (maxLength); a result's text quotes an argument to at most maxEcho
//     characters, with its length. A tool that
//     fails (bad SQL, division by zero, service down) answers with an
//     isError result the model can read. A panicking handler is recovered
//     into a JSON-RPC error (-32603) and the server keeps serving.
//  4. Side-effect tools (create_ticket, update_ticket, send_email,
//     update_salary, delete_employee) refuse what could not happen (a
//     full store, an unknown ticket or employee), then ask the client to
//     confirm through MCP elicitation
//     when it declared that capability, as a multi round-trip request that
//     mcp-go turns into elicitation/create for clients before 2026-07-28;
//     a decline changes nothing and yields an isError result saying so.
//  5. ServeStdio and HTTPHandler (ListenAndServeHTTP) put the same
//     server on stdio or streamable HTTP; see Transports.
//
// # Transports
//
// stdio (ServeStdio): one session, newline-delimited JSON-RPC. A line
// over DefaultMaxBodyBytes is answered with a JSON-RPC error (-32600) and
// skipped; a last line without a newline is served. When input ends, the
// answers to requests already read are still written, for at most
// drainTimeout.
//
// Streamable HTTP (HTTPHandler at Path, /mcp; ListenAndServeHTTP binds
// loopback addresses only unless HTTPOptions.AllowRemote). Its limits,
// the checks of a request first, in the order made; a refused request is
// answered at once and its connection closed, after at most refuseDrainTimeout more
// of reading what is left of its body, however slowly
// the client keeps sending:
//
//   - Host must parse (400); on a loopback address, Host and Origin must
//     be loopback (403: DNS-rebinding protection); a bearer token when
//     HTTPOptions.Token is set (401);
//   - a POST body must arrive within DefaultBodyTimeout (408) and fit
//     DefaultMaxBodyBytes (413); then at most DefaultMaxRequests requests
//     are served at once (an answer to
//     the server's own request, such as an elicitation, needs no slot);
//     a POST outside a live session takes one of DefaultMaxSessions
//     session slots while it runs and keeps it if it creates a session;
//     either limit reached is a 503 with a JSON-RPC error (-32000);
//   - a GET event stream must name a live session (400 without one, 404
//     for an unknown one) and find one of DefaultMaxStreams free, else it
//     gets 405 (the MCP answer for "no GET stream here", which clients
//     do not retry; the session works on without it); it ends with its session;
//   - sessions idle DefaultSessionIdleTTL end (between 1 and 1.5 TTL
//     after their last request) and drop their sandboxes; the sandboxes
//     of all sessions stay under about MaxSessions × SessionMemory;
//   - every write of a response or stream event must finish within
//     DefaultWriteTimeout, so a client that stops reading is cut
//     off while a quiet stream stays open (there is no whole-response
//     timeout);
//   - ListenAndServeHTTP alone adds the connection limits: headers within
//     DefaultReadHeaderTimeout; keep-alive connections closed after
//     DefaultIdleTimeout idle; at most DefaultMaxConns open connections
//     (one more is answered 503 and closed); a grace period for requests
//     in flight on shutdown.
//
// HTTPOptions overrides each limit; a zero field takes its default.
//
// # Why a missing argument is an isError result, not a JSON-RPC error
//
// MCP 2025-11-25 (SEP-1303) asks that input validation errors be tool
// execution errors, so that the model sees them and corrects its call, and
// mcp-go v1.2.1 leaves no clean way to answer -32602 Invalid params for a
// known tool:
//
//   - a tool handler's (or tool middleware's) error always becomes -32603
//     Internal error (server.handlerError; only a URL-elicitation error
//     gets its own code), which clients rightly read as a server failure;
//   - WithInputSchemaValidation answers a schema violation with an isError
//     result, as this package does (but without filling in defaults);
//   - the only hook that can refuse a request before its handler,
//     OnRequestInitialization, answers -32600 Invalid request, the code for
//     a malformed JSON-RPC message. toolward's engine (engine/session)
//     treats -32602 as the model's mistake but any other JSON-RPC error as
//     an infrastructure failure that breaks the session and is retried, so
//     -32600 would turn a model's wrong call into a retried infrastructure
//     error.
//
// So only unknown tools, which mcp-go itself answers, are -32602 errors.
//
// # SQLite driver
//
// query_database runs on github.com/ncruces/go-sqlite3 (see package
// sqlbox): SQLite compiled to WebAssembly and run by a pure-Go runtime, so
// no cgo, yet the real SQLite with its authorizer, interrupts, limits and
// an in-memory VFS whose databases can be copied per session.
package mcpserver
