package backend

import "testing"

func TestParseServerURL(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{"", "http://127.0.0.1:11434"},
		{"gpu-a:11434", "http://gpu-a:11434"},
		{"https://api.example.com/v1/", "https://api.example.com/v1"},
	} {
		_, got, err := ParseServerURL(tt.raw, "127.0.0.1:11434", "x: bad host")
		if err != nil || got != tt.want {
			t.Errorf("ParseServerURL(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
		}
	}
	for _, raw := range []string{"ftp://h", "http://", "http://[::1"} {
		if _, _, err := ParseServerURL(raw, "127.0.0.1:11434", "x: bad host"); err == nil {
			t.Errorf("ParseServerURL(%q): no error", raw)
		}
	}
}
