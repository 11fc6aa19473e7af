// Package engine runs a job: every run of a config's plan, each an agent
// loop between a model backend and an MCP server, scored and appended to
// a result directory.
//
// The engine is the runtime room of the module (see package
// internal/layout): it uses the formats (schema/...) and the scorer
// (matchers/score), and never imports the bundled server, analysis or
// the generators.
//
// Steps of Run, each a method of starting (starting.go):
//
//  1. Load the config through package schema/runconfig (or, on resume,
//     the resolved config kept in the result directory's config.json),
//     load the cases (package schema) and compile their expectations.
//     Any error stops here.
//  2. Build the lazy plan (package plan), apply filters and the shard.
//  3. On resume, compact runs.jsonl to the runs that finished with pass
//     or fail: a run whose case now shows the model something else (its
//     id changed) runs again, one judged by older scoring rules is
//     re-scored from its record (no model request). A resumed job with
//     nothing left to run contacts no model server (no preflight, no
//     context check). Build the backend from the config (Ollama, OpenAI-compatible, Anthropic or
//     replay; wrapped in a cassette recorder with --record, and in a
//     per-host concurrency limit), and preflight it, the simulated
//     user's backend when the config has a simulator, and the judge's
//     when the plan has a judged answer: if a server is down or a model
//     (the simulator's or judge's too) is missing, nothing runs.
//  4. Create the result directory (package results), unless resuming; a
//     command server's stderr log goes there. If the job then fails
//     before its first run, the directory is removed again (a server that
//     died at start-up has the first lines of its stderr in the error).
//  5. Connect to the MCP server (package session) and list its tools (a
//     builtin server is built by Options.Builtin: the engine does not
//     import the bundled server, cmd/toolward hands it in); a
//     server that does not answer within two minutes stops the job. Check
//     the planned cases' tool names against the list (package preflight):
//     a needed tool or expected call the server does not offer stops the
//     job with a did-you-mean; avoid, forbid and description-set keys that
//     name no tool are warnings. Then measure, with a one-token request,
//     the longest first prompt of each model, tool subset and options set
//     (checkContext, unless Options.SkipContextCheck): one that does not
//     fit the context the backend gives it (Ollama cuts it silently)
//     stops the job with the num_ctx that would fit; the simulated user's
//     system prompt and opening are measured the same way, in the same
//     message. Write config.json, with the
//     server's name, version and tool-list digest (results.Server).
//  6. Feed the plan's runs, in plan order (grouped by model), to Workers
//     goroutines. Each run selects its tools (package toolset), runs the
//     agent loop (package agent) within the run timeout, and is scored
//     by package score from its trace alone, after the config's judge
//     (package judge) decided its judged answers ({$judge: RUBRIC}); a
//     judge that fails is retried alone, and still failing makes the run
//     an error of kind judge. Infrastructure errors are
//     retried with exponential backoff and jitter up to limits.retries
//     times (unless not retryable, such as a missing model), then recorded
//     with outcome error; they never count as model failures. Rate limits
//     are not errors: the backend is wrapped in backend.Throttle, which
//     waits them out and sends the same request again, within the run's
//     limits.throttle_wait (a backend.ThrottleLog in the run's context,
//     which also feeds the record's throttled list and the progress line).
//  7. Closing Options.Stop stops feeding runs: runs in flight finish and
//     are recorded, and Run returns with Interrupted set. Cancelling the
//     context aborts runs in flight; they are not recorded.
package engine
