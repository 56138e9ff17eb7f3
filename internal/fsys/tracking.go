package fsys

import (
	"cmp"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentpack/agentpack/internal/workers"
)

// TrackingSystem forwards everything to a base [System] and remembers
// every path it was asked to read, list or stat, with what it found. A
// [Fingerprint] of those answers tells later whether a result computed
// from them (a compiled desired state) is still what the same reads would
// give.
type TrackingSystem struct {
	System
	mu    sync.Mutex
	start time.Time
	// chunks hold each observation in the order made, n of them: nearly
	// every path is looked at once or twice (a status of 10,000 target
	// files lstats each, its folders once), so a log of compact entries,
	// grouped by path only when a fingerprint is taken, costs less than
	// any map of the paths, and growing it copies nothing.
	chunks [][]tracked
	n      uint32
	// regular are what ReadRegular found, as fingerprint entries of
	// paths seen without following links, nregular of them in fixed
	// chunks, as the log.
	regular  [][]FingerprintEntry
	nregular int
	// stopped: [TrackingSystem.Stop] let go of the log; nothing more is
	// logged and no fingerprint can be taken.
	stopped bool
}

// trackKey is one observation: a path, whether it was seen through
// symlinks (ReadFile, Stat) or not (Lstat, ReadDir, Readlink), and whether
// it was listed (ReadDir); at is the observation holding the path's first
// Lstat answer (noStat: none).
type trackKey struct {
	path   AbsPath
	follow bool
	listed bool
	at     uint32
}

// noStat is a trackKey's at when no Lstat of its path succeeded.
const noStat = ^uint32(0)

// tracked is one observation of a path: which look (a trackKey's follow
// and listed), and for an Lstat its answer, which the fingerprint reuses
// instead of a second stat. A path's first answer is the one used, the
// safe one: a change after it (so maybe after the read too) moves the stat
// data. It is kept as the fields of a [StatData] (a fraction of an
// fs.FileInfo), with the look in what would be its padding.
type tracked struct {
	path    AbsPath
	mode    fs.FileMode
	looks   uint8 // lookPlain, lookFollow, lookListed
	hasStat bool
	size    int64
	mtimeNS int64
	ctimeNS int64
	ino     uint64
}

// stat is the Lstat answer e kept.
func (e *tracked) stat() StatData {
	return StatData{Mode: e.mode, Size: e.size, MtimeNS: e.mtimeNS, CtimeNS: e.ctimeNS, Ino: e.ino}
}

// trackedChunk is how many entries a chunk of a TrackingSystem holds.
const trackedChunk = 1024

// The looks of a [tracked] path, in the order of their trackKeys.
const (
	lookPlain  = 1 << iota // Lstat, Readlink
	lookListed             // ReadDir
	lookFollow             // ReadFile, Stat
)

func (k trackKey) look() uint8 {
	switch {
	case k.listed:
		return lookListed
	case k.follow:
		return lookFollow
	}
	return lookPlain
}

// NewTrackingSystem returns a TrackingSystem over base.
func NewTrackingSystem(base System) *TrackingSystem {
	return &TrackingSystem{System: base, start: time.Now()}
}

func (t *TrackingSystem) track(path AbsPath, follow bool) {
	t.see(trackKey{path: path, follow: follow})
}

func (t *TrackingSystem) see(k trackKey) {
	t.add(tracked{path: k.path, looks: k.look()})
}

// Stop ends the tracking: the log is let go of and later looks are not
// logged (the System still answers them), for a computation whose answer
// is not kept while what it made (a plan's stat cache) still holds the
// tracker. A stopped tracker takes no fingerprint.
func (t *TrackingSystem) Stop() {
	t.mu.Lock()
	t.chunks, t.n, t.regular, t.nregular, t.stopped = nil, 0, nil, 0, true
	t.mu.Unlock()
}

// Looks is how many looks at paths t logged: the size of the work it
// tracked.
func (t *TrackingSystem) Looks() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return int(t.n)
}

// add logs e.
func (t *TrackingSystem) add(e tracked) {
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		return
	}
	if t.n%trackedChunk == 0 {
		t.chunks = append(t.chunks, make([]tracked, trackedChunk))
	}
	*t.at(t.n) = e
	t.n++
	t.mu.Unlock()
}

// at is the entry at index i.
func (t *TrackingSystem) at(i uint32) *tracked { return &t.chunks[i/trackedChunk][i%trackedChunk] }

