package fsys

import (
	"io/fs"
	"sync"
	"time"
)

// TrackingSystem forwards everything to a base [System] and remembers
// every path it was asked to read, list or stat, with what it found. A
// [Fingerprint] of those answers tells later whether a result computed
// from them (a compiled desired state) is still what the same reads would
// give.
type TrackingSystem struct {
	System
	mu    sync.Mutex
	seen  map[trackKey]bool
	start time.Time
}

// trackKey is one observation: a path and whether it was seen through
// symlinks (ReadFile, Stat) or not (Lstat, ReadDir, Readlink).
type trackKey struct {
	path   AbsPath
	follow bool
}

// NewTrackingSystem returns a TrackingSystem over base.
func NewTrackingSystem(base System) *TrackingSystem {
	return &TrackingSystem{System: base, seen: map[trackKey]bool{}, start: time.Now()}
}

func (t *TrackingSystem) track(path AbsPath, follow bool) {
	t.mu.Lock()
	t.seen[trackKey{path, follow}] = true
	t.mu.Unlock()
}

// ReadFile implements [System].
func (t *TrackingSystem) ReadFile(path AbsPath) ([]byte, error) {
	t.track(path, true)
	return t.System.ReadFile(path)
}

// Lstat implements [System].
func (t *TrackingSystem) Lstat(path AbsPath) (fs.FileInfo, error) {
	t.track(path, false)
	return t.System.Lstat(path)
}

// Stat implements [System].
func (t *TrackingSystem) Stat(path AbsPath) (fs.FileInfo, error) {
	t.track(path, true)
	return t.System.Stat(path)
}

// ReadDir implements [System].
func (t *TrackingSystem) ReadDir(path AbsPath) ([]fs.DirEntry, error) {
	t.track(path, false)
	return t.System.ReadDir(path)
}

// Readlink implements [System].
func (t *TrackingSystem) Readlink(path AbsPath) (string, error) {
	t.track(path, false)
	return t.System.Readlink(path)
}

// Fingerprint is the stat data of every path a [TrackingSystem] saw.
type Fingerprint struct {
	entries map[trackKey]statID
}

// statID identifies a file's content as far as stat data can: a missing
// path, or type, size, modification and change times and inode.
type statID struct {
	missing bool
	mode    fs.FileMode
	size    int64
	mtime   int64
	ctime   int64
	ino     uint64
}

func statOf(sys System, k trackKey) statID {
	var fi fs.FileInfo
	var err error
	if k.follow {
		fi, err = sys.Stat(k.path)
	} else {
		fi, err = sys.Lstat(k.path)
	}
	if err != nil {
		return statID{missing: true}
	}
	ctime, ino := statExtra(fi)
	return statID{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: ctime, ino: ino}
}

// Fingerprint takes the stat data of every path seen so far, through sys.
// ok is false when a path changed too recently to be trusted: a file
// written in the same clock tick as a later edit keeps its stat data
// (git's "racy clean" rule), so anything modified later than racy before
// the tracking began makes the fingerprint unusable.
func (t *TrackingSystem) Fingerprint(sys System, racy time.Duration) (fp *Fingerprint, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fp = &Fingerprint{entries: make(map[trackKey]statID, len(t.seen))}
	since := t.start.Add(-racy).UnixNano()
	for k := range t.seen {
		id := statOf(sys, k)
		if !id.missing && (id.mtime >= since || id.ctime >= since) {
			return nil, false
		}
		fp.entries[k] = id
	}
	return fp, true
}

// Unchanged reports whether every path fp describes still has the same
// stat data on sys.
func (fp *Fingerprint) Unchanged(sys System) bool {
	for k, id := range fp.entries {
		if statOf(sys, k) != id {
			return false
		}
	}
	return true
}

// Len is the number of paths fp describes.
func (fp *Fingerprint) Len() int { return len(fp.entries) }
