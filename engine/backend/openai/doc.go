// Package openai is the model backend for any server that speaks the
// OpenAI chat completions API (POST {base_url}/chat/completions):
// llama.cpp's llama-server, vLLM, SGLang, LM Studio, Ollama's /v1, or
// OpenAI itself.
//
// Steps:
//
//  1. New parses the Config (base URL, headers, optional fields) and reads
//     the API key from the environment variable Config.APIKeyEnv names;
//     it does not touch the network. The key lives only in the Backend and
//     in the Authorization header it sends, never in a config or a result.
//  2. Preflight, once before any run, lists the server's models (GET
//     /models; a server without the endpoint is a warning) and sends each
//     model of the plan a one-token chat request offering one tool, so a
//     refused key, a missing model and a server started without tool
//     support (llama-server without --jinja, vLLM without
//     --enable-auto-tool-choice) stop the job before it starts, saying
//     what to do; a probe answered 429 or 5xx is tried again (up to three
//     times, after the server's Retry-After or a second). It returns the
//     Server header, what the list says about each model (id, owned_by,
//     created) and its warnings for config.json.
//  3. Chat sends the conversation (seed and temperature always; max_tokens,
//     tool_choice and parallel_tool_calls only when configured, the latter
//     two only with tools), each MCP input schema unchanged as the
//     function's parameters, and tool results with the tool_call_id of
//     the call they answer. It reads server-sent events (or one JSON
//     reply with Config.NoStream): content, reasoning (reasoning_content
//     or reasoning) and tool calls, whose arguments may arrive whole
//     (Ollama, whose model parsers may give every call index 0, each with
//     its own id) or as string fragments over many deltas joined by their
//     index (OpenAI, vLLM, llama-server). Usage comes from the final
//     chunk (stream_options.include_usage is sent), the done reason from
//     finish_reason. Arguments that are not valid JSON are returned as
//     the model sent them; the agent records a malformed call.
//
// Bounds: one reply keeps at most Config.MaxReplyBytes (default 4 MiB) of
// text and arguments; a streamed reply past it is cut and its DoneReason
// is DoneReplyLimit, as is one whose single event is longer than that, and
// one that starts more than MaxReplyCalls (1,024) tool calls (a fragment
// finds its call by index in constant time). Events are read through pooled 16 KiB buffers, so a
// request allocates no read buffer; error bodies are read up to 64 KiB.
//
// Errors are *backend.Error: a 429, and a 503 with Retry-After, are
// KindThrottled with the server's Retry-After (capped at MaxRetryAfter),
// which backend.Throttle waits out before sending the same request
// again; no server, a broken stream and other 5xx are KindUnavailable and
// retryable; 408, 504 and expired contexts are
// KindTimeout, retryable; 401 and 403 are KindBadRequest with a hint about
// api_key_env; a 404 naming the model is KindModelMissing; a 400 saying
// the prompt exceeds the context is KindContextOverflow, not retryable; a
// refusal of tools is KindNoTools; any other 4xx is KindBadRequest.
package openai