// ReadFile implements [System].
func (t *TrackingSystem) ReadFile(path AbsPath) ([]byte, error) {
	t.track(path, true)
	return t.System.ReadFile(path)
}

// Lstat implements [System].
func (t *TrackingSystem) Lstat(path AbsPath) (fs.FileInfo, error) {
	fi, err := t.System.Lstat(path)
	var d StatData
	if err == nil {
		d = StatDataOf(fi)
	}
	t.lstated(path, d, err)
	return fi, err
}

// lstated records an Lstat of path that found d (or err).
func (t *TrackingSystem) lstated(path AbsPath, d StatData, err error) {
	e := tracked{path: path, looks: lookPlain}
	if err == nil {
		e = tracked{path: path, mode: d.Mode, looks: lookPlain, hasStat: true, size: d.Size, mtimeNS: d.MtimeNS, ctimeNS: d.CtimeNS, ino: d.Ino}
	}
	t.add(e)
}

// statData implements dataStatter: an [LstatData] through a
// TrackingSystem costs no fs.FileInfo either.
func (t *TrackingSystem) statData(path AbsPath, follow bool) (StatData, error) {
	if follow {
		t.track(path, true)
		return statDataOf(t.System, path, true)
	}
	d, err := statDataOf(t.System, path, false)
	t.lstated(path, d, err)
	return d, err
}

// Stat implements [System].
func (t *TrackingSystem) Stat(path AbsPath) (fs.FileInfo, error) {
	t.track(path, true)
	return t.System.Stat(path)
}

// ReadDir implements [System].
func (t *TrackingSystem) ReadDir(path AbsPath) ([]fs.DirEntry, error) {
	t.see(trackKey{path: path, listed: true})
	return t.System.ReadDir(path)
}

// NoteListed records that dir's entries were used without a ReadDir — a
// cache vouched for them by dir's stat data — so the fingerprint keeps
// dir's times, as after a ReadDir: an entry added or removed since moves
// them.
func (t *TrackingSystem) NoteListed(dir AbsPath) {
	t.see(trackKey{path: dir, listed: true})
}

// NoteListed tells sys, when it tracks what it is asked, that dir's
// entries were used without a ReadDir (see [TrackingSystem.NoteListed]).
func NoteListed(sys System, dir AbsPath) {
	if t, ok := sys.(interface{ NoteListed(AbsPath) }); ok {
		t.NoteListed(dir)
	}
}

// Readlink implements [System].
func (t *TrackingSystem) Readlink(path AbsPath) (string, error) {
	t.track(path, false)
	return t.System.Readlink(path)
}

// Fingerprint is the stat data of every path a [TrackingSystem] saw,
// sorted by path.
type Fingerprint struct {
	entries []FingerprintEntry
}

// FingerprintEntry is what one path looked like: missing, or its type and
// permissions, size, modification and change times and inode — as far as
// stat data can, the identity of its content (git's index holds the same).
type FingerprintEntry struct {
	Path AbsPath
	// Follow says the path was seen through symlinks (ReadFile, Stat)
	// rather than not (Lstat, ReadDir, Readlink).
	Follow bool
	// Listed says the path is a folder whose entries were read: its times
	// count, as they move when an entry is added, removed or renamed. A
	// folder only stat'ed (is there a .git here?) is recorded by type and
	// permissions alone, so activity inside it changes nothing.
	Listed  bool
	Missing bool
	Mode    fs.FileMode
	Size    int64
	MtimeNS int64
	CtimeNS int64
	Ino     uint64
}

// NewFingerprint returns the Fingerprint of entries (as [Fingerprint.Entries]
// gave them), for a cache that stored them.
func NewFingerprint(entries []FingerprintEntry) *Fingerprint {
	return &Fingerprint{entries: entries}
}

// Entries are the paths fp describes, sorted; callers must not change them.
func (fp *Fingerprint) Entries() []FingerprintEntry { return fp.entries }

func statOf(sys System, path AbsPath, follow, listed bool) FingerprintEntry {
	d, err := statDataOf(sys, path, follow)
	if err != nil {
		return FingerprintEntry{Path: path, Follow: follow, Listed: listed, Missing: true}
	}
	return entryOf(path, follow, listed, d)
}

