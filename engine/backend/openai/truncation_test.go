package openai

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolward/toolward/engine/backend"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
)

func manyTools(n int) []backend.Tool {
	out := make([]backend.Tool, n)
	for i := range out {
		out[i] = backend.Tool{Name: "tool_" + strings.Repeat("x", i+1), Description: "does something", InputSchema: []byte(`{"type":"object","properties":{}}`)}
	}
	return out
}

// ollamaV1 is a fake Ollama /v1 with the sizes of truncation.txt: 64
// tools make 15,591 prompt tokens, one tool 300; the server's context is
// 4,096, the model's own 40,960.
func ollamaV1(t *testing.T) *fakeopenai.Server {
	return fakeopenai.Start(t, fakeopenai.Options{
		Models:        []fakeopenai.Model{{ID: "qwen3:0.6b", OwnedBy: "library", ContextLength: 40960}},
		OllamaContext: 4096,
		PromptTokens: func(req *fakeopenai.Request) int {
			if len(req.Tools) == 64 {
				return 15591
			}
			return 300
		},
		Script: fakeopenai.Queue(fakeopenai.Reply{Content: "14"}),
	})
}

// TestChatOllamaV1Truncated: Ollama's /v1 answers a cut prompt with 200
// and usage.prompt_tokens equal to its context (truncation.txt); the
// backend calls it context_truncated and says the fix is the server's.
func TestChatOllamaV1Truncated(t *testing.T) {
	t.Parallel()
	srv := ollamaV1(t)
	b, err := New(Config{BaseURL: srv.BaseURL, NoStream: true})
	if err != nil {
		t.Fatal(err)
	}
	req := &backend.Request{Model: "qwen3:0.6b", Messages: []backend.Message{{Role: "user", Content: "What is 2 + 3 * 4?"}}, Tools: manyTools(64)}
	_, err = b.Chat(context.Background(), req)
	var be *backend.Error
	if !errors.As(err, &be) || be.Kind != backend.KindContextTruncated || be.Retryable {
		t.Fatalf("Chat error = %v; want context_truncated, not retryable", err)
	}
	for _, want := range []string{"needs 15,591 tokens", "cut it to 4,096", "Ollama's /v1 takes no num_ctx", "OLLAMA_CONTEXT_LENGTH=16384"} {
		if !strings.Contains(be.Msg, want) {
			t.Errorf("message %q lacks %q", be.Msg, want)
		}
	}
	f, err := b.MeasurePrompt(context.Background(), req)
	if err != nil || !f.Cut() || f.Need != 15591 {
		t.Errorf("MeasurePrompt = %+v, %v; want cut, needing 15,591", f, err)
	}
	req.Tools = manyTools(1)
	resp, err := b.Chat(context.Background(), req)
	if err != nil || resp.Message.Content != "14" {
		t.Fatalf("one tool: %+v, %v; want the scripted reply", resp, err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d chat requests reached the server; want 2, the cut one and the one that fit (measures are one-token probes)", n)
	}
}

// TestMeasurePromptOtherServers: a server that is not Ollama is not
// measured (it refuses a prompt too long itself).
func TestMeasurePromptOtherServers(t *testing.T) {
	t.Parallel()
	srv := fakeopenai.Start(t, fakeopenai.Options{})
	b, _ := New(Config{BaseURL: srv.BaseURL})
	f, err := b.MeasurePrompt(context.Background(), &backend.Request{Model: fakeopenai.DefaultModel, Messages: []backend.Message{{Role: "user", Content: "hi"}}})
	if err != nil || f.Limit != 0 || srv.Probes() != 0 {
		t.Errorf("MeasurePrompt = %+v, %v with %d probes; want no limit and nothing sent", f, err, srv.Probes())
	}
}

// TestPreflightWarnsOllamaV1: preflight against Ollama's /v1 warns that
// a conversation outgrowing the context is cut there without a word
// (/v1 takes no truncate); against another server it does not.
func TestPreflightWarnsOllamaV1(t *testing.T) {
	t.Parallel()
	other := fakeopenai.Start(t, fakeopenai.Options{Models: []fakeopenai.Model{{ID: "qwen3:0.6b"}}, Script: fakeopenai.Queue(fakeopenai.Reply{Content: "14"})})
	for _, tt := range []struct {
		base string
		want bool
	}{{ollamaV1(t).BaseURL, true}, {other.BaseURL, false}} {
		b, err := New(Config{BaseURL: tt.base, NoStream: true})
		if err != nil {
			t.Fatal(err)
		}
		info, err := b.Preflight(context.Background(), []string{"qwen3:0.6b"})
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(info.Warnings, OllamaV1Drops); got != tt.want {
			t.Errorf("%s: warnings %q; want the /v1 warning: %v", tt.base, info.Warnings, tt.want)
		}
	}
}
