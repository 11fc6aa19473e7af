package casegen

import (
	"testing"

	"github.com/toolward/toolward/schema/runconfig"
)

// The generated suite must be valid, or the validation benchmarks fail
// (and bench/validate.sh would time error reporting instead). Ten files
// cover every department and both the two- and three-call variants.
func TestWriteIsValid(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, 10); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	sum, errs := runconfig.CheckWith([]string{"cases", "configs"}, runconfig.Options{})
	for _, e := range errs {
		t.Error(e)
	}
	if want := (runconfig.Summary{CaseFiles: 10, Cases: 10, Configs: 1}); sum != want {
		t.Errorf("checked %+v, want %+v", sum, want)
	}
}
