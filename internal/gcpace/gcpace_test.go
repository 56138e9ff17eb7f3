package gcpace

import (
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
