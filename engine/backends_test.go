package engine

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/openai"
	"github.com/toolward/toolward/fixtures/fakes/fakeanthropic"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
	"github.com/toolward/toolward/internal/analysis/report"
	"github.com/toolward/toolward/schema/record"
)

// The same engine scenarios against both real backends, each over
// loopback HTTP to its fake server, with the bundled MCP server: the
// verdicts, reasons, retries and run ids must not depend on the wire.

const backendCases = `
id: sum
prompt: What is 2 + 3?
needs: [calculate]
expect:
  calls: [{tool: calculate, args: {expression: {$contains: "+"}}}]
  answer: {$contains: "5"}
---
id: two-calls
prompt: What are 2 + 3 and 4 * 5?
needs: [calculate]
expect:
  order: unordered
  calls:
    - {tool: calculate, args: {expression: "2 + 3"}}
    - {tool: calculate, args: {expression: "4 * 5"}}
  answer: {$regex: '5\b.*\b20'}
---
id: wrong
prompt: What is 4 + 4?
needs: [calculate]
expect:
  calls: [{tool: calculate}]
  answer: {$contains: "8"}
---
id: malformed
prompt: What is 6 * 7?
needs: [calculate]
expect:
  calls: [{tool: calculate}]
  answer: {$contains: "42"}
---
id: broken
prompt: What is 7 * 8?
needs: [calculate]
expect:
  calls: [{tool: calculate}]
  answer: {$contains: "56"}
---
id: down
prompt: Nobody scripted this.
needs: [calculate]
expect:
  answer: {$any: true}
`

// call is one scripted tool call: Args is sent verbatim.
type call struct{ name, args string }

// turn is one scripted model reply.
type turn struct {
	content string
	calls   []call
	status  int // non-zero: answer this HTTP error instead
}

// conversation decides a reply from the first user message and the tool
// results so far, whatever the wire.
func conversation(first string, results []string) turn {
	switch first {
	case "What is 2 + 3?":
		if len(results) > 0 {
			return turn{content: "The calculator says: " + results[len(results)-1]}
		}
		return turn{calls: []call{{"calculate", `{"expression": "2 + 3"}`}}}
	case "What are 2 + 3 and 4 * 5?":
		if len(results) >= 2 {
			return turn{content: "They are 5 and 20."}
		}
		return turn{calls: []call{{"calculate", `{"expression": "2 + 3"}`}, {"calculate", `{"expression": "4 * 5"}`}}}
	case "What is 4 + 4?":
		return turn{content: "It is 9."}
	case "What is 7 * 8?":
		if len(results) > 0 {
			return turn{content: "It is 56."}
		}
		// Not JSON at all: only the OpenAI wire (a string) can carry it.
		return turn{calls: []call{{"calculate", `{"expression": "7 * 8"`}}}
	case "What is 6 * 7?":
		if len(results) > 0 {
			return turn{content: "It is 42."}
		}
		// A JSON string, not an object: both wires can carry it.
		return turn{calls: []call{{"calculate", `"6 * 7"`}}}
	}
	return turn{status: 500}
}

func ollamaScript() fakeollama.Script {
	return func(req *api.ChatRequest) fakeollama.Reply {
		var first string
		var results []string
		for _, m := range req.Messages {
			switch {
			case m.Role == "user" && first == "":
				first = m.Content
			case m.Role == "tool":
				results = append(results, m.Content)
			}
		}
		t := conversation(first, results)
		rep := fakeollama.Reply{Content: t.content, Status: t.status, Error: "unscripted"}
		for _, c := range t.calls {
			rep.ToolCalls = append(rep.ToolCalls, fakeollama.ToolCall{Name: c.name, Args: c.args})
		}
		return rep
	}
}

func openaiScript(whole bool) fakeopenai.Script {
	return func(req *fakeopenai.Request) fakeopenai.Reply {
		var results []string
		for _, m := range req.Messages {
			if m.Role == "tool" {
				results = append(results, m.Content)
			}
		}
		t := conversation(fakeopenai.FirstUser(req), results)
		rep := fakeopenai.Reply{Content: t.content, Status: t.status, Error: "unscripted", Whole: whole, Chunks: 4}
		for i, c := range t.calls {
			rep.ToolCalls = append(rep.ToolCalls, fakeopenai.ToolCall{ID: fmt.Sprintf("call_%d_%d", len(results), i), Name: c.name, Args: c.args})
		}
		return rep
	}
}

