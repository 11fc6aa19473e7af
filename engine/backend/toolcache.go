package backend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
)

// ToolCache memoises the wire JSON of tools by what it depends on (see
// ToolKey): every turn of every run offers tools, but few distinct ones.
// The zero value is ready to use; it is safe for concurrent use.
type ToolCache struct {
	mu sync.RWMutex
	m  map[string]json.RawMessage
}

// Encode returns the wire JSON of ts, calling encode for each tool it has
// not seen; nil for no tools. An encode error is returned as it is.
func (c *ToolCache) Encode(ts []Tool, encode func(Tool) (json.RawMessage, error)) ([]json.RawMessage, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	out := make([]json.RawMessage, len(ts))
	var key []byte
	for i, t := range ts {
		key = ToolKey(key[:0], t)
		c.mu.RLock()
		enc, ok := c.m[string(key)]
		c.mu.RUnlock()
		if !ok {
			var err error
			if enc, err = encode(t); err != nil {
				return nil, err
			}
			c.mu.Lock()
			if c.m == nil {
				c.m = map[string]json.RawMessage{}
			}
			c.m[string(key)] = enc
			c.mu.Unlock()
		}
		out[i] = enc
	}
	return out, nil
}

// ToolKey appends to dst what a tool's wire JSON depends on: its name,
// description and input schema, length-prefixed so that no two tools
// share a key.
func ToolKey(dst []byte, t Tool) []byte {
	dst = appendField(dst, t.Name)
	dst = appendField(dst, t.Description)
	return appendField(dst, t.InputSchema)
}

func appendField[T string | json.RawMessage](dst []byte, s T) []byte {
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, ':')
	return append(dst, s...)
}

// ToolSchema returns t's input schema as a request sends it: the MCP
// schema unchanged (it is JSON Schema), an empty or null one as an object
// with no properties. A schema that is not valid JSON is a KindBadRequest
// error.
func ToolSchema(t Tool) (json.RawMessage, error) {
	schema := bytes.TrimSpace(t.InputSchema)
	if len(schema) == 0 || string(schema) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	if !json.Valid(schema) {
		return nil, &Error{Kind: KindBadRequest, Msg: fmt.Sprintf("tool %q: input schema is not valid JSON", t.Name)}
	}
	return schema, nil
}
