// Package lookup implements the model_drift and compare_runs tools:
// read-only HTTP GET lookups against two small JSON services, parsed and
// summarised so a model can say what moved and which case regressed.
//
// The services (any server that speaks this is fine):
//
//	GET {drift}/models            → {"metric": "pass_rate", "models": ["qwen3:0.6b", …]}
//	GET {drift}/models/{model}    → {"model": "…", "metric": "pass_rate",
//	                                  "points": [{"date": "2026-08-01", "version": "…", "score": 0.62}, …]}
//	GET {runs}/projects/{project}/compare
//	                              → {"project": "…", "base": {"run": "…", "model": "…", "commit": "…"},
//	                                  "new": {…}, "cases": [{"id": "…", "base": "pass", "new": "fail"}, …]}
//
// A 404 means an unknown model or project. Every failure (network error,
// timeout, non-200 status, a body over MaxBody bytes, malformed JSON) is
// returned as an error whose message is meant for the model; nothing
// panics.
//
// FixtureHandler serves the bundled fixtures/drift/*.json this way, and
// FixtureClient reaches it through an in-process http.RoundTripper, so
// the tools work offline with no listening socket.
package lookup
