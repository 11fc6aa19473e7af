package openai

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolward/toolward/engine/backend"
)

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWireTranscripts reads the bodies a real Ollama's /v1 sent.
func TestWireTranscripts(t *testing.T) {
	a := &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 1 << 20}}
	if err := readStream(bytes.NewReader(readFile(t, "v1-chat-stream-turn1.body")), a); err != nil {
		t.Fatal(err)
	}
	m := a.message()
	if len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "call_9ftjdifx" || m.ToolCalls[0].Name != "calculate" ||
		string(m.ToolCalls[0].Arguments) != `{"expression":"2 + 3 * 4"}` || a.doneReason() != "tool_calls" || a.usage != nil {
		t.Errorf("turn 1: %+v, done %q, usage %v", m, a.doneReason(), a.usage)
	}

	a = &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 1 << 20}}
	if err := readStream(bytes.NewReader(readFile(t, "v1-chat-stream-turn2.body")), a); err != nil {
		t.Fatal(err)
	}
	if m := a.message(); m.Content != "The result is 14." || len(m.ToolCalls) != 0 || a.doneReason() != "stop" || a.usage == nil || a.usage.PromptTokens != 335 || a.usage.CompletionTokens != 2 {
		t.Errorf("turn 2: %+v, done %q, usage %+v", m, a.doneReason(), a.usage)
	}

	a = &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 1 << 20}}
	if err := readWhole(bytes.NewReader(readFile(t, "v1-chat-nostream-turn1.body")), a); err != nil {
		t.Fatal(err)
	}
	if m := a.message(); len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "call_vc34lblr" || string(m.ToolCalls[0].Arguments) != `{"expression":"2 + 3 * 4"}` || a.usage.PromptTokens != 311 {
		t.Errorf("non-streamed: %+v, usage %+v", m, a.usage)
	}

	if got := serverMessage(readFile(t, "v1-chat-missing-model.body")); got != "model 'nope:1b' not found" {
		t.Errorf("error message %q", got)
	}
}

// TestFragmentsJoinByIndex: two calls whose fragments interleave, as a
// server streaming parallel calls may send them, and a server that omits
// index.
func TestFragmentsJoinByIndex(t *testing.T) {
	stream := `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"calc","arguments":""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"search","arguments":"{\"q\""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"expr"}}]}}]}

: keep-alive

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":\"x\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ession\":\"1+1\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5}}

data: [DONE]

`
	a := &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 1 << 20}}
	if err := readStream(strings.NewReader(stream), a); err != nil {
		t.Fatal(err)
	}
	m := a.message()
	if len(m.ToolCalls) != 2 || m.ToolCalls[0].ID != "a" || string(m.ToolCalls[0].Arguments) != `{"expression":"1+1"}` ||
		m.ToolCalls[1].Name != "search" || string(m.ToolCalls[1].Arguments) != `{"q":"x"}` {
		t.Fatalf("calls %+v", m.ToolCalls)
	}
	if a.usage.CompletionTokens != 5 || a.doneReason() != "tool_calls" {
		t.Errorf("usage %+v, done %q", a.usage, a.doneReason())
	}

	// Ollama's model parsers (qwen3, …) leave every call at index 0:
	// whole calls with their own ids are separate calls.
	sameIndex := `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c1","index":0,"type":"function","function":{"name":"calc","arguments":"{\"x\":1}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c2","index":0,"type":"function","function":{"name":"calc","arguments":"{\"x\":2}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

`
	a = &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 1 << 20}}
	if err := readStream(strings.NewReader(sameIndex), a); err != nil {
		t.Fatal(err)
	}
	m = a.message()
	if len(m.ToolCalls) != 2 || m.ToolCalls[0].ID != "c1" || string(m.ToolCalls[0].Arguments) != `{"x":1}` || m.ToolCalls[1].ID != "c2" || string(m.ToolCalls[1].Arguments) != `{"x":2}` {
		t.Fatalf("calls sharing index 0: %+v", m.ToolCalls)
	}

	repeated := `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"r","function":{"name":"calc","arguments":"{\"x\""}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"r","function":{"name":"calc","arguments":":3}"}}]},"finish_reason":"tool_calls"}]}

`
	a = &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 1 << 20}}
	if err := readStream(strings.NewReader(repeated), a); err != nil {
		t.Fatal(err)
	}
	if m = a.message(); len(m.ToolCalls) != 1 || m.ToolCalls[0].Name != "calc" || string(m.ToolCalls[0].Arguments) != `{"x":3}` {
		t.Fatalf("id and name repeated in every fragment: %+v", m.ToolCalls)
	}

	noIndex := "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"x\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\":1}\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"y\",\"function\":{\"name\":\"g\",\"arguments\":{\"b\":2}}}]},\"finish_reason\":\"tool_calls\"}]}\n\n"
	a = &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 1 << 20}}
	if err := readStream(strings.NewReader(noIndex), a); err != nil {
		t.Fatal(err)
	}
	m = a.message()
	if len(m.ToolCalls) != 2 || string(m.ToolCalls[0].Arguments) != `{"a":1}` || string(m.ToolCalls[1].Arguments) != `{"b":2}` {
		t.Fatalf("calls without index %+v", m.ToolCalls)
	}
}

