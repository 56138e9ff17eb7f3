package fsys

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// maxWatches bounds the folders one [Watcher] watches (inotify's per-user
// limit is often 8,192); past it, callers fall back to stat checks.
const maxWatches = 8000

// Watcher tells a cache whether anything may have changed in the folders
// holding the paths of its fingerprints, without a stat of each path: it
// watches those folders on the real disk (fsnotify) and counts what it
// hears of those paths. An event naming a path a fingerprint covers (or
// an entry of a folder one listed), and any watcher error, moves
// [Watcher.Generation]; a cache whose entry was taken at the current
// generation needs no re-check. Events of other entries of a watched
// folder do not count: the folders above a repo are looked at, so their
// parents (a home folder, /tmp) are watched, and what else happens there
// changes no stat data a fingerprint holds. Watches are not recursive and
// only see changes made through this machine's kernel, so callers keep
// the stat check as the safety net.
//
// Events arrive some time after the change that made them: a caller that
// trusts the generation calls [Watcher.Sync] first.
type Watcher struct {
	fw      *fsnotify.Watcher
	gen     atomic.Uint64
	mu      sync.Mutex
	watched map[string]bool
	// named are the paths whose events count: every path a fingerprint
	// covers and, for a missing one, the first missing name on the way
	// to it; whole are the folders every entry of which counts (listed
	// folders, links followed to a folder).
	named map[string]bool
	whole map[string]bool
	done  chan struct{}

	// markers is a folder of the watcher's own ("" when it could not be
	// made), where [Watcher.Sync] makes a file named by its number (seq)
	// and waits to hear it; heard is the highest number heard so far, and
	// heardCh is closed (and made again) when it moves.
	markers string
	seq     atomic.Uint64
	heard   atomic.Uint64
	heardMu sync.Mutex
	heardCh chan struct{}
}

// syncWait is how long [Watcher.Sync] waits to hear its marker.
const syncWait = 100 * time.Millisecond

// NewWatcher starts a Watcher; Close stops it.
func NewWatcher() (*Watcher, error) {
	fw, err := fsnotify.NewBufferedWatcher(1024)
	if err != nil {
		return nil, err
	}
	w := &Watcher{fw: fw, watched: map[string]bool{}, named: map[string]bool{}, whole: map[string]bool{}, done: make(chan struct{}),
		heardCh: make(chan struct{})}
	sweepMarkers(os.TempDir())
	if dir, err := os.MkdirTemp("", markerPrefix+strconv.Itoa(os.Getpid())+"-"); err == nil {
		if fw.Add(dir) == nil {
			w.markers = dir
		} else {
			_ = os.RemoveAll(dir)
		}
	}
	go w.listen()
	return w, nil
}

// markerPrefix begins the name of a watcher's marker folder, followed by
// the id of the process that made it.
const markerPrefix = "agentpack-watch-"

// sweepMarkers removes from tmp the marker folders of watchers whose
// process is gone: a server killed before it could close its watcher
// (SIGKILL) left its folder behind. Only a real folder of this user's,
// holding nothing but marker files, is removed; a folder whose process
// cannot be told gone stays.
func sweepMarkers(tmp string) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, markerPrefix+"*-*"))
	for _, dir := range dirs {
		pid, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(dir), markerPrefix), "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n <= 0 || n == os.Getpid() || !processGone(n) || !ownFolder(dir) {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if _, err := strconv.ParseUint(e.Name(), 10, 64); err == nil && e.Type().IsRegular() {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
		_ = os.Remove(dir) // fails, and the folder stays, when anything else is in it
	}
}