func anthropicScript() fakeanthropic.Script {
	return func(req *fakeanthropic.Request) fakeanthropic.Reply {
		t := conversation(fakeanthropic.FirstUser(req), fakeanthropic.ToolResults(req))
		rep := fakeanthropic.Reply{Content: t.content, Status: t.status, Error: "unscripted", Chunks: 4}
		for _, c := range t.calls {
			rep.ToolCalls = append(rep.ToolCalls, fakeanthropic.ToolCall{Name: c.name, Args: c.args})
		}
		return rep
	}
}

// anthropicKey is the API key the fake Anthropic API of these tests
// wants, from the variable anthropicKeyEnv.
const anthropicKey, anthropicKeyEnv = "sk-ant-toolward-test-3b9d", "TOOLWARD_TEST_ANTHROPIC_KEY"

// wire is one backend and its fake, as a config's backend block.
type wire struct {
	name    string
	backend func(t *testing.T) string
}

func wires() []wire {
	openaiWire := func(whole, stream bool) func(t *testing.T) string {
		return func(t *testing.T) string {
			fake := fakeopenai.Start(t, fakeopenai.Options{Script: openaiScript(whole), FailFirst: 1})
			return fmt.Sprintf("backend: openai: {base_url: %q, stream: %v}", fake.BaseURL, stream)
		}
	}
	return []wire{
		{"ollama", func(t *testing.T) string {
			fake := fakeollama.Start(t, fakeollama.Options{Script: ollamaScript(), FailFirst: 1})
			return fmt.Sprintf("backend: ollama: host: %q", fake.URL)
		}},
		{"openai fragments", openaiWire(false, true)},
		{"openai whole", openaiWire(true, true)},
		{"openai not streamed", openaiWire(false, false)},
		{"anthropic", func(t *testing.T) string {
			t.Setenv(anthropicKeyEnv, anthropicKey)
			fake := fakeanthropic.Start(t, fakeanthropic.Options{Script: anthropicScript(), FailFirst: 1, APIKey: anthropicKey,
				Models: []fakeanthropic.Model{{ID: fakeollama.DefaultModel}}})
			return fmt.Sprintf("backend: anthropic: {base_url: %q, api_key_env: %q}", fake.URL, anthropicKeyEnv)
		}},
	}
}

// writeSuite writes the cases and a config with the given backend block
// into a fresh working directory.
func writeSuite(t *testing.T, backendBlock string) {
	t.Helper()
	t.Chdir(t.TempDir())
	os.MkdirAll("cases", 0o755)
	os.WriteFile("cases/calc.yaml", []byte(backendCases), 0o644)
	os.WriteFile("run.cue", []byte(fmt.Sprintf(`
name: "backends"
cases: ["cases/*.yaml"]
server: builtin: {}
%s
matrix: {models: [%q], seeds: [1, 2]}
limits: {retries: 2, concurrency: 2}
`, backendBlock, fakeollama.DefaultModel)), 0o644)
}

// verdict is what a run came to, without what legitimately differs
// between wires (latencies, token counts).
type verdict struct {
	outcome, errKind string
	reasons          []string
	calls            []string // tool:malformed?
	answer           string
}

func verdictOf(r record.Record) verdict {
	v := verdict{outcome: string(r.Outcome), answer: r.Trace.Answer}
	if r.Error != nil {
		v.errKind = r.Error.Kind
	}
	for _, rs := range r.Reasons {
		v.reasons = append(v.reasons, rs.Code)
	}
	for _, c := range r.Trace.Calls {
		v.calls = append(v.calls, fmt.Sprintf("%s:%v:%s", c.Tool, c.Malformed, c.Result))
	}
	return v
}

