package engine

import (
	"cmp"
	"encoding/json"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/toolward/toolward/schema"
)

// A job's secrets never reach what it records: a server that echoes a key
// in an error body (some proxies do), a command server that prints its
// token, would otherwise put it into runs.jsonl, the server's stderr log
// and the error Run returns, and from runs.jsonl into every report.
// redactor replaces each secret the config names (secretsOf) by
// "[redacted NAME]", NAME saying which.

// minSecret is the shortest value redacted: a shorter one cannot be told
// from ordinary text, and no real key is that short.
const minSecret = 8

// secret is one value to redact and what to call it.
type secret struct{ name, value string }

// secretsOf lists the secrets of cfg: the API keys of its backends (the
// simulator's and the judge's too) as their api_key_env variables hold them, the OAuth
// client secret, and the values of headers and server.env entries whose
// names say they are secrets (secretName), with any auth scheme
// ("Bearer ") taken off as well.
func secretsOf(cfg *schema.Config) []secret {
	var out []secret
	env := func(name string) {
		if name != "" {
			out = append(out, secret{name, os.Getenv(name)})
		}
	}
	named := func(where string, m map[string]string) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !secretName(k) {
				continue
			}
			v := m[k]
			out = append(out, secret{where + "." + k, v})
			if _, cred, ok := strings.Cut(v, " "); ok {
				out = append(out, secret{where + "." + k, strings.TrimSpace(cred)})
			}
		}
	}
	backend := func(where string, b *schema.Backend) {
		switch {
		case b == nil:
		case b.OpenAI != nil:
			env(b.OpenAI.APIKeyEnv)
			named(where+".openai.headers", b.OpenAI.Headers)
		case b.Anthropic != nil:
			env(b.Anthropic.APIKeyEnv)
			named(where+".anthropic.headers", b.Anthropic.Headers)
		}
	}
	backend("backend", &cfg.Backend)
	if cfg.Simulator != nil {
		backend("simulator.backend", cfg.Simulator.Backend)
	}
	if cfg.Judge != nil {
		backend("judge.backend", cfg.Judge.Backend)
	}
	if o := cfg.Server.OAuth; o != nil {
		env(o.ClientSecretEnv)
	}
	named("server.headers", cfg.Server.Headers)
	named("server.env", cfg.Server.Env)
	return out
}

// secretName reports whether a header or environment variable of this
// name holds a secret: Authorization, Cookie, X-Api-Key, GITHUB_TOKEN,
// CLIENT_SECRET, DB_PASSWORD and the like.
func secretName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "key", "token", "secret", "password", "passwd", "cookie", "credential"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// redactor replaces secrets in text; the zero value and nil replace
// nothing.
type redactor struct {
	r *strings.Replacer
}

// newRedactor redacts the secrets given, as written and as JSON writes
// them inside a string, longest first (so that a secret holding another
// is replaced whole).
func newRedactor(secrets []secret) *redactor {
	var pairs []string
	seen := map[string]bool{}
	slices.SortStableFunc(secrets, func(a, b secret) int { return cmp.Compare(len(b.value), len(a.value)) })
	for _, s := range secrets {
		if len(s.value) < minSecret {
			continue
		}
		with := "[redacted " + s.name + "]"
		q, _ := json.Marshal(s.value)
		for _, form := range []string{s.value, string(q[1 : len(q)-1])} {
			if !seen[form] {
				seen[form] = true
				pairs = append(pairs, form, with)
			}
		}
	}
	if len(pairs) == 0 {
		return &redactor{}
	}
	return &redactor{r: strings.NewReplacer(pairs...)}
}

// String returns s with its secrets replaced.
func (x *redactor) String(s string) string {
	if x == nil || x.r == nil {
		return s
	}
	return x.r.Replace(s)
}

// Writer returns w redacting what is written to it. Each Write is
// redacted on its own: a secret split over two writes is not found, so
// writers of whole lines (record.Writer, a log's lines) are what it is
// for.
func (x *redactor) Writer(w io.Writer) io.Writer {
	if x == nil || x.r == nil {
		return w
	}
	return &redactingWriter{x: x, w: w}
}

type redactingWriter struct {
	x *redactor
	w io.Writer
}

func (r *redactingWriter) Write(p []byte) (int, error) {
	s := string(p)
	out := r.x.String(s)
	if out == s {
		return r.w.Write(p)
	}
	if _, err := io.WriteString(r.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Error returns err with its text redacted, still unwrapping to err.
func (x *redactor) Error(err error) error {
	if err == nil || x == nil || x.r == nil {
		return err
	}
	if msg := x.String(err.Error()); msg != err.Error() {
		return &redactedError{msg: msg, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
