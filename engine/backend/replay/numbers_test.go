package replay

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolward/toolward/engine/backend"
)

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
