package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/toolward/toolward/engine/backend"
)

// A cassette's numbers are replayed as written, so that the agent, which
// keeps the text (json.Number), sees 10.0 where the cassette says 10.0:
// an integer matcher can reject it as it would a live model's. Writing a
// cassette (the recorder) and reading it back keeps the text too.
func TestCassetteNumbersKeepTheirText(t *testing.T) {
	const src = "case: c\nruns:\n  - turns:\n      - tool_calls: [{name: add, arguments: {a: 10, b: 10.0, c: 1e1, d: -0.0, e: 1.50, f: [2.0, 3], g: {h: 9007199254740993}}}]\n"
	want := `{"a":10,"b":10.0,"c":1e1,"d":-0.0,"e":1.50,"f":[2.0,3],"g":{"h":9007199254740993}}`
	cs, err := parse("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(cs[0].Runs[0].Turns[0].ToolCalls[0].Arguments); got != want {
		t.Fatalf("replayed arguments %s, want %s", got, want)
	}
	var buf bytes.Buffer
	if err := Write(&buf, cs[0]); err != nil {
		t.Fatal(err)
	}
	back, err := parse("c.yaml", buf.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	if got := string(back[0].Runs[0].Turns[0].ToolCalls[0].Arguments); got != want {
		t.Errorf("after Write and Parse: %s, want %s\n%s", got, want, buf.Bytes())
	}
}

// A recorded model reply keeps its argument text in the cassette.
func TestRecordedNumbersKeepTheirText(t *testing.T) {
	dir := t.TempDir()
	inner := &fixedReply{resp: &backend.Response{Message: backend.Message{ToolCalls: []backend.ToolCall{{Name: "add", Arguments: json.RawMessage(`{"n": 10.0, "x": 2.50e0}`)}}}}}
	rec := NewRecorder(inner, dir)
	req := &backend.Request{Model: "m", Key: backend.Key{Case: "c", Cell: map[string]string{"model": "m", "seed": "1"}}}
	if _, err := rec.Chat(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.Chat(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(resp.Message.ToolCalls[0].Arguments); got != `{"n":10.0,"x":2.50e0}` {
		t.Errorf("replayed %s", got)
	}
}

// fixedReply answers every request with resp.
type fixedReply struct{ resp *backend.Response }

func (f *fixedReply) Chat(ctx context.Context, req *backend.Request) (*backend.Response, error) {
	r := *f.resp
	return &r, nil
}
