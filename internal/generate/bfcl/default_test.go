package bfcl

import (
	"fmt"
	"testing"
)

// TestFitDefault: a BFCL default becomes a value of its property's type
// ("False" for a boolean is false) or is dropped, since the bundled
// server refuses a schema whose default fails it.
func TestFitDefault(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		typ  string
		in   any
		want any
		ok   bool
	}{
		{"boolean", "False", false, true},
		{"boolean", "true", true, true},
		{"boolean", "maybe", nil, false},
		{"integer", 3.0, 3.0, true},
		{"integer", 2.5, nil, false},
		{"number", 2.5, 2.5, true},
		{"string", 1.0, nil, false},
		{"array", []any{}, []any{}, true},
	} {
		got, ok := fitDefault(tt.typ, tt.in)
		if ok != tt.ok || (ok && fmtAny(got) != fmtAny(tt.want)) {
			t.Errorf("fitDefault(%s, %v) = %v, %v; want %v, %v", tt.typ, tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func fmtAny(v any) string { return fmt.Sprintf("%#v", v) }
