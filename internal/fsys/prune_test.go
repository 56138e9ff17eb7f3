package fsys

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// PruneOldest keeps the newest entries it stamps, the one just written
// among them, and leaves the others alone.
func TestPruneOldest(t *testing.T) {
	dir := tempRoot(t)
	sys := NewRealSystem(RealSystemOptions{})
	base := time.Now().Add(-time.Hour)
	for i, name := range []string{"a.bin", "b.bin", "c.bin", "d.bin", "e.bin", "other.txt"} {
		p := dir.JoinName(name)
		if err := os.WriteFile(p.String(), []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
		// a.bin is the newest of all, e.bin the oldest .bin.
		at := base.Add(time.Duration(10-i) * time.Minute)
		if err := os.Chtimes(p.String(), at, at); err != nil {
			t.Fatal(err)
		}
	}
	PruneOldest(sys, dir, 3, dir.JoinName("e.bin"), func(name string) (AbsPath, bool) {
		return dir.JoinName(name), strings.HasSuffix(name, ".bin")
	})
	left := entryNames(t, dir)
	// e.bin was just written; a.bin and b.bin are the newest others.
	if want := []string{"a.bin", "b.bin", "e.bin", "other.txt"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// entryNames is the names in dir, sorted, as os.ReadDir gives them.
func entryNames(t *testing.T, dir AbsPath) []string {
	t.Helper()
	entries, err := os.ReadDir(dir.String())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
