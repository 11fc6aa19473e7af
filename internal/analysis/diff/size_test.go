package diff

import (
	"testing"
	"unsafe"
)

// Diff holds one run per record of both sides: at 10^6 runs a side, each
// byte of a run is 2 MB. A field added to run must earn its place here.
func TestRunSize(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(run{}); n != 48 {
		t.Fatalf("a run is %d bytes, want 48", n)
	}
}
