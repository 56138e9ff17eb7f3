// Package keyset keeps entries found by a 64-bit key of their path (a
// hash) in a sorted slice instead of a map of paths: a few bytes an entry
// instead of the path and a map's overhead.
package keyset

import (
	"cmp"
	"slices"
)

// SortUnique sorts s by key and leaves out every entry whose key another
// entry shares: two paths with one key are both untrusted, so a lookup
// never answers for the wrong one. The result reuses s.
func SortUnique[T any](s []T, key func(*T) uint64) []T {
	slices.SortFunc(s, func(a, b T) int { return cmp.Compare(key(&a), key(&b)) })
	kept := s[:0]
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && key(&s[j]) == key(&s[i]) {
			j++
		}
		if j == i+1 {
			kept = append(kept, s[i])
		}
		i = j
	}
	return kept
}
