package fsys

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// TestChangesAmongFindsEveryMoveInOrder: files edited, removed or
// replaced anywhere among thousands, handed over in parts of any size,
// come back as they are now and in the fingerprint's order, on one
// goroutine or several; too many moves, a refused move or parts that
// could not all be handed over make the answer unusable.
func TestChangesAmongFindsEveryMoveInOrder(t *testing.T) {
	sys := NewRealSystem(RealSystemOptions{})
	dir := t.TempDir()
	const n = 3000
	entries := make([]FingerprintEntry, n)
	for i := range entries {
		p := filepath.Join(dir, fmt.Sprintf("f%04d", i))
		must(t, os.WriteFile(p, []byte("x"), 0o644))
		entries[i] = statOf(sys, AbsPath(p), false, false)
	}
	moved := []int{0, 511, 512, 1777, 2999}
	for _, i := range moved {
		p := string(entries[i].Path)
		switch i % 3 {
		case 0: // edited: another size
			must(t, os.WriteFile(p, []byte("longer"), 0o644))
		case 1: // removed
			must(t, os.Remove(p))
		case 2: // replaced by another file: another inode
			must(t, os.WriteFile(p+".new", []byte("x"), 0o644))
			must(t, os.Rename(p+".new", p))
		}
	}
	want := make([]FingerprintEntry, 0, len(moved))
	for _, i := range moved {
		e := entries[i]
		want = append(want, statOf(sys, e.Path, e.Follow, e.Listed))
	}
	inParts := func(size int, stopAt int) func(fn func([]FingerprintEntry) bool) bool {
		return func(fn func([]FingerprintEntry) bool) bool {
			for lo := 0; lo < n; lo += size {
				if lo >= stopAt { // a damaged stored fingerprint
					return false
				}
				if !fn(slices.Clone(entries[lo:min(lo+size, n)])) {
					return false
				}
			}
			return true
		}
	}
	yes := func(was, now FingerprintEntry) bool { return true }
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, size := range []int{1, 7, FingerprintPart, n} {
			got, ok := ChangesAmong(sys, n, inParts(size, n), 10, yes)
			if !ok || !slices.Equal(got, want) {
				t.Fatalf("GOMAXPROCS=%d, parts of %d: got %v (ok %v), want %v", procs, size, got, ok, want)
			}
			if _, ok := ChangesAmong(sys, n, inParts(size, n), len(moved)-1, yes); ok {
				t.Fatalf("GOMAXPROCS=%d, parts of %d: %d moves passed a limit of %d", procs, size, len(moved), len(moved)-1)
			}
			refuseRemoved := func(was, now FingerprintEntry) bool { return !now.Missing }
			if _, ok := ChangesAmong(sys, n, inParts(size, n), 10, refuseRemoved); ok {
				t.Fatalf("GOMAXPROCS=%d, parts of %d: a refused move was accepted", procs, size)
			}
			if _, ok := ChangesAmong(sys, n, inParts(size, n-size), 10, yes); ok {
				t.Fatalf("GOMAXPROCS=%d, parts of %d: parts not all handed over, yet ok", procs, size)
			}
		}
		runtime.GOMAXPROCS(prev)
	}
	fp := NewFingerprint(entries)
	if got, ok := fp.Changes(sys, 10, yes); !ok || !slices.Equal(got, want) {
		t.Fatalf("Fingerprint.Changes: got %v (ok %v), want %v", got, ok, want)
	}
	if fp.Unchanged(sys) {
		t.Fatal("a fingerprint with five paths moved is unchanged")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