func TestBackendsSameScenarios(t *testing.T) {
	want := map[string]verdict{
		"sum":       {outcome: "pass", calls: []string{"calculate:false:5"}, answer: "The calculator says: 5"},
		"two-calls": {outcome: "pass", calls: []string{"calculate:false:5", "calculate:false:20"}, answer: "They are 5 and 20."},
		"wrong":     {outcome: "fail", reasons: []string{"missing_call", "answer_mismatch"}, answer: "It is 9."},
		"malformed": {outcome: "fail", reasons: []string{"malformed_call", "missing_call"}, answer: "It is 42."},
		"broken":    {outcome: "fail", reasons: []string{"malformed_call", "missing_call"}, answer: "It is 56."},
		"down":      {outcome: "error", errKind: backend.KindUnavailable},
	}
	var firstIDs []string
	for _, w := range wires() {
		t.Run(w.name, func(t *testing.T) {
			writeSuite(t, w.backend(t))
			res, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff})
			if err != nil {
				t.Fatal(err)
			}
			retried := 0
			var ids []string
			for _, r := range readRuns(t, res.Dir) {
				ids = append(ids, r.ID)
				if (r.Case == "malformed" || r.Case == "broken") && w.name == "ollama" {
					// Ollama's API holds arguments as an object: its wire
					// cannot carry a call whose arguments are not one (the
					// client fails to decode it, an infrastructure error).
					continue
				}
				got := verdictOf(r)
				wv := want[r.Case]
				if (r.Case == "malformed" || r.Case == "broken") && len(got.calls) == 1 {
					got.calls = nil // the error text quotes the arguments as the wire carried them
				}
				if got.outcome != wv.outcome || got.errKind != wv.errKind || !slices.Equal(got.reasons, wv.reasons) ||
					(wv.calls != nil && !slices.Equal(got.calls, wv.calls)) || got.answer != wv.answer {
					t.Errorf("%s seed %d: got %+v, want %+v (error %+v)", r.Case, r.Cell.Seed, got, wv, r.Error)
				}
				if r.Case == "malformed" && (len(r.Trace.Calls) != 1 || !r.Trace.Calls[0].Malformed || r.Trace.Calls[0].RawArgs != `"6 * 7"`) {
					t.Errorf("malformed call %+v", r.Trace.Calls)
				}
				if r.Case == "broken" && (len(r.Trace.Calls) != 1 || !r.Trace.Calls[0].Malformed || r.Trace.Calls[0].RawArgs != `{"expression": "7 * 8"`) {
					t.Errorf("broken call %+v", r.Trace.Calls)
				}
				if r.Case == "down" && r.Attempts != 3 {
					t.Errorf("down: %d attempts, want 3", r.Attempts)
				}
				if r.Case != "down" && r.Attempts == 2 {
					retried++
				}
				if r.Case == "sum" && r.Tokens.In == 0 {
					t.Errorf("sum: no token counts: %+v", r.Tokens)
				}
			}
			if retried != 1 {
				t.Errorf("%d runs retried after the one injected failure, want 1", retried)
			}
			slices.Sort(ids)
			if firstIDs == nil {
				firstIDs = ids
			} else if !slices.Equal(ids, firstIDs) {
				t.Errorf("run ids differ between wires:\n%v\n%v", ids, firstIDs)
			}
		})
	}
}

// TestOpenAIKeyNeverWritten: the API key reaches the server but no file
// of the result directory (config.json, runs.jsonl, the reports), nor
// recorded cassettes.
func TestOpenAIKeyNeverWritten(t *testing.T) {
	const secret = "sk-toolward-test-6f1c2a9e"
	t.Setenv("TOOLWARD_TEST_KEY", secret)
	fake := fakeopenai.Start(t, fakeopenai.Options{APIKey: secret, Script: openaiScript(false)})
	writeSuite(t, fmt.Sprintf("backend: openai: {base_url: %q, api_key_env: \"TOOLWARD_TEST_KEY\", headers: {\"X-Org\": \"evals\"}}", fake.BaseURL))
	res, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff, RecordDir: "cassettes"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pass == 0 {
		t.Fatalf("nothing passed: %+v", res)
	}
	if _, err := report.Build(res.Dir); err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, dir := range []string{res.Dir, "cassettes"} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			b, _ := os.ReadFile(path)
			if strings.Contains(string(b), secret) {
				t.Errorf("%s contains the API key", path)
			}
			return nil
		})
	}
	if files < 6 { // config.json, runs.jsonl, 4 reports, cassettes
		t.Fatalf("only %d files checked", files)
	}
	meta, _ := os.ReadFile(filepath.Join(res.Dir, "config.json"))
	for _, want := range []string{`"api_key_env": "TOOLWARD_TEST_KEY"`, `"owned_by": "fakeopenai"`, "openai-compatible server at " + fake.BaseURL} {
		if !strings.Contains(string(meta), want) {
			t.Errorf("config.json lacks %s:\n%s", want, meta)
		}
	}
}

