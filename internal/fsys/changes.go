package fsys

import (
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// ChangesAmong is [Fingerprint.Changes] over entries handed over in parts:
// each calls fn with the parts in order while fn returns true, and returns
// false when fn did or it could not hand every part over (a damaged stored
// fingerprint); ok is false then too. n is about how many entries there
// are. The parts are stat'ed on one goroutine per usable CPU while each
// makes the next ones, so a fingerprint decoded from a file is checked as
// it is decoded, and no CPU waits for a slower one's half: a status that
// answers from its kept answer spent a fifth of its stat check decoding
// while the stats waited. fn may keep the parts it is given.
func ChangesAmong(sys System, n int, each func(fn func([]FingerprintEntry) bool) bool, limit int, accept func(was, now FingerprintEntry) bool) (changed []FingerprintEntry, ok bool) {
	var (
		mu      sync.Mutex
		refused atomic.Bool
		moved   = map[int]FingerprintEntry{}
	)
	look := func(at int, part []FingerprintEntry) {
		for i, e := range part {
			if refused.Load() {
				return
			}
			if e.Listed {
				// A folder whose listing the fingerprint vouches for:
				// a System tracking this check must keep its times too.
				NoteListed(sys, e.Path)
			}
			now := statOf(sys, e.Path, e.Follow, e.Listed)
			if now == e {
				continue
			}
			mu.Lock()
			moved[at+i] = now
			if len(moved) > limit || !accept(e, now) {
				refused.Store(true)
			}
			mu.Unlock()
		}
	}
	type numbered struct {
		at   int
		part []FingerprintEntry
	}
	var (
		parts chan numbered // nil: each part is stat'ed where it is handed over
		wg    sync.WaitGroup
	)
	if w := runtime.GOMAXPROCS(0); w > 1 && n >= FingerprintPart {
		parts = make(chan numbered, 2*w)
		for range w {
			wg.Go(func() {
				for p := range parts {
					look(p.at, p.part)
				}
			})
		}
	}
	seen := 0
	complete := each(func(part []FingerprintEntry) bool {
		if parts != nil {
			parts <- numbered{seen, part}
		} else {
			look(seen, part)
		}
		seen += len(part)
		return !refused.Load()
	})
	if parts != nil {
		close(parts)
		wg.Wait()
	}
	if !complete || refused.Load() {
		return nil, false
	}
	for _, i := range slices.Sorted(maps.Keys(moved)) {
		changed = append(changed, moved[i])
	}
	return changed, true
}

// FingerprintPart is how many entries of a fingerprint [ChangesAmong] is
// handed at a time: a few milliseconds of stats, so the goroutines finish
// together. A fingerprint of fewer is checked on the caller's goroutine:
// starting others would cost about what its stats do.
const FingerprintPart = 512
