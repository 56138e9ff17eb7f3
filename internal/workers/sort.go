package workers

import (
	"runtime"
	"slices"
)

// minSortPart is the smallest part [SortFunc] sorts on a goroutine of its
// own: below it, a goroutine's start and the merge cost more than the
// comparisons saved.
const minSortPart = 4096

// SortFunc sorts s by cmp, as slices.SortFunc does (not stable), with the
// parts of a large s sorted on one goroutine per usable CPU and then
// merged: a fingerprint of 280,000 looks at paths compares strings that
// share most of their bytes, and one CPU sorting them is most of what it
// costs to take.
func SortFunc[S ~[]E, E any](s S, cmp func(a, b E) int) {
	parts := min(runtime.GOMAXPROCS(0), len(s)/minSortPart)
	if parts <= 1 {
		slices.SortFunc(s, cmp)
		return
	}
	bounds := make([]int, parts+1)
	for i := range bounds {
		bounds[i] = len(s) * i / parts
	}
	Parallel(parts, func(i int) { slices.SortFunc(s[bounds[i]:bounds[i+1]], cmp) })
	// Merge neighbouring runs pairwise, each level's merges in parallel,
	// between s and a buffer as large.
	src, dst := s, make(S, len(s))
	for len(bounds) > 2 {
		next := make([]int, 0, len(bounds)/2+1)
		pairs := (len(bounds) - 1) / 2
		Parallel(pairs, func(p int) {
			lo, mid, hi := bounds[2*p], bounds[2*p+1], bounds[2*p+2]
			merge(dst[lo:hi], src[lo:mid], src[mid:hi], cmp)
		})
		for p := range pairs {
			next = append(next, bounds[2*p])
		}
		if (len(bounds)-1)%2 == 1 { // an odd run out: carried over as it is
			lo, hi := bounds[len(bounds)-2], bounds[len(bounds)-1]
			copy(dst[lo:hi], src[lo:hi])
			next = append(next, lo)
		}
		next = append(next, len(s))
		bounds, src, dst = next, dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}

// merge writes the sorted runs a and b into out (len(a)+len(b) long),
// taking a's element first on a tie.
func merge[E any](out, a, b []E, cmp func(a, b E) int) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if cmp(b[j], a[i]) < 0 {
			out[k] = b[j]
			j++
		} else {
			out[k] = a[i]
			i++
		}
		k++
	}
	k += copy(out[k:], a[i:])
	copy(out[k:], b[j:])
}
