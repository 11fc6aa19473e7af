package openai

import (
	"bytes"
	"encoding/json"
)

// The wire types of /v1/chat/completions: only the fields toolward sends
// or reads. Unknown fields in replies are ignored.

type chatRequest struct {
	Model    string            `json:"model"`
	Messages []wireMessage     `json:"messages"`
	Tools    []json.RawMessage `json:"tools,omitempty"`
	// Sent only when configured, and only with tools (OpenAI rejects
	// tool_choice without tools).
	ToolChoice        string `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool  `json:"parallel_tool_calls,omitempty"`
	MaxTokens         int    `json:"max_tokens,omitempty"`
	// From the cell's options set, sent only when set.
	ReasoningEffort string   `json:"reasoning_effort,omitempty"`
	TopP            *float64 `json:"top_p,omitempty"`
	// Always sent, zero included: a seed that does not reach the model is
	// no seed.
	Seed          int            `json:"seed"`
	Temperature   float64        `json:"temperature"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// chunk is one streamed event (object chat.completion.chunk) or, with
// Message instead of Delta, a whole non-streamed reply.
type chunk struct {
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage"`
	// Error is set when a server reports a failure inside the stream.
	Error *apiError `json:"error"`
}

type choice struct {
	Index        int     `json:"index"`
	Delta        *delta  `json:"delta"`
	Message      *delta  `json:"message"`
	FinishReason *string `json:"finish_reason"`
}

// delta is a streamed piece of the assistant message, or the whole of it.
type delta struct {
	Content string `json:"content"`
	// Reasoning text: reasoning_content (llama-server, vLLM, DeepSeek) or
	// reasoning (Ollama, newer vLLM).
	ReasoningContent string      `json:"reasoning_content"`
	Reasoning        string      `json:"reasoning"`
	ToolCalls        []deltaCall `json:"tool_calls"`
}

// deltaCall is a tool call or a fragment of one. Only the first fragment
// of a call carries ID and name; all carry Index (when the server sends
// it at all).
type deltaCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON string (a fragment of the arguments' JSON
		// text); a few servers send the arguments object itself.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// apiError is the body of a failed request, OpenAI's shape:
// {"error": {"message", "type", "code"}}. Servers vary: "error" may be a
// plain string, and FastAPI-based ones answer {"detail": …}.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func (e *apiError) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &e.Message)
	}
	type plain apiError
	return json.Unmarshal(b, (*plain)(e))
}

// code returns the error code as text ("" when absent or null).
func (e *apiError) code() string {
	c := bytes.TrimSpace(e.Code)
	if len(c) == 0 || string(c) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	return string(c)
}

type errorBody struct {
	Error   *apiError       `json:"error"`
	Message string          `json:"message"`
	Detail  json.RawMessage `json:"detail"`
}

type modelList struct {
	Data []struct {
		ID      string `json:"id"`
		OwnedBy string `json:"owned_by"`
		Created int64  `json:"created"`
	} `json:"data"`
}
