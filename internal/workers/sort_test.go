package workers

import (
	"cmp"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// SortFunc sorts as slices.SortFunc does whatever the number of parts
// and however the runs fall: sizes around each part boundary, runs that
// are already sorted, reversed, all equal, and an odd number of parts.
func TestSortFuncSortsLikeSlices(t *testing.T) {
	for _, procs := range []int{1, 2, 3, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, minSortPart - 1, 2 * minSortPart, 3*minSortPart + 7, 50000} {
			r := rand.New(rand.NewPCG(uint64(n), uint64(procs)))
			for name, fill := range map[string]func(i int) int{
				"random":   func(int) int { return r.IntN(n + 1) },
				"sorted":   func(i int) int { return i },
				"reversed": func(i int) int { return n - i },
				"equal":    func(int) int { return 7 },
			} {
				s := make([]int, n)
				for i := range s {
					s[i] = fill(i)
				}
				want := slices.Clone(s)
				slices.Sort(want)
				SortFunc(s, cmp.Compare[int])
				if !slices.Equal(s, want) {
					t.Fatalf("GOMAXPROCS=%d n=%d %s: not sorted as slices.Sort sorts", procs, n, name)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}