// TestOpenAIPreflightStops: nothing listening, a refused key and a missing
// model stop the job before any run, with no result directory left.
func TestOpenAIPreflightStops(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	keyed := fakeopenai.Start(t, fakeopenai.Options{APIKey: "right"})
	other := fakeopenai.Start(t, fakeopenai.Options{Models: []fakeopenai.Model{{ID: "other-model"}}})
	t.Setenv("TOOLWARD_TEST_KEY", "wrong")
	for _, tc := range []struct{ block, says string }{
		{fmt.Sprintf("backend: openai: base_url: %q", closed), "cannot reach an OpenAI-compatible server at " + closed},
		{fmt.Sprintf("backend: openai: {base_url: %q, api_key_env: \"TOOLWARD_TEST_KEY\"}", keyed.BaseURL), "check that $TOOLWARD_TEST_KEY (backend.openai.api_key_env) holds a key this server accepts"},
		{fmt.Sprintf("backend: openai: base_url: %q", other.BaseURL), "does not serve model demo-model; it lists: other-model"},
	} {
		writeSuite(t, tc.block)
		_, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled})
		if err == nil || !strings.Contains(err.Error(), "nothing ran") || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v", tc.block, err)
		}
		if entries, _ := os.ReadDir("results/backends"); len(entries) > 0 {
			t.Errorf("%s: a result directory was left", tc.block)
		}
	}
}

// TestOpenAIRetryAfterAndOverflow: a 429's Retry-After is waited out
// (a lower bound, which a timer guarantees) and the same request sent
// again, costing no attempt; a context overflow is its own error kind and
// is not retried.
func TestOpenAIRetryAfterAndOverflow(t *testing.T) {
	fake := fakeopenai.Start(t, fakeopenai.Options{Script: openaiScript(false), FailFirst: 1, FailStatus: 429, FailRetryAfter: "1"})
	writeSuite(t, fmt.Sprintf("backend: openai: base_url: %q", fake.BaseURL))
	res, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff, Filters: []string{"case=sum", "seed=1"}})
	if err != nil {
		t.Fatal(err)
	}
	recs := readRuns(t, res.Dir)
	if len(recs) != 1 || recs[0].Outcome != "pass" || recs[0].Attempts != 1 || recs[0].Duration.Duration() < time.Second ||
		len(recs[0].Throttled) != 1 || recs[0].Throttled[0].Requests != 1 || recs[0].Throttled[0].Wait.Duration() != time.Second {
		t.Fatalf("records %+v", recs)
	}

	// The first turn (9 tokens) fits, the second (18) does not.
	small := fakeopenai.Start(t, fakeopenai.Options{Script: openaiScript(false), ContextTokens: 12})
	writeSuite(t, fmt.Sprintf("backend: openai: base_url: %q", small.BaseURL))
	res, err = Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff, Filters: []string{"case=sum", "seed=1"}})
	if err != nil {
		t.Fatal(err)
	}
	recs = readRuns(t, res.Dir)
	if len(recs) != 1 || recs[0].Outcome != "error" || recs[0].Error.Kind != backend.KindContextOverflow || recs[0].Attempts != 1 || len(recs[0].Trace.Calls) != 1 {
		t.Fatalf("records %+v", recs)
	}
}

