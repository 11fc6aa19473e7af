// Package anthropic is the model backend for Anthropic's Messages API
// (POST {base_url}/v1/messages): Claude.
//
// Steps:
//
//  1. New parses the Config (base URL, headers, max_tokens, tool choice,
//     thinking budget) and reads the API key from the environment
//     variable Config.APIKeyEnv names; it does not touch the network. The
//     key lives only in the Backend and in the x-api-key header it sends,
//     never in a config or a result. Every request carries
//     anthropic-version: APIVersion.
//  2. Preflight, once before any run, lists the models (GET /v1/models,
//     page after page by has_more and last_id) and sends a model the list
//     does not name (an alias) one request asking for one token. A
//     refused key (401, 403) stops the job with the api_key_env hint; a
//     missing model stops it with the listed models and a did-you-mean.
//     Its Info says the backend takes no seed (Info.Unseeded).
//  3. Chat sends the conversation: system messages as the top-level
//     system text, user and assistant text as messages, an assistant
//     turn's calls as tool_use blocks, and the tool results that answer
//     them together in one user message as tool_result blocks (with
//     is_error for an error result); tools as {name, description,
//     input_schema} with the MCP input schema unchanged; temperature
//     always (the API takes no seed: runs of a cell differ only by
//     sampling), tool_choice and disable_parallel_tool_use when
//     configured and tools are offered, thinking when a budget is set. It
//     reads the event stream: text_delta, thinking_delta and
//     signature_delta by block, and tool input as input_json_delta
//     fragments joined per block index. Input that does not parse is
//     returned as the model sent it; the agent records a malformed call.
//     A reply with thinking keeps its blocks (backend.Message.Blocks),
//     signatures included, and the next request sends them back as they
//     came, as the API requires with tools. Stop reasons map to the done
//     reasons of the other backends (end_turn and stop_sequence "stop",
//     tool_use "tool_calls", max_tokens "length"; refusal and pause_turn
//     as they are); input tokens count cache writes and reads too.
//
// Bounds: one reply keeps at most Config.MaxReplyBytes (default 4 MiB)
// of text, thinking, signatures and tool input; a reply past it is cut
// and its DoneReason is DoneReplyLimit, as is one with a single event
// longer than that, more than MaxReplyCalls tool_use blocks or
// MaxReplyBlocks blocks. A stream that sends more bytes carrying no reply
// (comments, blank lines, pings, unknown events) than a reply may hold is
// an infrastructure error. Events are read through pooled 16 KiB buffers;
// error bodies are read up to 64 KiB.
//
// Errors are *backend.Error. 429 (rate_limit_error), 529
// (overloaded_error) and those errors as events mid-stream are
// KindThrottled with the server's retry-after: backend.Throttle waits
// and sends the same request again, so throttling neither restarts the
// run nor uses up the engine's retries. 401 and 403
// are KindBadRequest with the api_key_env hint; a 404 naming the model is
// KindModelMissing; a 400 "prompt is too long" (or a 413) is
// KindContextOverflow, not retried; other 4xx are KindBadRequest; 5xx, a
// broken stream and other error events mid-stream (api_error) are
// KindUnavailable and retryable; 408, 504 and expired
// contexts are KindTimeout.
package anthropic
