// Package ollama is the model backend that talks to an Ollama server. It
// uses github.com/ollama/ollama/api's types throughout but makes every
// request itself (request.go), so that every answer is read within
// bounds (see Bounds), from a local server or from ollama.com alike.
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
//     POSTs it to /api/chat, decodes each NDJSON line into an
//     api.ChatResponse, and accumulates content, thinking and tool calls
//     across chunks; token counts and the done reason come from the final
//     chunk, the latency is the request's wall time. Tool call arguments
//     become json.RawMessage with the model's top-level key order (nested
//     objects come back with sorted keys, as the api package decodes them
//     into Go maps).
//
// Bounds: one reply keeps at most Config.MaxReplyBytes (default 4 MiB, as
// the OpenAI backend) of content, thinking, tool names and arguments; a
// longer reply is cut there and returned with DoneReason DoneReplyLimit
// (and no token counts), and a single line longer than the reply may
// still hold is not read whole. Lines are read through pooled 16 KiB
// buffers, so a request allocates no read buffer (the api package's
// client allocates 8 MiB per chat); error replies are read up to 64 KiB.
// A reply keeps at most MaxReplyCalls (1,024) tool calls; one with more
// is cut there too. A reply ends at its final chunk (done: true); what
// follows is drained, at most 64 KiB for at most a second, so that a
// stream the server ends leaves its connection reusable and one it keeps
// open does not hold the turn; the default client keeps up to 64 idle
// connections per host. An answer to the small requests (version,
// tags, show) is read up to 4 MiB (maxAnswerBytes).
//
// Signing: requests to ollama.com, or to any host with OLLAMA_AUTH set,
// are signed as Ollama's own client signs them (the user's key,
// ~/.ollama/id_ed25519) by the HTTP client's transport (signer); nothing
// else differs, the reading least of all.
//
// Errors are *backend.Error: unreachable server, 5xx and a broken
// stream are KindUnavailable and retryable; 429 is KindThrottled (waited
// out by backend.Throttle); 404 is KindModelMissing;
// 400 "does not support tools" is KindNoTools; 400 "the input length
// exceeds the context length", Ollama's refusal of a prompt longer than
// the context (every chat asks for it with truncate false, rather than
// have the prompt cut), is KindContextTruncated, as a reply whose prompt
// was cut is, and one that filled the context (shift false ends it
// there; see context.go); another 4xx is
// KindBadRequest, and so is a request that cannot be signed (no key); an
// expired context is KindTimeout.
package ollama
