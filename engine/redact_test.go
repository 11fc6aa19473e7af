package engine

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolward/toolward/fixtures/fakes/fakeanthropic"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/schema/record"
)

// TestEchoedKeyRedacted: a model server that echoes the request's API key
// (and a header named as a secret) in its error body, as some proxies
// do, after a preflight that went well: the runs are errors whose
// messages say what the server said with the secrets redacted, and no
// file of the result directory (runs.jsonl, summary.json, report.md,
// report.html, junit.xml) holds them, for each backend that sends a key
// (config.json keeps the config's header values, which --resume sends).
// Before, the key was in all five.
func TestEchoedKeyRedacted(t *testing.T) {
	const key, token = "sk-echoed-4a7f0c2d9b", "org-token-55e1b3"
	for _, tt := range []struct {
		name    string
		backend func(t *testing.T) string
	}{
		{"openai", func(t *testing.T) string {
			fake := fakeopenai.Start(t, fakeopenai.Options{APIKey: key, Script: func(req *fakeopenai.Request) fakeopenai.Reply {
				return fakeopenai.Reply{Status: 502, Error: "upstream refused " + req.Header.Get("Authorization") + " with X-Org-Token " + req.Header.Get("X-Org-Token")}
			}})
			return fmt.Sprintf("backend: openai: {base_url: %q, api_key_env: \"TOOLWARD_ECHO_KEY\", headers: {\"X-Org-Token\": %q}}", fake.BaseURL, token)
		}},
		{"anthropic", func(t *testing.T) string {
			fake := fakeanthropic.Start(t, fakeanthropic.Options{APIKey: key, Models: []fakeanthropic.Model{{ID: fakeollama.DefaultModel}},
				Script: func(req *fakeanthropic.Request) fakeanthropic.Reply {
					return fakeanthropic.Reply{Status: 502, ErrorType: "api_error", Error: "upstream refused x-api-key " + req.Header.Get("X-Api-Key") + " with X-Org-Token " + req.Header.Get("X-Org-Token")}
				}})
			return fmt.Sprintf("backend: anthropic: {base_url: %q, api_key_env: \"TOOLWARD_ECHO_KEY\", headers: {\"X-Org-Token\": %q}}", fake.URL, token)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TOOLWARD_ECHO_KEY", key)
			writeSuite(t, tt.backend(t))
			res, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff, Filters: []string{"seed=1"}})
			if err != nil {
				t.Fatal(err)
			}
			runs := readRuns(t, res.Dir)
			if len(runs) == 0 || runs[0].Outcome != record.Error {
				t.Fatalf("runs %+v; want errors", runs)
			}
			if msg := runs[0].Error.Message; !strings.Contains(msg, "[redacted TOOLWARD_ECHO_KEY]") || !strings.Contains(msg, "[redacted backend."+tt.name+".headers.X-Org-Token]") {
				t.Errorf("message %q; want the secrets named as redacted", msg)
			}
			if _, err := report.Build(res.Dir); err != nil {
				t.Fatal(err)
			}
			files := 0
			filepath.WalkDir(res.Dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				files++
				b, _ := os.ReadFile(path)
				for _, s := range []string{key, token} {
					// A header's value is the config's, which config.json
					// keeps for --resume; a key from the environment is not.
					if s == token && d.Name() == "config.json" {
						continue
					}
					if strings.Contains(string(b), s) {
						t.Errorf("%s holds the secret %s", path, s)
					}
				}
				return nil
			})
			if files < 6 { // config.json, runs.jsonl, summary.json, report.md, report.html, junit.xml
				t.Fatalf("only %d files checked", files)
			}
		})
	}
}
