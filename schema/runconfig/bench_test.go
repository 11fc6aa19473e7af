package runconfig

import (
	"testing"

	"github.com/toolward/toolward/bench/casegen"
)

// BenchmarkValidate1000 validates 1,000 realistic case files (two or
// three calls, about seven matchers, a when override and a golden
// trajectory each) and one config. The target is under 1 s per op on a
// 2-core machine; bench/validate.sh times the whole command.
func BenchmarkValidate1000(b *testing.B) {
	dir := b.TempDir()
	if err := casegen.Write(dir, 1000); err != nil {
		b.Fatal(err)
	}
	b.Chdir(dir)
	if errs := validate([]string{"cases", "configs"}); len(errs) > 0 {
		b.Fatal(errs)
	}
	b.ResetTimer()
	for b.Loop() {
		if errs := validate([]string{"cases", "configs"}); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
