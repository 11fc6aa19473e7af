// Package pool spreads one backend's requests over several model hosts of
// the same kind (backend.ollama.hosts, backend.openai.base_urls,
// backend.anthropic.base_urls).
//
// A Pool is itself a backend.Backend. For each request it:
//
//  1. takes the hosts that serve the request's model: those that pin it
//     or pin nothing, less those found not to have it;
//  2. picks the least-busy healthy one with a free slot under its own
//     limit, waiting for a slot when all are busy; when every such host
//     is out, it tries the one due back soonest. Among equally busy
//     hosts, the turns of one run (the request's Key less its turn) go to
//     the host that run prefers by rendezvous hashing, so that a server's
//     prompt cache still holds the conversation so far;
//  3. sends the request; when the host fails with a retryable
//     infrastructure error (unreachable, 5xx, a broken stream, a 429, a
//     timeout of its own), takes it out for a while (Options.Down, longer
//     after each consecutive failure; at least what a 429 asked for) and
//     sends the same turn to the next host; a host that says it lacks the
//     model is not asked for it again;
//  4. names the host that answered in Response.Host.
//
// Only when every candidate host has failed does Chat return an error,
// the last host's, still an infrastructure error: the engine retries the
// run or records it as an error, never as a model failure. Errors that a
// retry cannot help (a bad request, a context overflow) are returned at
// once. A turn is a whole conversation sent again, so a turn retried on
// another host is the same turn.
//
// Preflight checks every host, in parallel, for the models it serves. A
// host that lacks a model, or that cannot be reached, is a warning and is
// left out (an unreachable host is tried again later); preflight fails
// when some model has no host that serves it, saying which hosts lack
// which models. A pool of one host is that host's backend unchanged,
// plus the host's name in every response and its concurrency limit.
package pool
