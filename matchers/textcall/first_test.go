package textcall

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// firstBytes knows the bytes a match starts with, or says it cannot.
func TestFirstBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr, want string // want: the set's bytes; "-" for nil
	}{
		{`<tool_call>\s*`, "<"},
		{`(?P<payload>[\[{])\s*[\[{"]`, "[{"},
		{"```(?:json|JSON)?", "`"},
		{`a?b*c`, "abc"},
		{`(?:x|y+|z{2,3})w`, "xyz"},
		{`(?i)k`, "Kk\x80"}, // the Kelvin sign folds to k
		{`é`, "\x80"},
		{`^a`, "-"},
		{`\ba`, "-"},
		{`.a`, "-"},
		{`a*`, "-"}, // matches empty: may start anywhere
	} {
		got := firstBytes(tc.expr)
		if tc.want == "-" {
			if got != nil {
				t.Errorf("%s: a set, want none", tc.expr)
			}
			continue
		}
		if got == nil {
			t.Errorf("%s: no set, want %q", tc.expr, tc.want)
			continue
		}
		for _, c := range []byte(tc.want) {
			if !got[c] {
				t.Errorf("%s: %q not in the set", tc.expr, c)
			}
		}
		n := 0
		for _, in := range got {
			if in {
				n++
			}
		}
		if want := len(tc.want) + strings.Count(tc.want, "\x80")*127; n != want {
			t.Errorf("%s: %d bytes in the set, want %d", tc.expr, n, want)
		}
	}
}

// Skipping to the bytes a match starts with finds what searching every
// position finds: the default families on the package's example texts
// and on random texts made of their pieces.
func TestFirstBytesSameFinds(t *testing.T) {
	t.Parallel()
	fast := Default()
	slow := *fast
	slow.Families = append([]Family(nil), fast.Families...)
	skipped := 0
	for i := range slow.Families {
		if slow.Families[i].first != nil {
			skipped++
		}
		slow.Families[i].first = nil
	}
	if skipped < len(slow.Families)/2 {
		t.Fatalf("only %d of %d families skip ahead", skipped, len(slow.Families))
	}
	pieces := []string{
		`<tool_call>`, `</tool_call>`, `{"name": "calculate", "arguments": {"expression": "1+1"}}`, `[TOOL_CALLS]`, `[ARGS]`,
		`<|python_tag|>`, `b.call(q="x", n=-1.5e3)`, `<function=f>`, "```json\n", "\n```", `[f(a=1), g(b="\"")]`,
		`{"function": {"name": "f", "arguments": "{}"}, "type": "function"}`, "The answer is 42. ", "[", "{", "é", "\xff", " ", "\n",
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 3000 {
		var b strings.Builder
		for range n%12 + 1 {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		if got, want := fast.Find(text), slow.Find(text); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: skipping ahead found %q, every position %q", text, brief(got), brief(want))
		}
	}
}
