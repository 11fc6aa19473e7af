package schema

import (
	"testing"

	"github.com/toolward/toolward/bench/casegen"
)

// BenchmarkParseCase measures one case document: YAML decoding, the
// structural checks, matcher compilation and golden scoring.
func BenchmarkParseCase(b *testing.B) {
	src := []byte(casegen.Case(0))
	for b.Loop() {
		if _, errs := ParseCases("x.yaml", src); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
