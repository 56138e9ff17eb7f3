package gcpace

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// gcPercent is the current GOGC (SetGCPercent returns the one it replaces).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestForFiles: the pace changes only from LargeFiles files on, and never
// when the user chose GOGC.
func TestForFiles(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "200")
	ForFiles(10 * LargeFiles)
	if p := gcPercent(); p != 100 {
		t.Fatalf("with GOGC set by the user, GOGC became %d", p)
	}
	t.Setenv("GOGC", "")
	ForFiles(LargeFiles - 1)
	if p := gcPercent(); p != 100 {
		t.Fatalf("below LargeFiles, GOGC became %d", p)
	}
	ForFiles(LargeFiles)
	if p := gcPercent(); p != largePercent {
		t.Fatalf("at LargeFiles, GOGC is %d, want %d", p, largePercent)
	}
}

// numGC is how many collections have completed.
func numGC() uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.NumGC
}

// TestBetween: a collection is forced from collectFrom files on, and
// below it none is (automatic collections are off meanwhile, so only a
// forced one counts).
func TestBetween(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := numGC()
	Between(collectFrom - 1)
	if n := numGC(); n != before {
		t.Fatalf("Between(%d) collected (%d collections)", collectFrom-1, n-before)
	}
	Between(collectFrom)
	if n := numGC(); n == before {
		t.Fatalf("Between(%d) did not collect", collectFrom)
	}
}
