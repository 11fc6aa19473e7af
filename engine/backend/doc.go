// Package backend defines the model backend interface, one method in the
// manner of http.RoundTripper, and the message shapes it speaks. Each
// implementation lives in its own sub-package:
//
//   - ollama: a live Ollama server (github.com/ollama/ollama/api), with a
//     preflight that checks models and tool support.
//   - replay: answers from hand-written or recorded YAML cassettes, and the
//     Recorder that writes them.
//
// Backends return a *Error for infrastructure failures; its Kind says what
// failed and Retryable whether a retry may help.
package backend