// TestStreamEnds: a stream cut before its finish is broken; one that
// gave its finish reason but no [DONE] is complete; an error event is the
// server's error; a line that is not JSON is garbled.
func TestStreamEnds(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		want         func(error) bool
	}{
		{"cut", `data: {"choices":[{"delta":{"content":"Hel"}}]}` + "\n\n", func(err error) bool { return errors.Is(err, errBrokenStream) }},
		{"no DONE", `data: {"choices":[{"delta":{"content":"Hi"},"finish_reason":"stop"}]}`, func(err error) bool { return err == nil }},
		{"error event", `data: {"choices":[{"delta":{"content":"Hi"}}]}` + "\n\n" + `data: {"error":{"message":"CUDA out of memory","type":"server_error"}}` + "\n\n", func(err error) bool {
			var ae *apiError
			return errors.As(err, &ae) && ae.Message == "CUDA out of memory"
		}},
		{"garbled", "data: {\"choices\n\n", func(err error) bool { var g *garbled; return errors.As(err, &g) }},
		{"empty data", "data:\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n", func(err error) bool { return err == nil }},
		{"CRLF", "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\r\n\r\ndata: [DONE]\r\n\r\n", func(err error) bool { return err == nil }},
	} {
		err := readStream(strings.NewReader(tc.stream), &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 1 << 20}})
		if !tc.want(err) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestReplyLimit: content past the limit is cut and flagged; a tool
// call's arguments cut short stay as sent (malformed for the agent); a
// single event longer than the limit stops reading.
func TestReplyLimit(t *testing.T) {
	var sb strings.Builder
	for range 100 {
		sb.WriteString(`data: {"choices":[{"delta":{"content":"0123456789"}}]}` + "\n\n")
	}
	sb.WriteString(`data: {"choices":[{"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	a := &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 95}}
	err := readStream(strings.NewReader(sb.String()), a)
	if !errors.Is(err, backend.ErrCut) || a.content.Len() != 95 || a.doneReason() != DoneReplyLimit {
		t.Fatalf("err %v, kept %d bytes, done %q", err, a.content.Len(), a.doneReason())
	}

	args := `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\": \"0123456789"}}]}}]}` + "\n\n"
	a = &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 10}}
	readStream(strings.NewReader(args), a)
	if m := a.message(); len(m.ToolCalls) != 1 || string(m.ToolCalls[0].Arguments) != `{"x": "01` || !a.Cut {
		t.Fatalf("cut call %+v", m.ToolCalls)
	}

	huge := `data: {"choices":[{"delta":{"content":"` + strings.Repeat("x", 200<<10) + "\n\n"
	a = &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 1024}}
	if err := readStream(strings.NewReader(huge), a); !errors.Is(err, backend.ErrCut) {
		t.Fatalf("a 200 KiB content event with a 1 KiB limit: %v", err)
	}
	var sf *backend.StreamFault
	garbage := "data: " + strings.Repeat("x", 200<<10) + "\n\n"
	if err := readStream(strings.NewReader(garbage), &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 1024}}); !errors.As(err, &sf) {
		t.Fatalf("a 200 KiB event of bytes that are not JSON with a 1 KiB limit: %v", err)
	}
}

