package apply

import (
	"bytes"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/snapshots"
)

// Restored is what [Writer.Restore] did, or with dryRun would do.
type Restored struct {
	// ID is the rollback's own snapshot ("" for a dry run).
	ID string
	// Changed are the restores that change their path, in order.
	Changed []snapshots.Restore
}

// Restore writes restores as one recorded transaction, a snapshot of its
// own: to is the snapshot rolled back to ("" for none), targets the
// targets it covers (nil: those of restores) and undoneDirs the folders the
// undone applies created, removed once empty. Every saved byte is read and
// verified before the first write, so a damaged snapshot changes nothing.
// With dryRun it writes nothing.
func (wr *Writer) Restore(restores []snapshots.Restore, to string, targets []string, dryRun bool, undoneDirs []string) (*Restored, error) {
	store := wr.Store
	type op struct {
		r snapshots.Restore
		// root and path are r.Root and r.Path.
		root, path fsys.AbsPath
		data       []byte
		cur        []byte
		has        bool
		// noop: the path already holds the wanted bytes. It is still recorded
		// (Before == After), so this rollback record is authoritative for
		// every path it covers when a later `rollback --to` reads it.
		noop bool
	}
	var ops []op
	guard := plan.NewLinkGuard(wr.Sys)
	for _, r := range restores {
		o := op{r: r}
		o.root, o.path = recorded(r.Root, r.Path)
		// A link at the path or above it (below its root) is refused, not
		// replaced: a link stays a link, and nothing is read through it.
		a, err := plan.ReadActual(wr.Sys, guard, nil, o.root, o.path, "")
		if err != nil {
			return nil, err
		}
		if a.Exists {
			o.cur, o.has = a.Data, true
		}
		if r.Content != nil {
			data, err := store.ReadBlob(r.BlobID, r.Content.SHA256)
			if err != nil {
				return nil, err
			}
			o.data = data
			o.noop = o.has && bytes.Equal(o.cur, data) && wr.modeOf(o.path) == fs.FileMode(r.Content.Mode).Perm()
		} else if !o.has {
			continue
		}
		ops = append(ops, o)
	}
	if dryRun {
		out := &Restored{}
		for _, o := range ops {
			if !o.noop {
				out.Changed = append(out.Changed, o.r)
			}
		}
		return out, nil
	}
	now := time.Now()
	id := store.NewID(now)
	rec := &snapshots.Record{ID: id, Kind: snapshots.KindRollback, CreatedAt: now.UTC(), Command: "rollback", Targets: targetsOf(restores, targets)}
	if to != "" {
		rec.RolledBackTo = &to
	}
	out := &Restored{ID: id}
	var blobs [][]byte
	for _, o := range ops {
		if o.has {
			blobs = append(blobs, o.cur)
		}
		if o.data != nil && !o.noop {
			blobs = append(blobs, o.data)
		}
	}
	if _, err := store.SavePack(id, blobs); err != nil {
		_ = store.DeleteBlobs(id)
		return nil, err
	}
	wr.checkpoint("pack saved")
	for _, o := range ops {
		fc := snapshots.FileChange{Target: o.r.Target, Root: o.r.Root, Path: o.r.Path, Manifest: o.r.Manifest}
		if o.has {
			fc.Before = &snapshots.Content{SHA256: checksum.SHA256Hex(o.cur), Size: int64(len(o.cur)), Mode: uint32(wr.modeOf(o.path))}
		}
		fc.After = o.r.Content
		switch {
		case o.r.Content == nil:
			fc.Op = plan.OpDelete
		case o.has:
			fc.Op = plan.OpUpdate
		default:
			fc.Op = plan.OpCreate
		}
		rec.Files = append(rec.Files, fc)
	}
	var paths []fsys.AbsPath
	for _, o := range ops {
		if o.r.Content != nil && !o.noop {
			paths = append(paths, o.path)
		}
	}
	rec.CreatedDirs = createdDirs(wr.Sys, paths)
	j := &snapshots.Journal{ID: id, Command: "rollback", PID: os.Getpid(), StartedAt: now.UTC(), Files: rec.Files, CreatedDirs: rec.CreatedDirs}
	if err := store.WriteJournal(j); err != nil {
		_ = store.DeleteBlobs(id)
		return nil, err
	}
	wr.checkpoint("journal written")
	changing := 0
	for _, o := range ops {
		if !o.noop {
			changing++
		}
	}
	tick := wr.progress(changing)
	for _, o := range ops {
		if o.noop {
			continue
		}
		tick()
		err := guard.Check(o.root, o.path)
		switch {
		case err != nil:
		case o.r.Content == nil:
			err = wr.Sys.Remove(o.path)
			pruneEmptyDirs(wr.Sys, o.path.Dir(), o.root)
		default:
			err = wr.Sys.WriteFile(o.path, o.data, fs.FileMode(o.r.Content.Mode))
		}
		out.Changed = append(out.Changed, o.r)
		if err != nil {
			return nil, wr.undoFailed(err)
		}
	}
	// Folders the undone applies created go too, once nothing is left in them.
	removeEmptyCreatedDirs(wr.Sys, undoneDirs)
	wr.checkpoint("files written")
	if err := store.Save(rec); err != nil {
		return nil, wr.undoFailed(err)
	}
	wr.checkpoint("record saved")
	if err := store.RemoveJournal(); err != nil {
		return nil, err
	}
	wr.checkpoint("journal removed")
	return out, nil
}

// targetsOf is the targets a rollback record names: the filter, else
// those of restores.
func targetsOf(restores []snapshots.Restore, filter []string) []string {
	if len(filter) > 0 {
		return filter
	}
	var out []string
	for _, r := range restores {
		if !slices.Contains(out, r.Target) {
			out = append(out, r.Target)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}
