package keyset

import (
	"slices"
	"testing"
)

type entry struct {
	key  uint64
	name string
}

// TestSortUniqueDropsSharedKeys: the entries come back sorted by key, and
// none of those whose key is shared, however many share it.
func TestSortUniqueDropsSharedKeys(t *testing.T) {
	in := []entry{{5, "e"}, {1, "a"}, {3, "c1"}, {2, "b"}, {3, "c2"}, {9, "z1"}, {9, "z2"}, {9, "z3"}}
	got := SortUnique(in, func(e *entry) uint64 { return e.key })
	want := []entry{{1, "a"}, {2, "b"}, {5, "e"}}
	if !slices.Equal(got, want) {
		t.Fatalf("SortUnique = %v, want %v", got, want)
	}
	if got := SortUnique([]entry(nil), func(e *entry) uint64 { return e.key }); len(got) != 0 {
		t.Fatalf("SortUnique(nil) = %v", got)
	}
}
