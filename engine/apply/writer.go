// Package apply is the only code that changes target files: the
// transaction of a deploy ([Writer.Apply]) and its dry run, the recovery of
// an interrupted one ([Writer.Recover]) and the restore walk of a rollback
// ([Writer.Restore]). Each is journaled and recorded in the snapshot store,
// and checks every path with the link guard before it writes.
package apply

import (
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/internal/fsys"
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
	// transaction ("pack saved", "journal written", "files written", "record
	// saved", "journal removed"); crash tests stop the process there.
	Checkpoint func(phase string)
}

func (wr *Writer) checkpoint(phase string) {
	if wr.Checkpoint != nil {
		wr.Checkpoint(phase)
	}
}

// modeOf is the permission bits of path, 0o644 when it cannot be read.
func (wr *Writer) modeOf(path string) fs.FileMode {
	fi, err := wr.Sys.Lstat(fsys.AbsPath(path))
	if err != nil {
		return 0o644
	}
	return fi.Mode().Perm()
}

// pruneEmptyDirs removes now-empty folders from dir up to (not including)
// root, so deleting a skill does not leave its empty folder behind.
func pruneEmptyDirs(sys fsys.System, dir, root string) {
	for desired.Within(root, dir) && dir != root {
		if fi, err := sys.Lstat(fsys.AbsPath(dir)); err != nil || !fi.IsDir() {
			return // a link is not ours to remove, even when what it names is empty
		}
		entries, err := sys.ReadDir(fsys.AbsPath(dir))
		if err != nil || len(entries) > 0 {
			return
		}
		if sys.Remove(fsys.AbsPath(dir)) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// createdDirs lists the folders that writing paths will create: for each
// path, its missing ancestors up to the first that exists.
func createdDirs(sys fsys.System, paths []string) []string {
	exists := map[string]bool{}
	var out []string
	for _, p := range paths {
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			seen, known := exists[d]
			if !known {
				_, err := sys.Lstat(fsys.AbsPath(d))
				seen = err == nil
				exists[d] = seen
				if !seen {
					out = append(out, d)
				}
			}
			if seen || known || filepath.Dir(d) == d {
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// removeEmptyCreatedDirs removes, deepest first, the folders an apply
// created that are empty again. A link is never removed.
func removeEmptyCreatedDirs(sys fsys.System, dirs []string) {
	sorted := slices.Clone(dirs)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, d := range sorted {
		if !filepath.IsAbs(d) || filepath.Clean(d) != d {
			continue
		}
		fi, err := sys.Lstat(fsys.AbsPath(d))
		if err != nil || !fi.IsDir() {
			continue
		}
		if entries, err := sys.ReadDir(fsys.AbsPath(d)); err == nil && len(entries) == 0 {
			_ = sys.Remove(fsys.AbsPath(d))
		}
	}
}