// TestLongLine: an event longer than the read buffer is read whole.
func TestLongLine(t *testing.T) {
	text := strings.Repeat("abcdefgh", 10<<10) // 80 KiB
	stream := `data: {"choices":[{"delta":{"content":"` + text + `"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	a := &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 1 << 20}}
	if err := readStream(strings.NewReader(stream), a); err != nil {
		t.Fatal(err)
	}
	if a.content.String() != text {
		t.Fatalf("kept %d bytes of %d", a.content.Len(), len(text))
	}
}

// TestReadAllocations: reading a small reply allocates far less than a
// read buffer: buffers are pooled, not made per request.
func TestReadAllocations(t *testing.T) {
	body := readFile(t, "v1-chat-stream-turn2.body")
	read := func() {
		if err := readStream(bytes.NewReader(body), &accumulator{ReplyBudget: backend.ReplyBudget{Limit: DefaultMaxReplyBytes}}); err != nil {
			t.Fatal(err)
		}
	}
	read()
	const n = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		read()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > readBufSize/2 {
		t.Fatalf("%d bytes allocated per reply of %d bytes; the read buffer is %d", per, len(body), readBufSize)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(20 * time.Second).Format(http.TimeFormat)}}, 20 * time.Second},
		{http.Header{"Retry-After": {"3600"}}, MaxRetryAfter},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond},
		{http.Header{}, 0},
	} {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.h, got, tc.want)
		}
	}
}

// TestMessagesPairToolCallIDs: results quote their call's id; calls
// without ids (a replayed history) get made-up ids that their results
// quote too.
func TestMessagesPairToolCallIDs(t *testing.T) {
	in := []backend.Message{
		{Role: "user", Content: "q"},
		{Role: "assistant", ToolCalls: []backend.ToolCall{{ID: "c1", Name: "a"}, {ID: "c2", Name: "b", Arguments: []byte(`{"x":1}`)}}},
		{Role: "tool", Content: "r1", ToolCallID: "c1"},
		{Role: "tool", Content: "r2", ToolCallID: "c2"},
		{Role: "assistant", ToolCalls: []backend.ToolCall{{Name: "a"}, {Name: "a"}}},
		{Role: "tool", Content: "r3"},
		{Role: "tool", Content: "r4"},
	}
	out := messages(in)
	if out[1].ToolCalls[0].Function.Arguments != "{}" || out[1].ToolCalls[1].Function.Arguments != `{"x":1}` {
		t.Errorf("arguments %+v", out[1].ToolCalls)
	}
	if out[2].ToolCallID != "c1" || out[3].ToolCallID != "c2" {
		t.Errorf("ids %q %q", out[2].ToolCallID, out[3].ToolCallID)
	}
	a, b := out[4].ToolCalls[0].ID, out[4].ToolCalls[1].ID
	if a == "" || a == b || out[5].ToolCallID != a || out[6].ToolCallID != b {
		t.Errorf("made-up ids %q %q, results %q %q", a, b, out[5].ToolCallID, out[6].ToolCallID)
	}
}

// TestManyInterleavedCalls: MaxReplyCalls calls with sparse indices, each
// in two fragments, the second fragments sent in reverse order, each
// joins its own call.
func TestManyInterleavedCalls(t *testing.T) {
	var sb strings.Builder
	for i := range MaxReplyCalls {
		fmt.Fprintf(&sb, `data: {"choices":[{"delta":{"tool_calls":[{"index":%d,"id":"id%d","function":{"name":"f","arguments":"{\"n\":"}}]}}]}`+"\n\n", i*7919, i)
	}
	for i := MaxReplyCalls - 1; i >= 0; i-- {
		fmt.Fprintf(&sb, `data: {"choices":[{"delta":{"tool_calls":[{"index":%d,"function":{"arguments":"%d}"}}]}}]}`+"\n\n", i*7919, i)
	}
	sb.WriteString(`data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n")
	a := &accumulator{ReplyBudget: backend.ReplyBudget{Limit: 1 << 20}}
	if err := readStream(strings.NewReader(sb.String()), a); err != nil {
		t.Fatal(err)
	}
	m := a.message()
	if len(m.ToolCalls) != MaxReplyCalls || a.doneReason() != "tool_calls" {
		t.Fatalf("%d calls, done %q", len(m.ToolCalls), a.doneReason())
	}
	for i, c := range m.ToolCalls {
		if want := fmt.Sprintf(`{"n":%d}`, i); c.ID != fmt.Sprintf("id%d", i) || string(c.Arguments) != want {
			t.Fatalf("call %d: %s %s, want %s", i, c.ID, c.Arguments, want)
		}
	}
}
