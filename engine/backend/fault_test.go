package backend

import (
	"slices"
	"strings"
	"testing"
)

func TestJSONPrefixPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in       string
		path     []string
		inString bool
		ok       bool
	}{
		{`{"message":{"content":"abc`, []string{"message", "content"}, true, true},
		{`{"message":{"content":"a\"b`, []string{"message", "content"}, true, true},
		{`{"message":{"content":"abc","tool_calls":[{"function":{"arguments":{"x":"`, []string{"message", "tool_calls", "[]", "function", "arguments", "x"}, true, true},
		{`{"message":{"content":   `, []string{"message", "content"}, false, true},
		{`{"message":{"cont`, []string{"message"}, false, true},
		{`{"model":"m","created_at":"2024`, []string{"created_at"}, true, true},
		{`{"done":true}` + strings.Repeat(" ", 100), nil, false, false},
		{`{"done":true} x`, nil, false, false},
		{`   `, []string{}, false, true},
		{`<html>`, nil, false, false},
		{`{"a":[1,2,{"b":`, []string{"a", "[]", "b"}, false, true},
	} {
		path, inString, ok := JSONPrefixPath([]byte(tc.in))
		if ok != tc.ok || inString != tc.inString || ok && !slices.Equal(path, tc.path) {
			t.Errorf("JSONPrefixPath(%q) = %q, %v, %v; want %q, %v, %v", tc.in, path, inString, ok, tc.path, tc.inString, tc.ok)
		}
	}
}

func TestCutInside(t *testing.T) {
	t.Parallel()
	parts := []ModelPart{{Path: []string{"message", "content"}, String: true}, {Path: []string{"message", "tool_calls"}}}
	for in, want := range map[string]bool{
		`{"message":{"content":"abc`:                       true,
		`{"message":{"content":` + strings.Repeat(" ", 9):  false,
		`{"message":{"tool_calls":[{"function":{"name":"e`: true,
		`{"message":{"role":"assistant`:                    false,
		`{"pad":"xxxx`:                                     false,
		strings.Repeat(" ", 50):                            false,
		"\x00\x01garbage":                                  false,
	} {
		if got := CutInside([]byte(in), parts...); got != want {
			t.Errorf("CutInside(%q) = %v, want %v", in, got, want)
		}
	}
}
