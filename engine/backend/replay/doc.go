// Package replay is the model backend that answers from cassettes instead
// of a model, and the Recorder that writes cassettes from a live backend.
// With replay, a whole suite runs offline and deterministically: the model
// side comes from the cassette, the tool side from the real MCP server.
//
// # Cassette format
//
// A cassette directory holds YAML files (*.yaml, *.yml, searched
// recursively). Each YAML document in a file is the cassette of one case,
// conventionally one file per case named after it:
//
//	case: sql-engineering-raise        # the case id
//	runs:                              # tried in order; the first match wins
//	  - when: {confirm: deny}          # optional cell selector
//	    turns:                         # reply i answers model turn i
//	      - tool_calls:
//	          - name: query_database
//	            arguments: {sql: "SELECT ..."}
//	      - content: The total is $84,960.
//	        tokens: {in: 120, out: 14}  # optional
//	  - turns:                         # no `when`: every other cell
//	      - content: I cannot help with that.
//
// A turn has any of: content, thinking, tool_calls (each {name, arguments}
// or {name, raw_arguments}), tokens {in, out}, latency_ms and done_reason.
// A turn with role: user (content only) is a simulated user's reply: such
// turns answer the simulator's requests (backend.SideUser) in their own
// order.
// The format's reader and writer are schema.ParseCassettes and
// schema.EncodeCassette (its JSON Schema is schema/cassette.schema.json): New reports every mistake of every file
// at file:line:col, a misspelt field with a did-you-mean, and reads each
// file through schema.ReadFile, refusing one over
// schema.MaxCassetteFileSize (64 MiB) or a path naming a device. `toolward
// validate` checks the cassettes of a replay config the same way, and
// that each answers for one of the config's cases. arguments is any YAML
// value and becomes JSON with its key order and number text kept (a
// cassette's 10.0 is replayed as 10.0, which an integer matcher rejects
// as it would a model's), so a non-object (a string, a list) exercises
// malformed calls; raw_arguments is sent verbatim, even when it is not
// valid JSON. A call without either sends {}.
//
// # Selectors
//
// `when` maps axes (every axis of package schema/cell: model, seed,
// temperature, …) to a value or a list of values, any
// of which may match, in the selector language of package schema/cell,
// shared with `--filter` and a case's `when`: a value matches the cell's
// string for that axis exactly, as a glob (* any run of characters, ? one
// character, \ escapes), or, on seed and temperature only, as an equal
// number ("0.70" matches "0.7"). Every named axis must match; axes not named are free, so
// `when: {confirm: deny}` covers every seed and model. An axis the cell
// lacks has the value "".
//
// # Misses
//
// A request with no reply — no cassette for the case, no run matching the
// cell, or a turn past the run's last — is a *backend.Error of kind
// KindCassetteMiss, not retryable, naming the case, the cell, the turn and
// the cassette directory. Nothing passes silently.
//
// # Recording
//
// NewRecorder wraps a live backend. Close writes one file per case
// (<dir>/<case id>.yaml, replacing a file of that name) whose runs carry
// exact `when` selectors for their full cells, so a recorded cassette
// replays the identical replies for the same plan.
//
// New loads and converts everything once; Chat is a map lookup, a scan of
// the case's few runs and a copy of a prebuilt Response.
package replay
