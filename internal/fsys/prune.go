package fsys

import (
	"slices"
	"time"
)

// PruneOldest removes the entries of dir past the keep most recently
// changed, kept (an entry just written) being one of the keep and never
// removed. stamp picks the entries that count, returning the path whose
// modification time ages the entry (the entry itself, or a file in it);
// an entry whose stamp cannot be read is left alone. A removal that fails
// only leaves more behind.
func PruneOldest(sys System, dir AbsPath, keep int, kept AbsPath, stamp func(name string) (AbsPath, bool)) {
	ents, err := sys.ReadDir(dir)
	if err != nil || len(ents) <= keep {
		return
	}
	type aged struct {
		path AbsPath
		mod  time.Time
	}
	var old []aged
	for _, ent := range ents {
		p := dir.JoinName(ent.Name())
		at, ok := stamp(ent.Name())
		if !ok || p == kept {
			continue
		}
		if fi, err := sys.Lstat(at); err == nil {
			old = append(old, aged{p, fi.ModTime()})
		}
	}
	slices.SortFunc(old, func(a, b aged) int { return a.mod.Compare(b.mod) })
	for _, e := range old[:max(0, len(old)-(keep-1))] {
		_ = sys.RemoveAll(e.path)
	}
}
