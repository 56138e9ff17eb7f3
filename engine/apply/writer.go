// Package apply is the only code that changes target files: the
// transaction of a deploy ([Writer.Apply]) and its dry run, the recovery of
// an interrupted one ([Writer.Recover]) and the restore walk of a rollback
// ([Writer.Restore]). Each is journaled and recorded in the snapshot store,
// and checks every path with the link guard before it writes.
package apply

import (
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/workers"
	"github.com/agentpack/agentpack/snapshots"
)

// Writer carries out plans, recoveries and rollbacks on a System. The
// caller holds the state lock.
type Writer struct {
	// Sys is the filesystem written.
	Sys fsys.System
	// Store keeps the snapshots and the journal.
	Store *snapshots.Store
	// BestEffort lets recovery finish where it would otherwise stop (`doctor
	// --fix`): it sets a damaged journal aside and skips paths whose saved
	// bytes are damaged, with warnings.
	BestEffort bool
	// Checkpoint, when set, is called at each phase boundary of a
	// transaction ("deciding", before a deploy's writes are made from its
	// plan; "planned", "pack saved", "journal written", "files written",
	// "record saved", "journal removed"); crash tests stop the process
	// there.
	Checkpoint func(phase string)
	// Progress, when set, is told how many of the transaction's target
	// files are written so far (deploy and rollback); it may be called
	// from several goroutines at once, in no particular order of done.
	Progress func(done, total int)
}

// progress returns the function to call after each of total target
// files is written (a no-op without [Writer.Progress]).
func (wr *Writer) progress(total int) func() {
	if wr.Progress == nil || total == 0 {
		return func() {}
	}
	var mu sync.Mutex
	done := 0
	return func() {
		mu.Lock()
		defer mu.Unlock()
		done++
		wr.Progress(done, total)
	}
}

func (wr *Writer) checkpoint(phase string) {
	if wr.Checkpoint != nil {
		wr.Checkpoint(phase)
	}
}

// modeOf is the permission bits of path, 0o644 when it cannot be read.
func (wr *Writer) modeOf(path fsys.AbsPath) fs.FileMode {
	fi, err := wr.Sys.Lstat(path)
	if err != nil {
		return 0o644
	}
	return fi.Mode().Perm()
}

// recorded types the root and path of a change read back from a journal or
// a snapshot record. They come from disk: the link guard checks them before
// anything is read, written or removed there.
func recorded(root, path string) (fsys.AbsPath, fsys.AbsPath) {
	return fsys.AbsPath(root), fsys.AbsPath(path)
}

// emptiedDirs gathers the folders that removals may have emptied, up to
// (not including) their target roots, so deleting a skill does not leave
// its empty folder behind.
type emptiedDirs map[fsys.AbsPath]fsys.AbsPath // folder → its root

func newEmptiedDirs() emptiedDirs { return emptiedDirs{} }

// removed notes the folders above w's path if w removed it.
func (e emptiedDirs) removed(w write) {
	if !w.remove || w.noop {
		return
	}
	root := w.root()
	for d := w.path().Dir(); root.Contains(d) && d != root; d = d.Dir() {
		if _, ok := e[d]; ok {
			return
		}
		e[d] = root
	}
}

// prune removes the noted folders that are empty, deepest first, looking
// at each once; a folder that stays keeps its parents without a look. A
// link is not ours to remove, even when what it names is empty.
func (e emptiedDirs) prune(sys fsys.System) {
	dirs := slices.Collect(maps.Keys(e))
	slices.SortFunc(dirs, func(a, b fsys.AbsPath) int { return len(b) - len(a) })
	kept := map[fsys.AbsPath]bool{}
	for _, d := range dirs {
		if kept[d] {
			continue
		}
		fi, err := sys.Lstat(d)
		gone := err != nil
		if !gone && fi.IsDir() {
			entries, err := sys.ReadDir(d)
			gone = err == nil && len(entries) == 0 && sys.Remove(d) == nil
		}
		if !gone {
			for p := d.Dir(); e[p] != "" && !kept[p]; p = p.Dir() {
				kept[p] = true
			}
		}
		delete(e, d)
	}
}

// createdDirs lists the folders that writing paths will create: for each
// path, its missing ancestors up to the first that exists. They are
// recorded as strings, as snapshot records hold them. A folder below one
// known to be missing is missing too, so only the highest missing folder
// of a new tree is looked at: a deploy into a new project looks at its
// .agents folder, not at each of its 1,000 skill folders.
func createdDirs(sys fsys.System, paths []fsys.AbsPath) []string {
	exists := map[fsys.AbsPath]bool{}
	var out []string
	var last fsys.AbsPath
	var unknown []fsys.AbsPath // a path's folders not known yet, deepest first
	for _, p := range paths {
		d := p.Dir()
		if d == last {
			continue // writes come folder by folder
		}
		last = d
		unknown = unknown[:0]
		missing := false
		for {
			seen, known := exists[d]
			if known {
				missing = !seen
				break
			}
			unknown = append(unknown, d)
			if d.Dir() == d {
				break
			}
			d = d.Dir()
		}
		for i := len(unknown) - 1; i >= 0; i-- {
			d := unknown[i]
			if !missing {
				_, err := sys.Lstat(d)
				missing = err != nil
			}
			exists[d] = !missing
			if missing {
				out = append(out, d.String())
			}
		}
	}
	slices.Sort(out)
	return out
}

// removeEmptyCreatedDirs removes, deepest first, the folders an apply
// created that are empty again. A folder with anything in it stays (Remove
// refuses one), and so does a link, and nothing is removed through one: a
// folder goes only when it and each folder above it that the apply created
// are real folders. dirs come from snapshot records, so only clean
// absolute paths are taken. The folders of one depth hold none of each
// other: they go in parallel, one depth after the other (a rollback of
// 10,000 files removes 2,000 folders).
func removeEmptyCreatedDirs(sys fsys.System, dirs []string) {
	created := map[fsys.AbsPath]bool{}
	byDepth := map[int][]fsys.AbsPath{}
	for _, s := range dirs {
		d, err := fsys.NewAbsPath(s)
		if err != nil || d.String() != s || created[d] {
			continue
		}
		created[d] = true
		n := strings.Count(s, string(filepath.Separator))
		byDepth[n] = append(byDepth[n], d)
	}
	// Each folder is looked at once, before anything below it goes.
	var looks sync.Map
	realDir := func(p fsys.AbsPath) bool {
		if v, ok := looks.Load(p); ok {
			return v.(bool)
		}
		fi, err := sys.Lstat(p)
		ok := err == nil && fi.IsDir()
		looks.Store(p, ok)
		return ok
	}
	removable := func(d fsys.AbsPath) bool {
		for p := d; created[p]; p = p.Dir() {
			if !realDir(p) {
				return false
			}
			if p.Dir() == p {
				break
			}
		}
		return true
	}
	depths := slices.Sorted(maps.Keys(byDepth))
	for _, n := range slices.Backward(depths) {
		level := byDepth[n]
		workers.Parallel(len(level), func(i int) {
			if removable(level[i]) {
				_ = sys.Remove(level[i])
			}
		})
	}
}
