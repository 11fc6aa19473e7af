package anthropic

import "encoding/json"

// The wire types of the Messages API (POST /v1/messages, GET /v1/models):
// only the fields toolward sends or reads. Unknown fields and event types
// in replies are ignored.

type messagesRequest struct {
	Model     string            `json:"model"`
	MaxTokens int               `json:"max_tokens"`
	System    string            `json:"system,omitempty"`
	Messages  []wireMessage     `json:"messages"`
	Tools     []json.RawMessage `json:"tools,omitempty"`
	// Sent only when configured, and only with tools.
	ToolChoice *toolChoice `json:"tool_choice,omitempty"`
	// Always sent, zero included. The API takes no seed.
	Temperature float64   `json:"temperature"`
	TopP        *float64  `json:"top_p,omitempty"` // from the cell's options set
	Thinking    *thinking `json:"thinking,omitempty"`
	Stream      bool      `json:"stream"`
}

type toolChoice struct {
	Type                   string `json:"type"` // auto | any | none | tool
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

type thinking struct {
	Type         string `json:"type"` // enabled
	BudgetTokens int    `json:"budget_tokens"`
}

// wireMessage is one message: Content is a JSON string (plain text) or
// an array of content blocks.
type wireMessage struct {
	Role    string          `json:"role"` // user | assistant
	Content json.RawMessage `json:"content"`
}

// block is one content block, as sent and as received.
type block struct {
	Type string `json:"type"` // text | tool_use | tool_result | thinking | redacted_thinking
	Text string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	// thinking (Thinking, Signature) and redacted_thinking (Data)
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// event is one streamed event; Type says which fields are set.
type event struct {
	Type string `json:"type"`
	// message_start
	Message *struct {
		Model string `json:"model"`
		Usage usage  `json:"usage"`
	} `json:"message"`
	// content_block_start, content_block_delta, content_block_stop
	Index        *int   `json:"index"`
	ContentBlock *block `json:"content_block"`
	// content_block_delta (type text_delta, input_json_delta,
	// thinking_delta, signature_delta) and message_delta (stop_reason)
	Delta *struct {
		Type        string  `json:"type"`
		Text        string  `json:"text"`
		PartialJSON string  `json:"partial_json"`
		Thinking    string  `json:"thinking"`
		Signature   string  `json:"signature"`
		StopReason  *string `json:"stop_reason"`
	} `json:"delta"`
	// message_delta
	Usage *usage `json:"usage"`
	// error
	Error *apiError `json:"error"`
}

// usage is the token counts: message_start gives the input, message_delta
// the output so far (cumulative, not increments).
type usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// apiError is an error as the API reports it, in an error response's body
// ({"type": "error", "error": {...}}) or in an error event.
type apiError struct {
	Type    string `json:"type"` // e.g. overloaded_error, invalid_request_error
	Message string `json:"message"`
}

func (e *apiError) Error() string {
	if e.Type != "" {
		return e.Message + " (" + e.Type + ")"
	}
	return e.Message
}

type errorBody struct {
	Error *apiError `json:"error"`
}

// modelPage is one page of GET /v1/models.
type modelPage struct {
	Data []struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
		CreatedAt   string `json:"created_at"` // RFC 3339
	} `json:"data"`
	HasMore bool   `json:"has_more"`
	LastID  string `json:"last_id"`
}
