package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/toolward/toolward/fixtures/fakes/fakeanthropic"
	"github.com/toolward/toolward/fixtures/fakes/fakeopenai"
	"github.com/toolward/toolward/matchers/score"
)

// TestScripts: a conversation gets a calculate call, then an answer
// quoting the tool result, from both fakes.
func TestScripts(t *testing.T) {
	first := &api.ChatRequest{Messages: []api.Message{{Role: "user", Content: "What is 6 * 7?"}}}
	if r := ollamaScript(first); len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "calculate" || r.Content != "" {
		t.Errorf("ollama first reply %+v", r)
	}
	second := &api.ChatRequest{Messages: append(first.Messages, api.Message{Role: "assistant"}, api.Message{Role: "tool", Content: "42"})}
	if r := ollamaScript(second); r.Content != "The result is 42." || len(r.ToolCalls) != 0 {
		t.Errorf("ollama second reply %+v", r)
	}
	ofirst := &fakeopenai.Request{Messages: []fakeopenai.Message{{Role: "user", Content: "What is 6 * 7?"}}}
	if r := openaiScript(ofirst); len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "calculate" {
		t.Errorf("openai first reply %+v", r)
	}
	osecond := &fakeopenai.Request{Messages: append(ofirst.Messages, fakeopenai.Message{Role: "assistant"}, fakeopenai.Message{Role: "tool", Content: "42"})}
	if r := openaiScript(osecond); r.Content != "The result is 42." {
		t.Errorf("openai second reply %+v", r)
	}
	afirst := &fakeanthropic.Request{Messages: []fakeanthropic.Message{{Role: "user", Content: []byte(`"What is 6 * 7?"`)}}}
	if r := anthropicScript(afirst); len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "calculate" {
		t.Errorf("anthropic first reply %+v", r)
	}
	asecond := &fakeanthropic.Request{Messages: append(afirst.Messages, fakeanthropic.Message{Role: "assistant", Content: []byte(`[]`)},
		fakeanthropic.Message{Role: "user", Content: []byte(`[{"type":"tool_result","tool_use_id":"t","content":"42"}]`)})}
	if r := anthropicScript(asecond); r.Content != "The result is 42." {
		t.Errorf("anthropic second reply %+v", r)
	}
}

// TestJudgeScripts: requests to the judge model get fakejudge's verdict
// from every fake.
func TestJudgeScripts(t *testing.T) {
	prompt := score.JudgePrompt("sys", `The answer gives the result, "42".`, []string{"What is 6 * 7?"}, nil, false, "The result is 42.")[1].Content
	want := `{"reason":"the answer meets the rubric","verdict":"pass"}`
	if r := ollamaScript(&api.ChatRequest{Model: JudgeModel, Messages: []api.Message{{Role: "user", Content: prompt}}}); r.Content != want {
		t.Errorf("ollama judge reply %+v", r)
	}
	if r := openaiScript(&fakeopenai.Request{Model: JudgeModel, Messages: []fakeopenai.Message{{Role: "user", Content: prompt}}}); r.Content != want {
		t.Errorf("openai judge reply %+v", r)
	}
	raw, _ := json.Marshal(prompt)
	if r := anthropicScript(&fakeanthropic.Request{Model: JudgeModel, Messages: []fakeanthropic.Message{{Role: "user", Content: raw}}}); r.Content != want {
		t.Errorf("anthropic judge reply %+v", r)
	}
}

// TestStart: each backend's URL answers its model list; an unknown
// backend is an error naming the choices.
func TestStart(t *testing.T) {
	for kind, path := range map[string]string{"ollama": "/api/tags", "openai": "/models"} {
		url, stop, err := start(kind)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(url + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("%s: GET %s: %v %v", kind, path, resp, err)
		} else {
			resp.Body.Close()
		}
		stop()
	}
	url, stop, err := start("anthropic")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	req, _ := http.NewRequest(http.MethodGet, url+"/v1/models", nil)
	req.Header.Set("Anthropic-Version", fakeanthropic.APIVersion)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("anthropic: GET /v1/models: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if _, _, err := start("vllm"); err == nil || !strings.Contains(err.Error(), "ollama, openai or anthropic") {
		t.Errorf("unknown backend: %v", err)
	}
}