// TestOpenAIPreflightWarns: a server without a model list runs the job,
// with a warning on the progress output and in config.json.
func TestOpenAIPreflightWarns(t *testing.T) {
	fake := fakeopenai.Start(t, fakeopenai.Options{Script: openaiScript(false), NoModels: true})
	writeSuite(t, fmt.Sprintf("backend: openai: base_url: %q", fake.BaseURL))
	var prog strings.Builder
	res, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff, Filters: []string{"case=sum"}, Progress: &prog})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pass != 2 || !strings.Contains(prog.String(), "warning: backend: cannot list models (GET "+fake.BaseURL+"/models answered 404 Not Found: 404 page not found); checking each model with a chat request instead\n") {
		t.Errorf("result %+v, progress:\n%s", res, prog.String())
	}
	meta, _ := os.ReadFile(filepath.Join(res.Dir, "config.json"))
	if !strings.Contains(string(meta), `"warnings": [`) {
		t.Errorf("config.json has no warnings:\n%s", meta)
	}
}

// BenchmarkRunFakeOpenAI: BenchmarkRunFakeOllama's job through the openai
// backend and the fake OpenAI-compatible server (fragmented arguments,
// usage chunk), for comparing the two wires.
func BenchmarkRunFakeOpenAI(b *testing.B) {
	fake := fakeopenai.Start(b, fakeopenai.Options{Script: func(req *fakeopenai.Request) fakeopenai.Reply {
		if res, ok := fakeopenai.LastToolResult(req); ok {
			return fakeopenai.Reply{Content: "The sum is " + res + "."}
		}
		return fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{Name: "calculate", Args: `{"expression": "2 + 3"}`}}}
	}})
	be, err := openai.New(openai.Config{BaseURL: fake.BaseURL})
	if err != nil {
		b.Fatal(err)
	}
	j, p := benchJob(b, be, fakeopenai.DefaultModel)
	benchRuns(b, j, p)
}

// TestAnthropicKeyNeverWritten: the API key reaches the server but no file
// of the result directory, nor recorded cassettes; config.json and the
// reports say the backend takes no seed.
func TestAnthropicKeyNeverWritten(t *testing.T) {
	t.Setenv(anthropicKeyEnv, anthropicKey)
	fake := fakeanthropic.Start(t, fakeanthropic.Options{APIKey: anthropicKey, Script: anthropicScript(), Models: []fakeanthropic.Model{{ID: fakeollama.DefaultModel}}})
	writeSuite(t, fmt.Sprintf("backend: anthropic: {base_url: %q, api_key_env: %q, headers: {\"anthropic-beta\": \"evals\"}}", fake.URL, anthropicKeyEnv))
	res, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff, RecordDir: "cassettes"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pass == 0 {
		t.Fatalf("nothing passed: %+v", res)
	}
	if _, err := report.Build(res.Dir); err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, dir := range []string{res.Dir, "cassettes"} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			b, _ := os.ReadFile(path)
			if strings.Contains(string(b), anthropicKey) {
				t.Errorf("%s contains the API key", path)
			}
			return nil
		})
	}
	if files < 6 {
		t.Fatalf("only %d files checked", files)
	}
	for _, r := range fake.Requests() {
		if r.Header.Get("X-Api-Key") != anthropicKey || r.Header.Get("Anthropic-Version") != "2023-06-01" || r.Header.Get("Anthropic-Beta") != "evals" {
			t.Fatalf("request headers %v", r.Header)
		}
	}
	meta, _ := os.ReadFile(filepath.Join(res.Dir, "config.json"))
	for _, want := range []string{`"api_key_env": "` + anthropicKeyEnv + `"`, `"unseeded": true`, "Anthropic Messages API at " + fake.URL} {
		if !strings.Contains(string(meta), want) {
			t.Errorf("config.json lacks %s:\n%s", want, meta)
		}
	}
	md, _ := os.ReadFile(filepath.Join(res.Dir, "report.md"))
	if !strings.Contains(string(md), "the backend takes no seed") {
		t.Errorf("report.md does not say the backend takes no seed:\n%s", md)
	}
}

