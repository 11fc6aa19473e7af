// Package ollama is the model backend that talks to an Ollama server
// through github.com/ollama/ollama/api.
//
// Steps:
//
//  1. New parses the Config (host, num_ctx, keep_alive, think); it does not
//     touch the network.
//  2. Preflight, once before any run, checks the server answers
//     (/api/version), that every model of the plan is pulled (/api/tags;
//     otherwise it lists what is there and the `ollama pull` commands) and
//     that each has the "tools" capability (/api/show). It returns the
//     server version and model digests for config.json.
//  3. Chat converts the request (messages, tools via ConvertTool, options as
//     a map so seed 0 and temperature 0 are sent, think always explicit),
//     streams the reply, and accumulates content, thinking and tool calls
//     across chunks; token counts and the done reason come from the final
//     chunk, the latency is the request's wall time. Tool call arguments
//     become json.RawMessage with the model's top-level key order (nested
//     objects come back with sorted keys, as the api package decodes them
//     into Go maps).
//
// Errors are *backend.Error: unreachable server, 5xx, 429 and a broken
// stream are KindUnavailable and retryable; 404 is KindModelMissing;
// 400 "does not support tools" is KindNoTools; another 4xx is
// KindBadRequest; an expired context is KindTimeout.
package ollama
