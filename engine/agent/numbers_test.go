package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/openai"
	"github.com/toolward/toolward/engine/backend/replay"
	"github.com/toolward/toolward/engine/session"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
	"github.com/toolward/toolward/matchers"
	"github.com/toolward/toolward/schema"
	"github.com/toolward/toolward/schema/record"
)

// argTools records the arguments of every call, as the server would
// receive them (JSON-encoded).
type argTools struct{ sent []string }

func (a *argTools) Call(ctx context.Context, name string, args map[string]any, timeout time.Duration) (*session.Result, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	a.sent = append(a.sent, string(b))
	return &session.Result{Text: "ok"}, nil
}

func TestDecodeArgsKeepsNumberText(t *testing.T) {
	m, err := decodeArgs(json.RawMessage(` {"n": 10.0, "f": 1.50, "big": 9007199254740993, "l": [1e2, -0], "o": {"x": 3}} `))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": json.Number("10.0"), "f": json.Number("1.50"), "big": json.Number("9007199254740993")}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %#v, want %#v", k, m[k], v)
		}
	}
	if l := m["l"].([]any); l[0] != json.Number("1e2") || l[1] != json.Number("-0") {
		t.Errorf("list = %#v", l)
	}
	if o := m["o"].(map[string]any); o["x"] != json.Number("3") {
		t.Errorf("object = %#v", o)
	}
	for raw, msg := range map[string]string{
		`{"a": 1} x`:                "must be a JSON object",
		`{"a": 1}{"b": 2}`:          "must be a JSON object",
		`{"a": 1`:                   "must be a JSON object",
		`[1]`:                       "must be a JSON object",
		`{"a": 1e400}`:              "hold a number out of range (1e400)",
		`{"b": [1, {"c": -2e308}]}`: "hold a number out of range (-2e308)",
	} {
		if _, err := decodeArgs(json.RawMessage(raw)); err == nil || err.Error() != msg {
			t.Errorf("%s: error %v, want %q", raw, err, msg)
		}
	}
}

// The malformed-call result tells the model what was wrong.
func TestOutOfRangeNumberIsMalformed(t *testing.T) {
	b := &script{replies: []backend.Message{{ToolCalls: []backend.ToolCall{call("add", `{"a": 1e999}`)}}, {Content: "done"}}}
	tl := &tools{}
	out, err := Run(context.Background(), b, tl, input())
	if err != nil {
		t.Fatal(err)
	}
	c := out.Trace.Calls[0]
	if !c.Malformed || c.RawArgs != `{"a": 1e999}` || len(tl.calls) != 0 || c.Result != `Error: the arguments for add hold a number out of range (1e999), got: {"a": 1e999}` {
		t.Errorf("call = %+v, server saw %v", c, tl.calls)
	}
}

// intExpect is an integer parameter, as `toolward import bfcl` writes
// one, next to a float compared by value.
func intExpect(t *testing.T) *matchers.Expectation {
	t.Helper()
	e, err := matchers.CompileExpect(map[string]any{
		"calls":       []any{map[string]any{"tool": "add", "args": map[string]any{"n": map[string]any{"$int": int64(10)}, "x": 1.5}}},
		"strict_args": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// scoreRun runs one case through b, scores it, writes the record as the
// engine does and reads it back; it returns the live verdict, the line
// written and the verdict on the record read back.
func scoreRun(t *testing.T, b backend.Backend, in Input) (live matchers.Verdict, line string, reread matchers.Verdict, sent []string) {
	t.Helper()
	tl := &argTools{}
	out, err := Run(context.Background(), b, tl, in)
	if err != nil {
		t.Fatal(err)
	}
	e := intExpect(t)
	live = e.Score(out.Trace.Scored(), matchers.Cell{})
	var buf bytes.Buffer
	if err := record.NewWriter(&buf).Write(&record.Record{ID: "r1", Case: in.Case.ID, Trace: out.Trace}); err != nil {
		t.Fatal(err)
	}
	r := record.NewReader(bytes.NewReader(buf.Bytes()), "runs.jsonl")
	if !r.Scan() {
		t.Fatal("no record read back")
	}
	rec, err := r.Record()
	if err != nil {
		t.Fatal(err)
	}
	return live, buf.String(), e.Score(rec.Trace.Scored(), matchers.Cell{}), tl.sent
}

// checkVerdicts: 10 passes and 10.0 fails the integer parameter, live and
// re-scored from runs.jsonl alike, and the record and the server keep the
// model's text.
func checkVerdicts(t *testing.T, name string, b backend.Backend, in Input, args string, pass bool) {
	t.Helper()
	live, line, reread, sent := scoreRun(t, b, in)
	if live.Pass != pass || reread.Pass != pass {
		t.Errorf("%s %s: live pass %v (%v), re-scored pass %v (%v); want %v", name, args, live.Pass, live.Reasons, reread.Pass, reread.Reasons, pass)
	}
	if !pass && (len(live.Reasons) == 0 || !strings.Contains(live.Reasons[0].Detail, "args.n: want integer 10, got 1")) {
		t.Errorf("%s %s: reasons %v", name, args, live.Reasons)
	}
	if len(live.Reasons) != len(reread.Reasons) || (len(live.Reasons) > 0 && live.Reasons[0] != reread.Reasons[0]) {
		t.Errorf("%s: re-scored reasons %v, live %v", name, reread.Reasons, live.Reasons)
	}
	compact := strings.ReplaceAll(args, " ", "")
	if !strings.Contains(line, `"args":`+compact) {
		t.Errorf("%s: runs.jsonl line does not keep %s: %s", name, compact, line)
	}
	if len(sent) != 1 || sent[0] != compact {
		t.Errorf("%s: the server received %v, want %s", name, sent, compact)
	}
}

func numberCase() Input {
	in := input()
	in.Case = &schema.Case{ID: "int-param", Prompt: "add ten"}
	return in
}

func TestIntegerParameterThroughReplay(t *testing.T) {
	for _, tc := range []struct {
		yamlArgs, jsonArgs string
		pass               bool
	}{
		{"{n: 10, x: 1.5}", `{"n":10,"x":1.5}`, true},
		{"{n: 10.0, x: 1.50}", `{"n":10.0,"x":1.50}`, false},
		{"{n: 1e1, x: 1.5}", `{"n":1e1,"x":1.5}`, false},
		{"{n: 10, x: 15e-1}", `{"n":10,"x":15e-1}`, true},
	} {
		dir := t.TempDir()
		cassette := "case: int-param\nruns:\n  - turns:\n      - tool_calls: [{name: add, arguments: " + tc.yamlArgs + "}]\n      - content: done\n"
		if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(cassette), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := replay.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		checkVerdicts(t, "replay", r, numberCase(), tc.jsonArgs, tc.pass)
	}
}

func TestIntegerParameterThroughOpenAI(t *testing.T) {
	for _, tc := range []struct {
		args string
		pass bool
	}{
		{`{"n": 10, "x": 1.5}`, true},
		{`{"n": 10.0, "x": 1.5}`, false},
		{`{"n": 10, "x": 1.50}`, true},
	} {
		fake := fakeopenai.Start(t, fakeopenai.Options{AnyModel: true, Script: fakeopenai.Queue(
			fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{Name: "add", Args: tc.args}}},
			fakeopenai.Reply{Content: "done"},
		)})
		b, err := openai.New(openai.Config{BaseURL: fake.BaseURL})
		if err != nil {
			t.Fatal(err)
		}
		checkVerdicts(t, "openai", b, numberCase(), tc.args, tc.pass)
	}
}