// TestAnthropicPreflightStops: nothing listening, a refused key, a
// missing model (named with the paginated list and a did-you-mean) stop
// the job before any run, with no result directory left.
func TestAnthropicPreflightStops(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	keyed := fakeanthropic.Start(t, fakeanthropic.Options{APIKey: "right"})
	paged := fakeanthropic.Start(t, fakeanthropic.Options{PageSize: 2, Models: []fakeanthropic.Model{
		{ID: "claude-haiku-4-5-20251001"}, {ID: "claude-opus-4-6"}, {ID: "claude-sonnet-4-6"}, {ID: "demo-model-2"}, {ID: "zeta"},
	}})
	t.Setenv(anthropicKeyEnv, "wrong")
	for _, tc := range []struct{ block, says string }{
		{fmt.Sprintf("backend: anthropic: {base_url: %q, api_key_env: \"\"}", closed), "cannot reach the Anthropic API at " + closed},
		{fmt.Sprintf("backend: anthropic: {base_url: %q, api_key_env: %q}", keyed.URL, anthropicKeyEnv), "401 Unauthorized: invalid x-api-key (authentication_error); check that $" + anthropicKeyEnv + " (backend.anthropic.api_key_env) holds an Anthropic API key"},
		{fmt.Sprintf("backend: anthropic: {base_url: %q, api_key_env: \"\"}", paged.URL), "has no model demo-model (did you mean demo-model-2?); it lists: claude-haiku-4-5-20251001, claude-opus-4-6, claude-sonnet-4-6, demo-model-2, zeta"},
	} {
		writeSuite(t, tc.block)
		_, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled})
		if err == nil || !strings.Contains(err.Error(), "nothing ran") || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v", tc.block, err)
		}
		if entries, _ := os.ReadDir("results/backends"); len(entries) > 0 {
			t.Errorf("%s: a result directory was left", tc.block)
		}
	}
	if paged.Pages() != 3 {
		t.Errorf("read %d pages of the model list, want 3", paged.Pages())
	}
}

// TestAnthropicThrottleAndOverflow: 429 and 529 are waited out (the
// server's retry-after, a lower bound a timer guarantees) and the same
// request sent again inside the one attempt, without restarting the run
// or using up limits.retries; a prompt
// too long is its own error kind and is not retried.
func TestAnthropicThrottleAndOverflow(t *testing.T) {
	for _, status := range []int{429, 529} {
		fake := fakeanthropic.Start(t, fakeanthropic.Options{Script: anthropicScript(), FailFirst: 2, FailStatus: status, FailRetryAfter: "0.25",
			Models: []fakeanthropic.Model{{ID: fakeollama.DefaultModel}}})
		writeSuite(t, fmt.Sprintf("backend: anthropic: {base_url: %q, api_key_env: \"\"}", fake.URL))
		res, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff, Filters: []string{"case=sum", "seed=1"}})
		if err != nil {
			t.Fatal(err)
		}
		recs := readRuns(t, res.Dir)
		if len(recs) != 1 || recs[0].Outcome != "pass" || recs[0].Attempts != 1 || recs[0].Duration.Duration() < 500*time.Millisecond || len(fake.Requests()) != 4 {
			t.Fatalf("%d: records %+v, %d requests", status, recs, len(fake.Requests()))
		}
		if th := recs[0].Throttled; len(th) != 1 || th[0].Host != fake.URL || th[0].Requests != 2 {
			t.Errorf("%d: throttled %+v", status, th)
		}
	}

	small := fakeanthropic.Start(t, fakeanthropic.Options{Script: anthropicScript(), ContextTokens: 12, Models: []fakeanthropic.Model{{ID: fakeollama.DefaultModel}}})
	writeSuite(t, fmt.Sprintf("backend: anthropic: {base_url: %q, api_key_env: \"\"}", small.URL))
	res, err := Run(context.Background(), Options{ConfigPath: "run.cue", Builtin: Bundled, Backoff: noBackoff, Filters: []string{"case=sum", "seed=1"}})
	if err != nil {
		t.Fatal(err)
	}
	recs := readRuns(t, res.Dir)
	if len(recs) != 1 || recs[0].Outcome != "error" || recs[0].Error.Kind != backend.KindContextOverflow || recs[0].Attempts != 1 || len(recs[0].Trace.Calls) != 1 {
		t.Fatalf("records %+v", recs)
	}
}
