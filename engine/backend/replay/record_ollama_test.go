package replay

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/engine/backend/ollama"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
)

// TestRecordOllamaThenReplay records a two-turn conversation from the real
// Ollama backend (against the fake server) and checks the cassette replays
// the same replies, field for field.
func TestRecordOllamaThenReplay(t *testing.T) {
	srv := fakeollama.Start(t, fakeollama.Options{Script: func(req *api.ChatRequest) fakeollama.Reply {
		if res, ok := fakeollama.LastToolResult(req); ok {
			return fakeollama.Reply{Content: "The result is " + res + ".", Thinking: "done"}
		}
		return fakeollama.Reply{Thinking: "use the tool", ToolCalls: []fakeollama.ToolCall{{Name: "calculate", Args: `{"expression":"6*7","precise":true}`}}}
	}})
	live, err := ollama.New(ollama.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rec := NewRecorder(live, dir)
	c := cellOf()
	msgs := []backend.Message{{Role: "user", Content: "What is 6*7?"}}
	var want []*backend.Response
	for turn := 0; turn < 2; turn++ {
		resp, err := rec.Chat(context.Background(), &backend.Request{Model: c["model"], Messages: msgs, Key: backend.Key{Case: "calc", Cell: c, Turn: turn}})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, resp)
		msgs = append(msgs, resp.Message)
		if len(resp.Message.ToolCalls) > 0 {
			msgs = append(msgs, backend.Message{Role: "tool", ToolName: "calculate", Content: "42"})
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for turn, w := range want {
		got, err := r.Chat(context.Background(), &backend.Request{Key: backend.Key{Case: "calc", Cell: c, Turn: turn}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, w) {
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(w)
			t.Errorf("turn %d:\n got  %s\n want %s", turn, a, b)
		}
	}
	if want[1].Message.Content != "The result is 42." {
		t.Errorf("conversation did not reach the tool result: %q", want[1].Message.Content)
	}
}
