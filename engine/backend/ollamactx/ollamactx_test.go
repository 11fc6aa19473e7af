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

func TestFullSize(t *testing.T) {
	t.Parallel()
	// A 15,591-token prompt cut at 512: measured at 2048, 8192 (cut),
	// then 32768 (whole).
	var tried []int
	need, _ := FullSize(512, 40960, func(n int) (int, error) { tried = append(tried, n); return min(15591, n), nil })
	if need != 15591 || len(tried) != 3 || tried[2] != 32768 {
		t.Errorf("need %d after trying %v", need, tried)
	}
	// Longer than MaxMeasure: the floor says how long at least.
	need, floor := FullSize(4096, 0, func(n int) (int, error) { return n, nil })
	if need != 0 || floor != MaxMeasure {
		t.Errorf("need %d, floor %d; want 0 and %d", need, floor, MaxMeasure)
	}
	// A server that answers the same count whatever the context.
	if need, floor := FullSize(512, 0, func(int) (int, error) { return 512, nil }); need != 0 || floor != 512 {
		t.Errorf("need %d, floor %d", need, floor)
	}
	// Ollama caps num_ctx at the model's own context: no try beyond it.
	tried = nil
	need, floor = FullSize(512, 4096, func(n int) (int, error) { tried = append(tried, n); return min(15591, n), nil })
	if need != 0 || floor != 4096 || tried[len(tried)-1] != 4096 {
		t.Errorf("need %d, floor %d after trying %v; want the prompt longer than the model's 4096", need, floor, tried)
	}
}
