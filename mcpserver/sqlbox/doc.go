// Package sqlbox gives each MCP session its own throwaway copy of the
// company database, with one guarded connection for model-written
// queries and one privileged connection for the server's own writes.
//
// Steps:
//
//  1. NewTemplate runs a SQL script (CREATE TABLE + INSERT) once into an
//     in-memory database and keeps its serialized pages.
//  2. Template.Open copies those pages into a fresh shared in-memory
//     database (the memdb VFS) with a unique name and opens two
//     connections to it: the writer, used only by the side-effect tools'
//     Go code, and the reader, used by Query. Both see the same data, so a
//     query sees a salary update made in the same session.
//  3. Query runs one model-written statement on the reader. Read-only is
//     enforced by SQLite itself, not by parsing: the reader is opened
//     read-only, has PRAGMA query_only=ON, no ATTACH slots, and an
//     authorizer that allows only SELECT, column reads, functions,
//     recursive CTEs and a few schema-introspection pragmas; every other
//     action (INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, ATTACH, DETACH,
//     PRAGMA writes, transactions, savepoints, …) is denied at prepare
//     time. On top of that Query accepts a single SELECT or WITH … SELECT
//     statement (the tail after the first prepared statement must be
//     empty), caps rows by wrapping the query as SELECT * FROM (…) LIMIT
//     MaxRows+1, and stops it after MaxSteps steps of SQLite's virtual
//     machine (a budget of work, not time, so the answer is the same on
//     any machine; see budget.go). No value may exceed MaxValueLen bytes,
//     which bounds the work of one step, and the functions whose work
//     grows faster than their arguments (LIKE, instr, replace, …) charge
//     it to the budget (see work.go). While it reads the
//     rows it keeps the result's JSON encoding under MaxResultBytes
//     (cutting long values to MaxCellChars, less in rows of more than 32
//     columns, see MaxRowBytes), so a query selecting gigabytes never
//     has them in memory; a cut result is Truncated with a Note for the
//     model. Column names come from the query as written, repeated ones
//     made unique deterministically (name, name:2, …).
//     Table reads a whole table the same way for the server's state
//     tools, bounded only by its context: MaxSteps and the wall-clock
//     Backstop are for model-written SQL.
//  4. Before SQLite sees a query, Query bounds its complexity: the wasm
//     build has a fixed 64 KiB C stack that deeply nested or long
//     compound queries exhaust (see MaxSelects for the measured crash
//     points). checkShape counts SELECTs and parenthesis depth in the
//     text; SQLite's own limits bound expression depth, compound terms,
//     function arguments, LIKE patterns and the rest. A refused query is a
//     *QueryError naming the limit.
//  5. Should anything in the SQL layer still panic, the Box recovers,
//     rebuilds both connections on a fresh copy of the session's current
//     data (or of the template, when a dead connection may have been
//     writing), and returns an error (see Fault). No method panics, Close
//     included.
//
// The driver is github.com/ncruces/go-sqlite3: SQLite compiled to
// WebAssembly and run in pure Go (no cgo, so the binary cross-compiles
// and the race detector works), exposing the authorizer, interrupt by
// context (polled by SQLite's progress handler, which is how the step
// budget is counted), statement status counters, limits and the memdb
// VFS that this package needs.
package sqlbox
