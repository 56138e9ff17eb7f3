package desired

import (
	"bytes"
	"cmp"
	"reflect"
	"slices"
	"strings"

	"github.com/agentpack/agentpack/internal/fsys"
)

// Relocated is a copy of d with every root and file path at or below from
// moved to the same place below to: the state the same sources compile to
// for a project at to, when d's project was at from and nothing else of
// it depended on that place (the caller's to check). ok is false when the
// copy could not be that state: a path d keeps where it is lies below to,
// a moved file's source is named by more of its path than lies below
// from ([File.Src]), or either folder is a file system's root. d is left
// as it is.
func (d *State) Relocated(from, to fsys.AbsPath) (out *State, ok bool) {
	if !movable(from, to) {
		return nil, false
	}
	ok = true
	move := func(p fsys.AbsPath) fsys.AbsPath {
		if from.Contains(p) {
			return to + p[len(from):]
		}
		if to.Contains(p) {
			ok = false
		}
		return p
	}
	moveRoots := func(roots []Root) []Root {
		if roots == nil {
			return nil
		}
		out := make([]Root, len(roots))
		for i, r := range roots {
			out[i] = Root{Target: r.Target, Path: move(r.Path), ScanExtras: r.ScanExtras}
		}
		slices.SortFunc(out, func(a, b Root) int { // as Compile sorts them
			return cmp.Or(strings.Compare(a.Target, b.Target), strings.Compare(string(a.Path), string(b.Path)))
		})
		return out
	}
	origins := map[*Origin]*Origin{}
	files := make([]File, len(d.Files))
	ptrs := make([]*File, len(d.Files))
	for i, f := range d.Files {
		o, seen := origins[f.Origin]
		if !seen {
			o = &Origin{Target: f.Target, Root: move(f.Root), ModuleIDs: f.ModuleIDs, srcDir: f.srcDir}
			origins[f.Origin] = o
		}
		files[i] = *f
		files[i].Origin, files[i].Path = o, move(f.Path)
		if !srcFollows(f, from) {
			ok = false
		}
		ptrs[i] = &files[i]
	}
	roots, stale := moveRoots(d.Roots), moveRoots(d.Stale)
	if !ok {
		return nil, false
	}
	return Restore(d.Targets, roots, stale, ptrs), true
}

// SameRelocated reports whether b is a relocated from the folder from to
// the folder to ([State.Relocated]): the same targets, roots and files
// (origin, path, hash, bytes or source, entries, mode) with their paths
// moved. Stale roots are not compared (they come from the roots registry,
// not from compiling). No copy is made: files and roots are compared in
// a's order, so a relocation that would reorder them counts as different.
func SameRelocated(a *State, from, to fsys.AbsPath, b *State) bool {
	if !movable(from, to) {
		return false
	}
	// moved reports whether q is p relocated.
	moved := func(p, q fsys.AbsPath) bool {
		if !from.Contains(p) {
			return p == q && !to.Contains(q)
		}
		return len(q)-len(to) == len(p)-len(from) && q[:len(to)] == to && q[len(to):] == p[len(from):]
	}
	if !slices.Equal(a.Targets, b.Targets) || len(a.Roots) != len(b.Roots) || len(a.Files) != len(b.Files) {
		return false
	}
	for i, r := range a.Roots {
		if g := b.Roots[i]; r.Target != g.Target || r.ScanExtras != g.ScanExtras || !moved(r.Path, g.Path) {
			return false
		}
	}
	for i, f := range a.Files {
		g := b.Files[i]
		if !srcFollows(f, from) {
			return false
		}
		if f.Target != g.Target || !moved(f.Root, g.Root) || !slices.Equal(f.ModuleIDs, g.ModuleIDs) || f.Src() != g.Src() ||
			!moved(f.Path, g.Path) || f.SHA256 != g.SHA256 || !bytes.Equal(f.Data, g.Data) || (f.Data == nil) != (g.Data == nil) ||
			f.Mode != g.Mode || f.Marked != g.Marked || f.srcUse != g.srcUse || !reflect.DeepEqual(f.Keyed, g.Keyed) {
			return false
		}
	}
	return true
}

// movable reports whether files can move from the folder from to the
// folder to: neither is a file system's root.
func movable(from, to fsys.AbsPath) bool { return from.Dir() != from && to.Dir() != to }

// srcFollows reports whether f's source stays its source when f moves from
// the folder from: the tail of its path that names its source ([File.Src])
// lies below from.
func srcFollows(f *File, from fsys.AbsPath) bool {
	return !f.hasSrc || !from.Contains(f.Path) || int(f.srcTail) <= len(f.Path)-len(from)
}
