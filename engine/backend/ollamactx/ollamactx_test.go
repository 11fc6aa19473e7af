package ollamactx

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

func TestLimit(t *testing.T) {
	t.Parallel()
	var asked atomic.Int32
	ps := `{"models":[{"name":"qwen3:0.6b","model":"qwen3:0.6b","context_length":8192}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		switch r.URL.Path {
		case "/api/ps":
			w.Write([]byte(ps))
		case "/api/show":
			w.Write([]byte(`{"model_info":{"general.architecture":"llama","llama.context_length":40960}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c := New(nil, srv.URL+"/")
	ctx := context.Background()
	if n, guessed := c.Limit(ctx, "qwen3:0.6b"); n != 8192 || guessed {
		t.Errorf("loaded model: Limit = %d, %v; want /api/ps's 8192", n, guessed)
	}
	if n, guessed := c.Limit(ctx, "llama3.2"); n != DefaultContext || !guessed {
		t.Errorf("model not running: Limit = %d, %v; want the model's 40960 capped at %d, guessed", n, guessed, DefaultContext)
	}
	before := asked.Load()
	c.Limit(ctx, "qwen3:0.6b")
	c.Limit(ctx, "llama3.2:latest")
	if asked.Load() != before {
		t.Error("the server was asked again about models it had answered for")
	}
	if c.IsOllama(ctx) {
		t.Error("a server without /api/version is Ollama")
	}
}

func TestTrainedContext(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		info map[string]any
		want int
	}{
		{map[string]any{"general.architecture": "qwen3", "qwen3.context_length": 40960.0, "llama.context_length": 1.0}, 40960},
		{map[string]any{"x.context_length": 2048.0}, 2048},
		{map[string]any{"general.architecture": "qwen3"}, 0},
		{nil, 0},
	} {
		if got := TrainedContext(tt.info); got != tt.want {
			t.Errorf("TrainedContext(%v) = %d, want %d", tt.info, got, tt.want)
		}
	}
}