// entryOf is the entry of path as d describes it.
func entryOf(path AbsPath, follow, listed bool, d StatData) FingerprintEntry {
	if d.IsDir() && !listed {
		return FingerprintEntry{Path: path, Follow: follow, Mode: d.Mode}
	}
	return FingerprintEntry{Path: path, Follow: follow, Listed: listed, Mode: d.Mode, Size: d.Size, MtimeNS: d.MtimeNS, CtimeNS: d.CtimeNS, Ino: d.Ino}
}

// coarseRacy is how long a whole-second timestamp stays untrusted: a file
// system that keeps only seconds (or two, like FAT) gives an edit made in
// the same second as the load the same modification time.
const coarseRacy = 2 * time.Second

// Fingerprint takes the stat data of every path seen so far, through sys.
// ok is false when a path changed too recently to be trusted: a file
// written in the same clock tick as a later edit keeps its stat data
// (git's "racy clean" rule), so anything modified or changed later than
// racy before the tracking began — or [coarseRacy], for a timestamp with
// no sub-second part — makes the fingerprint unusable.
func (t *TrackingSystem) Fingerprint(sys System, racy time.Duration) (fp *Fingerprint, ok bool) {
	return t.FingerprintWithout(sys, racy, nil)
}

// FingerprintWithout is [TrackingSystem.Fingerprint] of the paths drop
// (which may be nil) does not report: agentpack's own records, rewritten
// by the very command being fingerprinted, are left out before they are
// judged too recent.
func (t *TrackingSystem) FingerprintWithout(sys System, racy time.Duration, drop func(AbsPath) bool) (fp *Fingerprint, ok bool) {
	t.mu.Lock()
	// The observations before n are written for good; a later one may
	// grow chunks.
	n, chunks, stopped := t.n, t.chunks, t.stopped
	t.mu.Unlock()
	if stopped {
		return nil, false
	}
	obs := func(i uint32) *tracked { return &chunks[i/trackedChunk][i%trackedChunk] }
	// The observations kept, by path, each path's in the order made.
	order := make([]uint32, 0, n)
	for i := range n {
		if drop == nil || !drop(obs(i).path) {
			order = append(order, i)
		}
	}
	workers.SortFunc(order, func(a, b uint32) int {
		if c := strings.Compare(string(obs(a).path), string(obs(b).path)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	keys := make([]trackKey, 0, len(order))
	for i := 0; i < len(order); {
		path := obs(order[i]).path
		looks, at := uint8(0), noStat
		for ; i < len(order) && obs(order[i]).path == path; i++ {
			e := obs(order[i])
			looks |= e.looks
			if e.hasStat && at == noStat {
				at = order[i]
			}
		}
		// In the order of a path's keys: followed, then listed.
		for _, k := range [...]trackKey{{path: path, at: at}, {path: path, listed: true, at: at}, {path: path, follow: true, at: at}} {
			if looks&k.look() != 0 {
				keys = append(keys, k)
			}
		}
	}
	order = nil
	t.mu.Lock()
	rchunks, nregular := t.regular, t.nregular
	t.mu.Unlock()
	// The entries of keys, then those of ReadRegular after them in the
	// same array, merged in place: no second copy of either.
	fp = &Fingerprint{entries: make([]FingerprintEntry, len(keys), len(keys)+nregular)}
	for i := range nregular {
		if e := rchunks[i/trackedChunk][i%trackedChunk]; drop == nil || !drop(e.Path) {
			fp.entries = append(fp.entries, e)
		}
	}
	regular := fp.entries[len(keys):]
	var racyFound atomic.Bool
	start := t.start.UnixNano()
	entries := fp.entries[:len(keys)]
	workers.Chunks(len(keys), func(i int) bool {
		k := keys[i]
		var e FingerprintEntry
		if k.at != noStat && !obs(k.at).stat().IsLink() {
			// Not a link: the lstat taken during the load stands for every
			// look at this path (a stat following links sees the same).
			e = entryOf(k.path, false, k.listed, obs(k.at).stat())
		} else {
			e = statOf(sys, k.path, k.follow, k.listed)
		}
		entries[i] = e
		if !e.Missing && (tooRecent(e.MtimeNS, start, racy) || tooRecent(e.CtimeNS, start, racy)) {
			racyFound.Store(true)
			return false
		}
		return true
	})
	if racyFound.Load() {
		return nil, false
	}
	for _, e := range regular {
		if !e.Missing && (tooRecent(e.MtimeNS, start, racy) || tooRecent(e.CtimeNS, start, racy)) {
			return nil, false
		}
	}
	if len(regular) > 0 {
		fp.entries = sortEntries(fp.entries)
	}
	fp.entries = dropCovered(fp.entries)
	return fp, true
}

// mergeEntries is the entries of both lists sorted by path, then
// followed, then listed, each key once (either look at a path seen twice
// describes it).
func mergeEntries(a, b []FingerprintEntry) []FingerprintEntry {
	return sortEntries(append(a, b...))
}

// sortEntries sorts all by path, then followed, then listed, and keeps
// each key once (either look at a path seen twice describes it).
func sortEntries(all []FingerprintEntry) []FingerprintEntry {
	workers.SortFunc(all, compareEntries)
	return slices.CompactFunc(all, func(x, y FingerprintEntry) bool {
		return x.Path == y.Path && x.Follow == y.Follow && x.Listed == y.Listed
	})
}

func compareEntries(a, b FingerprintEntry) int {
	if c := strings.Compare(string(a.Path), string(b.Path)); c != 0 {
		return c
	}
	if c := cmpBool(a.Follow, b.Follow); c != 0 {
		return c
	}
	return cmpBool(a.Listed, b.Listed)
}

// dropCovered removes the entries another entry of the same path already
// vouches for: an lstat that found no symlink gives what a stat (which
// follows links) would, so a file both read and lstat'ed, or a folder both
// stat'ed and listed, is checked once. entries are sorted by path.
func dropCovered(entries []FingerprintEntry) []FingerprintEntry {
	out := entries[:0]
	for i := 0; i < len(entries); {
		j := i
		for j < len(entries) && entries[j].Path == entries[i].Path {
			j++
		}
		group := entries[i:j]
		cover := -1
		for k, e := range group {
			if !e.Follow && !e.Missing && e.Mode&fs.ModeSymlink == 0 && (cover < 0 || e.Listed) {
				cover = k
			}
		}
		for k, e := range group {
			if cover < 0 || k == cover || e.Missing || (e.Listed && !group[cover].Listed) {
				out = append(out, e)
			}
		}
		i = j
	}
	return out
}

// tooRecent reports whether the timestamp ts (nanoseconds) is within racy
// of start, or within [coarseRacy] for a whole-second one.
func tooRecent(ts, start int64, racy time.Duration) bool {
	if ts%int64(time.Second) == 0 {
		racy = max(racy, coarseRacy)
	}
	return ts >= start-int64(racy)
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Unchanged reports whether every path fp describes still has the same
// stat data on sys. The paths are stat'ed in parallel: a 10,000-file repo
// is checked in a few milliseconds.
func (fp *Fingerprint) Unchanged(sys System) bool {
	_, ok := fp.Changes(sys, 0, nil)
	return ok
}

// Changes is what moved among the paths fp describes, each path's entry
// as sys shows it now, in fp's order: nil when nothing did. ok is false,
// and the look stops, once more than limit moved or one moved in a way
// accept refuses (it is given the entry as fp has it and as it is now;
// with limit 0 it is never called).
func (fp *Fingerprint) Changes(sys System, limit int, accept func(was, now FingerprintEntry) bool) (changed []FingerprintEntry, ok bool) {
	return ChangesAmong(sys, len(fp.entries), func(fn func([]FingerprintEntry) bool) bool {
		for lo := 0; lo < len(fp.entries); lo += FingerprintPart {
			if !fn(fp.entries[lo:min(lo+FingerprintPart, len(fp.entries))]) {
				return false
			}
		}
		return true
	}, limit, accept)
}

// Settled reports whether e's times are old enough, against a look that
// began at start, to stand for what the path held then ([tooRecent]: see
// [TrackingSystem.Fingerprint]).
func (e FingerprintEntry) Settled(start time.Time, racy time.Duration) bool {
	s := start.UnixNano()
	return e.Missing || !tooRecent(e.MtimeNS, s, racy) && !tooRecent(e.CtimeNS, s, racy)
}

// Len is the number of paths fp describes.
func (fp *Fingerprint) Len() int { return len(fp.entries) }

// With is fp and other together: the stat data of every path either
// describes (a result computed from both reads).
func (fp *Fingerprint) With(other *Fingerprint) *Fingerprint {
	return &Fingerprint{entries: mergeEntries(slices.Clone(fp.entries), other.entries)}
}
