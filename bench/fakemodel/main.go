// Command fakemodel serves a scripted model over loopback HTTP for the
// benchmarks in bench/: fixtures/fakes/fakeollama (Ollama's /api/chat),
// fixtures/fakes/fakeopenai (an OpenAI-compatible /v1) or
// fixtures/fakes/fakeanthropic (Anthropic's Messages API), in its own
// process so that its CPU and memory are not counted as toolward's.
//
//	go run ./bench/fakemodel -backend ollama
//
// It prints the URL a config's backend should name (the Ollama host, or
// the OpenAI or Anthropic base_url) on one line of stdout, then serves until stdin is
// closed or it is interrupted.
//
// Every conversation gets the same two replies: the first turn calls
// calculate with {"expression": "6 * 7"}, the turn after a tool result
// answers "The result is <result>." — a 2-request run with one tool call.
// -tool and -args change the call; -delay makes every Ollama reply take
// that long, as a model's would. Requests to the model bench-judge are a
// judge's ({$judge: RUBRIC}), answered by fixtures/fakes/fakejudge.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakes/fakeanthropic"
	"github.com/toolward/toolward/fixtures/fakes/fakejudge"
	"github.com/toolward/toolward/fixtures/fakes/fakeollama"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
)

// Models are the models both fakes serve; a bench config names them.
var Models = []string{"bench-model", "bench-model-2", JudgeModel}

// JudgeModel is the model a judged bench suite names as its judge.
const JudgeModel = "bench-judge"

// The call the first turn makes, and how long each reply takes (flags).
var (
	tool  = "calculate"
	args  = `{"expression": "6 * 7"}`
	delay time.Duration
)

func main() {
	kind := flag.String("backend", "ollama", "which server to fake: ollama | openai | anthropic")
	flag.StringVar(&tool, "tool", tool, "the tool the first turn calls")
	flag.StringVar(&args, "args", args, "its arguments, a JSON object")
	flag.DurationVar(&delay, "delay", 0, "how long each reply takes (a model's latency; ollama only)")
	flag.Parse()
	url, stop, err := start(*kind)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(2)
	}
	defer stop()
	fmt.Println(url)
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case <-done:
	case <-sig:
	}
}

// start starts the fake for kind and returns the URL to configure and a
// function that stops it.
func start(kind string) (string, func(), error) {
	switch kind {
	case "ollama":
		s := fakeollama.New(fakeollama.Options{Script: ollamaScript, Models: models(func(m string) fakeollama.Model { return fakeollama.Model{Name: m} })})
		return s.URL, s.Close, nil
	case "openai":
		s := fakeopenai.New(fakeopenai.Options{Script: openaiScript, Models: models(func(m string) fakeopenai.Model { return fakeopenai.Model{ID: m} })})
		return s.BaseURL, s.Close, nil
	case "anthropic":
		s := fakeanthropic.New(fakeanthropic.Options{Script: anthropicScript, Models: models(func(m string) fakeanthropic.Model { return fakeanthropic.Model{ID: m} })})
		return s.URL, s.Close, nil
	}
	return "", nil, fmt.Errorf("unknown backend %q: want ollama, openai or anthropic", kind)
}

// models is Models as a fake's model list.
func models[T any](model func(name string) T) []T {
	out := make([]T, len(Models))
	for i, m := range Models {
		out[i] = model(m)
	}
	return out
}

func ollamaScript(req *api.ChatRequest) fakeollama.Reply {
	if req.Model == JudgeModel {
		return fakejudge.Ollama(req)
	}
	if res, ok := fakeollama.LastToolResult(req); ok {
		return fakeollama.Reply{Content: "The result is " + res + ".", Delay: delay}
	}
	return fakeollama.Reply{ToolCalls: []fakeollama.ToolCall{{Name: tool, Args: args}}, Delay: delay}
}

func openaiScript(req *fakeopenai.Request) fakeopenai.Reply {
	if req.Model == JudgeModel {
		return fakejudge.OpenAI(req)
	}
	if res, ok := fakeopenai.LastToolResult(req); ok {
		return fakeopenai.Reply{Content: "The result is " + res + "."}
	}
	return fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{Name: tool, Args: args}}}
}

func anthropicScript(req *fakeanthropic.Request) fakeanthropic.Reply {
	if req.Model == JudgeModel && len(req.Messages) > 0 {
		var prompt string
		json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &prompt) // the judge's one user message, a string
		return fakeanthropic.Reply{Content: fakejudge.Reply(prompt)}
	}
	if res := fakeanthropic.ToolResults(req); len(res) > 0 {
		return fakeanthropic.Reply{Content: "The result is " + res[len(res)-1] + "."}
	}
	return fakeanthropic.Reply{ToolCalls: []fakeanthropic.ToolCall{{Name: tool, Args: args}}}
}
