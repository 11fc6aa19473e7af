// Package backend defines the model backend interface, one method in the
// manner of http.RoundTripper, and the message shapes it speaks. Each
// implementation lives in its own sub-package:
//
//   - ollama: a live Ollama server (github.com/ollama/ollama/api), with a
//     preflight that checks models and tool support.
//   - openai: any OpenAI-compatible /chat/completions server (llama-server,
//     vLLM, SGLang, LM Studio, Ollama's /v1, OpenAI), streamed or not.
//   - anthropic: Anthropic's Messages API (Claude), streamed, with
//     thinking blocks kept and sent back as they came.
//   - replay: answers from hand-written or recorded YAML cassettes, and the
//     Recorder that writes them.
//   - pool: spreads requests over several hosts of one of the above
//     (least busy first, a failing host taken out for a while and its
//     turns sent to the others), naming the host in Response.Host.
//
// What the HTTP backends have alike lives here once: the default client
// and request headers, the mapping of statuses and transport failures to
// a *Error (httpapi.go), Retry-After, the bounded line reader (Lines) and
// the server-sent event reader over it (SSE), the tool JSON cache
// (ToolCache) and what a cut stream means (fault.go).
//
// Backends return a *Error for infrastructure failures; its Kind says what
// failed, Retryable whether a retry may help and RetryAfter how long the
// server asked to wait first. A rate limit is KindThrottled: Throttle
// (throttle.go) waits it out and sends the same request again, within the
// budget of the run's ThrottleLog; a pool routes around a throttled host
// first. PromptMeasurer and PromptFit tell whether a prompt fits the
// context the server gives it (KindContextTruncated when it did not).
package backend
