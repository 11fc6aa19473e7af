// Package session connects runs to an MCP server and carries out the tool
// calls a model asks for, including the simulated user's confirmations.
//
// A Source stands for one server for the length of a job:
//
//   - builtin: the bundled server hosted in-process. Every run opens its
//     own in-process client, hence its own MCP session and, with the bundled
//     server, its own fresh sandbox. Nothing crosses a process boundary.
//   - command: a stdio subprocess. Spawning one per run would dominate
//     short runs (npx alone takes seconds), so connections are pooled: a
//     run borrows an idle connection or opens a new one, so at most one
//     connection per concurrent run exists; a connection that failed is
//     closed, not reused. The subprocess's stderr goes to the writer the
//     caller gives (the engine uses <resultsdir>/server-stderr.log); when
//     the first connection fails (the server died at start-up), the error
//     quotes the first lines of that stderr, where the cause is. Its
//     environment is not toolward's: only InheritedEnv (PATH, HOME, …)
//     plus server.env, unless server.inherit_env (see CommandEnv). Each
//     server leads a process group of its own (Linux), so closing a
//     connection also kills whatever the server started and left behind,
//     and the kernel kills it when toolward dies, even by
//     SIGKILL. A connection that failed (a call timed out, the transport
//     closed) is killed at once rather than closed gracefully. A later
//     connection's initialize handshake is bounded by
//     Options.HandshakeTimeout (the engine passes limits.call_timeout).
//   - url: streamable HTTP, pooled the same way, with the configured
//     headers on every request. Each connection makes the initialize
//     handshake (protocol 2025-11-25 at most) and opens the GET stream
//     when the server offers it, so that requests the server sends there
//     (elicitation) are answered. A server that refuses the stream is
//     asked again at most MaxStreamRefusals times in a row (mcp-go
//     alone would ask every second for as long as the connection
//     lives), and not again after a refusal that will not change.
//
// What a command or url server sends passes through a bounding layer
// under mcp-go's transports (wire.go): each message is bounded
// (MaxMessage) and must be one JSON-RPC object, and a server may
// have at most MaxPending of its own requests waiting for an answer.
// A fault there fails the call in flight at once, with the fault (a
// *LimitError or *ProtocolError) in the *Error, rather than leaving
// mcp-go to read without bound or drop the message and wait. A stdio
// server's answer to server/discover counts only when it lists
// supportedVersions; otherwise the client falls back to initialize.
//
// Runs against a foreign server (command or url) are therefore NOT
// isolated from each other: whatever state the server keeps per process or
// per connection is seen by later runs on the same connection. Only the
// builtin server guarantees a fresh sandbox per run.
//
// Tools are listed once per Source, every page (within MaxListPages,
// MaxListTools and MaxListBytes), and cached (the list of a
// server does not change during a job), with the server's Info from the
// handshake. A name listed more than once is offered once, as its first
// listing; Source.Duplicates names them for a warning. Session.Call
// applies the confirm gate:
//
//   - A tool is gated when its MCP annotations do not rule out harm, by the
//     MCP defaults (readOnlyHint defaults to false, destructiveHint to
//     true): gated unless readOnlyHint is true or destructiveHint is false.
//   - Mode "auto" has no gate. "approve" records the call as approved and
//     makes it. "deny" does not make it: the model gets an isError result
//     "The user declined to run <tool>." and the call is recorded denied.
//   - Elicitation requests from the server during a call are accepted in
//     modes auto and approve (form fields filled: defaults, booleans true,
//     first enum value, "yes" for strings, 1 for numbers) and declined in
//     mode deny; each answer is recorded on the call in progress.
//
// Errors: a tool's isError result is data for the model and the scorer. An
// "invalid params" JSON-RPC error is the model's fault (bad arguments) and
// also goes back as an error result. Anything else (transport failures,
// other protocol errors, a call timeout) is an infrastructure error, an
// *Error. A call is over at its timeout whatever it is doing, decoding a
// long answer included. A stdio server that exits or closes its stdout fails the call
// in flight at once (Kind "mcp", wrapping transport.ErrTransportClosed),
// without waiting for the call timeout.
package session
