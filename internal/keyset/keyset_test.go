package keyset

import (
	"cmp"
	"fmt"
	"math/rand/v2"
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

// TestSortUniqueMatchesASort: over many entries, some keys shared by two
// or three, the result is what a plain sort and a filter give, each entry
// whole (the sort moves entries, not just keys).
func TestSortUniqueMatchesASort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var in []entry
	for i := range 5000 {
		k := rng.Uint64N(4000) // collisions on purpose
		in = append(in, entry{k, fmt.Sprintf("e%d-%d", k, i)})
	}
	count := map[uint64]int{}
	for _, e := range in {
		count[e.key]++
	}
	var want []entry
	for _, e := range in {
		if count[e.key] == 1 {
			want = append(want, e)
		}
	}
	slices.SortFunc(want, func(a, b entry) int { return cmp.Compare(a.key, b.key) })
	got := SortUnique(slices.Clone(in), func(e *entry) uint64 { return e.key })
	if !slices.Equal(got, want) {
		t.Fatalf("SortUnique kept %d entries, want %d (or in another order)", len(got), len(want))
	}
}

// BenchmarkSortUnique: 10,000 entries the size of a stat cache's.
func BenchmarkSortUnique(b *testing.B) {
	type statSized struct {
		key        uint64
		a, b, c, d int64
		sum        [32]byte
	}
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]statSized, 10000)
	for i := range src {
		src[i].key = rng.Uint64()
	}
	s := make([]statSized, len(src))
	b.ReportAllocs()
	for b.Loop() {
		copy(s, src)
		SortUnique(s, func(e *statSized) uint64 { return e.key })
	}
}
