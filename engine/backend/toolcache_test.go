package backend

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestToolCache: each distinct tool is encoded once; tools whose fields
// run together the same way do not share a key; an encode error passes
// through and is not kept.
func TestToolCache(t *testing.T) {
	t.Parallel()
	if a, c := ToolKey(nil, Tool{Name: "ab", Description: "c"}), ToolKey(nil, Tool{Name: "a", Description: "bc"}); string(a) == string(c) {
		t.Fatalf("two tools share the key %q", a)
	}
	var c ToolCache
	calls := 0
	enc := func(t Tool) (json.RawMessage, error) {
		calls++
		if t.Name == "bad" {
			return nil, errors.New("bad tool")
		}
		return json.RawMessage(`"` + t.Name + `"`), nil
	}
	if out, err := c.Encode(nil, enc); out != nil || err != nil {
		t.Errorf("no tools: %v %v", out, err)
	}
	ts := []Tool{{Name: "a"}, {Name: "b"}, {Name: "a"}}
	for range 2 {
		out, err := c.Encode(ts, enc)
		if err != nil || len(out) != 3 || string(out[0]) != `"a"` || string(out[1]) != `"b"` || string(out[2]) != `"a"` {
			t.Fatalf("got %s, %v", out, err)
		}
	}
	if calls != 2 {
		t.Errorf("%d encodings of 2 distinct tools", calls)
	}
	for range 2 {
		if _, err := c.Encode([]Tool{{Name: "bad"}}, enc); err == nil {
			t.Error("encode error lost")
		}
	}
	if calls != 4 {
		t.Errorf("a failed encoding was kept (%d calls)", calls)
	}
}

// TestToolSchema: an empty or null schema is an object with no
// properties; one that is not JSON is a bad request; others pass as
// they are.
func TestToolSchema(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", " null ", "\n"} {
		if s, err := ToolSchema(Tool{InputSchema: json.RawMessage(in)}); err != nil || string(s) != `{"type":"object","properties":{}}` {
			t.Errorf("%q: %s %v", in, s, err)
		}
	}
	if s, err := ToolSchema(Tool{InputSchema: json.RawMessage(` {"type":"object"} `)}); err != nil || string(s) != `{"type":"object"}` {
		t.Errorf("schema: %s %v", s, err)
	}
	var be *Error
	if _, err := ToolSchema(Tool{Name: "t", InputSchema: json.RawMessage("{")}); !errors.As(err, &be) || be.Kind != KindBadRequest {
		t.Errorf("not JSON: %v", err)
	}
}
