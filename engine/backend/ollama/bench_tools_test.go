package ollama

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
)

// BenchmarkChatManyTools: one chat offering 64 tools, as a toolcount
// config's n64 cell does; the fake server runs in-process.
func BenchmarkChatManyTools(b *testing.B) {
	srv := fakeollama.New(fakeollama.Options{Script: func(*api.ChatRequest) fakeollama.Reply { return fakeollama.Reply{Content: "ok"} }})
	defer srv.Close()
	be := newBackend(b, srv, Config{})
	req := simpleRequest()
	for i := range 64 {
		req.Tools = append(req.Tools, backend.Tool{
			Name: fmt.Sprintf("tool_%d", i), Description: "Looks something up in a catalog of things.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What to look up."},"limit":{"type":"integer","minimum":1,"maximum":50},"mode":{"type":"string","enum":["fast","exact"]}},"required":["query"]}`),
		})
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := be.Chat(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
