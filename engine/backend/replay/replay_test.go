package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/schema"
)

const handWritten = `# A hand-written cassette.
case: sql-engineering-raise
runs:
  - when: {confirm: deny}
    turns:
      - content: I will not change anything.
  - when: {model: "qwen3:*", temperature: [0.7, 1]}
    turns:
      - thinking: Need the sum first.
        tool_calls:
          - name: query_database
            arguments: {sql: "SELECT SUM(salary) FROM employees", limit: 5, since: 2024-01-01, exact: 1.50}
        tokens: {in: 120, out: 14}
        latency_ms: 12.5
        done_reason: stop
      - content: |
          The total is $84,960.
          That is 12% of 708000.
  - turns:
      - tool_calls:
          - name: calculate
          - {name: calculate, arguments: "708000 * 0.12"}
          - {name: calculate, raw_arguments: '{"expression": '}
          - {name: calculate, arguments: [1, 2]}
      - content: The total is $84,960.
---
case: other
runs:
  - turns: [{content: hi}]
`

func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func cellOf(kv ...string) map[string]string {
	m := map[string]string{"model": "demo-model", "seed": "1", "temperature": "0", "tools": "needed", "confirm": "approve", "descriptions": "default"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func chat(t *testing.T, r backend.Backend, caseID string, c map[string]string, turn int) (*backend.Response, error) {
	t.Helper()
	return r.Chat(context.Background(), &backend.Request{Model: c["model"], Key: backend.Key{Case: caseID, Cell: c, Turn: turn}})
}

func TestReplaySelectors(t *testing.T) {
	r, err := New(writeDir(t, map[string]string{"sub/sql.yaml": handWritten}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Cases() != 2 {
		t.Errorf("cases = %d", r.Cases())
	}
	// confirm: deny wins over everything after it.
	resp, err := chat(t, r, "sql-engineering-raise", cellOf("confirm", "deny", "model", "qwen3:0.6b", "temperature", "0.7"), 0)
	if err != nil || resp.Message.Content != "I will not change anything." || resp.Message.Role != "assistant" {
		t.Fatalf("deny: %+v %v", resp, err)
	}
	// Glob on model, list of numbers on temperature ("1.0" equals 1).
	for _, temp := range []string{"0.7", "1.0"} {
		resp, err = chat(t, r, "sql-engineering-raise", cellOf("model", "qwen3:0.6b", "temperature", temp), 0)
		if err != nil {
			t.Fatal(err)
		}
		m := resp.Message
		if m.Thinking != "Need the sum first." || len(m.ToolCalls) != 1 || m.ToolCalls[0].Name != "query_database" {
			t.Fatalf("temperature %s: %+v", temp, m)
		}
		if got, want := string(m.ToolCalls[0].Arguments), `{"sql":"SELECT SUM(salary) FROM employees","limit":5,"since":"2024-01-01","exact":1.50}`; got != want {
			t.Errorf("arguments\n got  %s\n want %s", got, want)
		}
		if resp.TokensIn != 120 || resp.TokensOut != 14 || resp.Latency != 12500*time.Microsecond || resp.DoneReason != "stop" {
			t.Errorf("meta: %+v", resp)
		}
	}
	resp, err = chat(t, r, "sql-engineering-raise", cellOf("model", "qwen3:0.6b", "temperature", "0.7"), 1)
	if err != nil || resp.Message.Content != "The total is $84,960.\nThat is 12% of 708000.\n" {
		t.Fatalf("turn 1: %q %v", resp.Message.Content, err)
	}
	// Fallback run: arguments of every shape.
	resp, err = chat(t, r, "sql-engineering-raise", cellOf("model", "llama3.2:1b"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, c := range resp.Message.ToolCalls {
		args = append(args, string(c.Arguments))
	}
	if want := []string{`{}`, `"708000 * 0.12"`, `{"expression": `, `[1,2]`}; !reflect.DeepEqual(args, want) {
		t.Errorf("arguments = %q, want %q", args, want)
	}
	// The returned Response is a copy.
	resp.Message.Content = "mutated"
	again, _ := chat(t, r, "sql-engineering-raise", cellOf("model", "llama3.2:1b"), 0)
	if again.Message.Content != "" {
		t.Errorf("mutation leaked into the cassette: %q", again.Message.Content)
	}
}

func TestReplayMiss(t *testing.T) {
	dir := writeDir(t, map[string]string{"a.yaml": handWritten, "b.yaml": "case: narrow\nruns:\n  - when: {confirm: approve}\n    turns: [{content: ok}]\n"})
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		caseID string
		cell   map[string]string
		turn   int
		want   []string
	}{
		{"missing-case", cellOf(), 0, []string{`case "missing-case"`, "no cassette for case"}},
		{"sql-engineering-raise", cellOf("model", "qwen3:0.6b", "temperature", "0.7"), 2, []string{"turn 2", "has 2 turns", "a.yaml:7"}},
		{"narrow", cellOf("confirm", "deny"), 0, []string{"confirm: deny", "no run in", "when {confirm: approve}"}},
	}
	for _, tt := range tests {
		_, err := chat(t, r, tt.caseID, tt.cell, tt.turn)
		var be *backend.Error
		if !errors.As(err, &be) || be.Kind != backend.KindCassetteMiss || be.Retryable {
			t.Fatalf("%s: got %v, want a non-retryable cassette miss", tt.caseID, err)
		}
		for _, w := range append(tt.want, dir, "seed: 1") {
			if !strings.Contains(be.Msg, w) {
				t.Errorf("%s: message %q lacks %q", tt.caseID, be.Msg, w)
			}
		}
	}
}

func TestReplayCanceled(t *testing.T) {
	r, err := New(writeDir(t, map[string]string{"a.yaml": handWritten}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = r.Chat(ctx, &backend.Request{Key: backend.Key{Case: "other", Cell: cellOf()}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"unknown turn field", "case: x\nruns:\n  - turns:\n      - contnet: hi\n", `x.yaml:4:9: runs[0].turns[0].contnet: unknown field "contnet" (did you mean "content"?)`},
		{"unknown axis", "case: x\nruns:\n  - when: {temp: 0}\n    turns: [{content: a}]\n", `x.yaml:3:12: runs[0].when.temp: unknown field "temp"`},
		{"both arguments", "case: x\nruns:\n  - turns:\n      - tool_calls:\n          - {name: a, arguments: {}, raw_arguments: '{}'}\n", "runs[0].turns[0].tool_calls[0].raw_arguments: give arguments or raw_arguments"},
		{"missing case", "runs:\n  - turns: [{content: a}]\n", `x.yaml:1:1: missing field "case"`},
		{"no turns", "case: x\nruns:\n  - when: {seed: 1}\n", `x.yaml:3:5: runs[0]: missing field "turns"`},
		{"tool call without name", "case: x\nruns:\n  - turns:\n      - tool_calls: [{arguments: {}}]\n", `x.yaml:4:22: runs[0].turns[0].tool_calls[0]: missing field "name"`},
		{"bad tokens", "case: x\nruns:\n  - turns:\n      - {content: a, tokens: {in: many}}\n", "x.yaml:4:35: runs[0].turns[0].tokens.in: want a number"},
		{"syntax", "case: x\nruns: [\n", "x.yaml:3:1: YAML syntax: did not find expected node content"},
		{"tab indent", "case: x\nruns:\n\t- turns: []\n", "x.yaml:3:1: YAML syntax: found character that cannot start any token (this line is indented with a tab"},
		{"duplicate case", "case: x\nruns: [{turns: [{content: a}]}]\n---\ncase: x\nruns: [{turns: [{content: b}]}]\n", `x.yaml:4:7: case: case "x" already has a cassette at`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(writeDir(t, map[string]string{"x.yaml": tt.body}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := New(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no cassettes") {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := New(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Errorf("missing dir accepted")
	}
}

// scripted is an inner backend whose reply depends on the whole key.
type scripted struct{ calls int }

func (s *scripted) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	s.calls++
	k := req.Key
	resp := &backend.Response{TokensIn: 10 + k.Turn, TokensOut: 3, Latency: time.Duration(1234567 * (k.Turn + 1)), DoneReason: "stop"}
	resp.Message.Role = "assistant"
	switch k.Turn {
	case 0:
		resp.Message.Thinking = "plan: call tools\nthen answer"
		resp.Message.ToolCalls = []backend.ToolCall{
			{Name: "query_database", Arguments: json.RawMessage(`{"sql":"SELECT * FROM t WHERE a = 'x'","z":1,"a":{"nested":[1,2.50,1e5,-0.0,null,true]}}`)},
			{Name: "calculate", Arguments: json.RawMessage(`{"expression":"true","n":"123","d":"2024-01-01","u":"naïve — ok","e":"","s":"a: b # c"}`)},
			{Name: "broken", Arguments: json.RawMessage(`{"unterminated": `)},
			{Name: "stringy", Arguments: json.RawMessage(`"just text"`)},
		}
	case 1:
		resp.Message.Content = fmt.Sprintf("Answer for %s seed %s:\n  indented line\ntrailing", k.Case, k.Cell["seed"])
	default:
		resp.Message.Content = "yes"
	}
	return resp, nil
}

func TestRecorderRoundTrip(t *testing.T) {
	dir := t.TempDir()
	inner := &scripted{}
	rec := NewRecorder(inner, dir)
	type key struct {
		caseID string
		cell   map[string]string
		turn   int
	}
	var keys []key
	for _, caseID := range []string{"calc-basic", "weird/id with space"} {
		for _, c := range []map[string]string{cellOf(), cellOf("seed", "2", "confirm", "deny"), cellOf("model", "hf.co/x*y:q4", "temperature", "0.7")} {
			for turn := 0; turn < 3; turn++ {
				keys = append(keys, key{caseID, c, turn})
			}
		}
	}
	want := map[int]*backend.Response{}
	for i, k := range keys {
		resp, err := chat(t, rec, k.caseID, k.cell, k.turn)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = resp
	}
	// A retried run starts again at turn 0 and stops early: only its last
	// attempt may be kept.
	retried := cellOf("seed", "9")
	chat(t, rec, "calc-basic", retried, 0)
	chat(t, rec, "calc-basic", retried, 1)
	chat(t, rec, "calc-basic", retried, 2)
	chat(t, rec, "calc-basic", retried, 0)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "weird_id_with_space.yaml")); err != nil {
		t.Errorf("file name: %v", err)
	}

	r, err := New(dir)
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(dir, "calc-basic.yaml"))
		t.Fatalf("%v\n%s", err, b)
	}
	for i, k := range keys {
		got, err := chat(t, r, k.caseID, k.cell, k.turn)
		if err != nil {
			t.Fatalf("%+v: %v", k, err)
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%+v:\n got  %+v\n want %+v", k, got, want[i])
		}
	}
	if _, err := chat(t, r, "calc-basic", retried, 1); err == nil {
		t.Errorf("retried run kept a turn from its abandoned attempt")
	}
	// Exact selectors: a cell the recording did not see is a miss.
	if _, err := chat(t, r, "calc-basic", cellOf("seed", "3"), 0); err == nil {
		t.Errorf("unrecorded cell answered")
	}
	if _, err := chat(t, r, "calc-basic", cellOf("model", "hf.co/xzy:q4", "temperature", "0.7"), 0); err == nil {
		t.Errorf("glob characters in a recorded value were not escaped")
	}
}

func TestRecorderPassesErrors(t *testing.T) {
	dir := t.TempDir()
	rec := NewRecorder(failing{}, dir)
	if _, err := chat(t, rec, "x", cellOf(), 0); err == nil {
		t.Fatal("error swallowed")
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed turns were recorded: %v", entries)
	}
}

type failing struct{}

func (failing) Chat(context.Context, *backend.Request) (*backend.Response, error) {
	return nil, &backend.Error{Kind: backend.KindUnavailable, Msg: "down", Retryable: true}
}

func TestReplayConcurrent(t *testing.T) {
	r, err := New(writeDir(t, map[string]string{"a.yaml": handWritten}))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				resp, err := r.Chat(context.Background(), &backend.Request{Key: backend.Key{Case: "sql-engineering-raise", Cell: cellOf("confirm", "deny")}})
				if err != nil || resp.Message.Content == "" {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkReplayChat(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(handWritten), 0o644)
	r, err := New(dir)
	if err != nil {
		b.Fatal(err)
	}
	req := &backend.Request{Model: "qwen3:0.6b", Key: backend.Key{Case: "sql-engineering-raise", Cell: cellOf("model", "qwen3:0.6b", "temperature", "0.7"), Turn: 1}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Chat(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLoadRefusesHugeAndDevices: cassettes are read through
// schema.ReadFile, so a file over schema.MaxCassetteFileSize or a path
// naming a device is an error instead of an unbounded read.
func TestLoadRefusesHugeAndDevices(t *testing.T) {
	dir := writeDir(t, map[string]string{"ok.yaml": "case: x\nruns: [{turns: [{content: a}]}]\n"})
	huge := filepath.Join(dir, "huge.yaml")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, schema.MaxCassetteFileSize+1); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	_, err := New(dir)
	if err == nil || !strings.Contains(err.Error(), "huge.yaml: cassette file is 64.0 MiB") || !strings.Contains(err.Error(), "over the 64 MiB limit") {
		t.Errorf("huge file: %v", err)
	}
	os.Remove(huge)
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml")); err != nil {
		t.Skip(err)
	}
	if _, err := New(dir); err == nil || !strings.Contains(err.Error(), "zero.yaml: not a regular file (a character device)") {
		t.Errorf("device: %v", err)
	}
}