// Sync returns once every event the kernel queued before it was called
// has been counted: it makes a marker file and waits to hear it, or one
// made after it (the kernel hands one watcher's events over in the order
// they happened). It reports false when it cannot tell (no marker folder,
// or the marker not heard within syncWait): the caller must then check by
// stat data. Without it, a change made just before a call could be heard
// only after the call trusted the generation. A marker heard late, after
// its Sync gave up, is no later Sync's: each waits for its own number.
func (w *Watcher) Sync() bool {
	if w.markers == "" {
		return false
	}
	seq := w.seq.Add(1)
	marker := filepath.Join(w.markers, strconv.FormatUint(seq, 10))
	if os.WriteFile(marker, nil, 0o600) != nil {
		return false
	}
	defer os.Remove(marker)
	timeout := time.NewTimer(syncWait)
	defer timeout.Stop()
	for {
		w.heardMu.Lock()
		moved := w.heardCh
		w.heardMu.Unlock()
		if w.heard.Load() >= seq {
			return true
		}
		select {
		case <-moved:
		case <-timeout.C:
			return false
		}
	}
}

// heardMarker notes the marker named name as heard.
func (w *Watcher) heardMarker(name string) {
	seq, err := strconv.ParseUint(filepath.Base(name), 10, 64)
	if err != nil || seq <= w.heard.Load() {
		return
	}
	w.heard.Store(seq) // only listen stores it
	w.heardMu.Lock()
	close(w.heardCh)
	w.heardCh = make(chan struct{})
	w.heardMu.Unlock()
}

func (w *Watcher) listen() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				w.gen.Add(1)
				return
			}
			if w.markers != "" && filepath.Dir(ev.Name) == w.markers {
				if ev.Has(fsnotify.Create) {
					w.heardMarker(ev.Name)
				}
				continue
			}
			if w.counts(ev.Name) {
				w.gen.Add(1)
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				w.forget(ev.Name)
			}
		case _, ok := <-w.fw.Errors:
			w.gen.Add(1) // an overflow lost events: everything may have changed
			if !ok {
				return
			}
		}
	}
}

// counts reports whether an event naming name can change what a covered
// fingerprint says: name is a covered path, an entry of a folder covered
// whole, or a watched folder itself (moved or removed).
func (w *Watcher) counts(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.named[name] || w.watched[name] || w.whole[filepath.Dir(name)]
}

// Generation counts the events heard so far that count.
func (w *Watcher) Generation() uint64 { return w.gen.Load() }

// Cover watches every folder that can show a change of a path fp
// describes: the folder holding it (or, for a missing path, its nearest
// existing ancestor), a listed folder itself, and a path that is a symlink
// (which watches its target). It reports false when one of them could not
// be watched; the caller must then re-check fp by its stat data.
func (w *Watcher) Cover(fp *Fingerprint) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	ok := true
	for _, e := range fp.entries {
		dir, name := e.Path.Dir(), e.Path
		if e.Missing {
			for dir != dir.Dir() {
				if _, err := os.Lstat(dir.String()); err == nil {
					break
				}
				dir, name = dir.Dir(), dir
			}
		}
		w.named[name.String()] = true
		ok = w.add(dir.String()) && ok
		if e.Listed && !e.Missing {
			ok = w.add(e.Path.String()) && ok
			w.whole[e.Path.String()] = true
		}
		if e.Follow && !e.Missing {
			if fi, err := os.Lstat(e.Path.String()); err != nil || fi.Mode()&os.ModeSymlink != 0 {
				ok = w.add(e.Path.String()) && ok
				w.whole[e.Path.String()] = true
			}
		}
	}
	return ok
}

// forget drops the watch of a watched folder that was removed or moved
// away: the watch went with it (it is on the folder, not its path), so
// the next Cover of a folder made there again watches that one.
func (w *Watcher) forget(path string) {
	w.mu.Lock()
	watched := w.watched[path]
	delete(w.watched, path)
	w.mu.Unlock()
	if watched {
		_ = w.fw.Remove(path) // gone already when the folder was removed
	}
}

func (w *Watcher) add(path string) bool {
	if w.watched[path] {
		return true
	}
	if len(w.watched) >= maxWatches || w.fw.Add(path) != nil {
		return false
	}
	w.watched[path] = true
	return true
}

// Close stops watching.
func (w *Watcher) Close() error {
	err := w.fw.Close()
	<-w.done
	if w.markers != "" {
		_ = os.RemoveAll(w.markers)
	}
	return err
}
