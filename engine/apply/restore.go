package apply

import (
	"bytes"
	"io/fs"
	"slices"
	"time"

	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/workers"
	"github.com/agentpack/agentpack/snapshots"
)

// Restored is what [Writer.Restore] did (on a recording System: would do).
type Restored struct {
	// ID is the rollback's own snapshot ("" for a dry run).
	ID string
	// Changed are the restores that change their path, in order.
	Changed []snapshots.Restore
}

// Restore writes restores as one recorded transaction, a snapshot of its
// own: contents reads their saved bytes, state are agentpack's state files as the rollback leaves them,
// written with the restored manifests; to is the snapshot rolled back to ("" for none), targets the
// targets it covers (nil: those of restores) and undoneDirs the folders the
// undone applies created, removed once empty. Every saved byte is read and
// verified before the first write, so a damaged snapshot changes nothing.
func (wr *Writer) Restore(restores []snapshots.Restore, contents *snapshots.Contents, state []StateFile, to string, targets []string, undoneDirs []string) (*Restored, error) {
	store := wr.Store
	type op struct {
		r snapshots.Restore
		// root and path are r.Root and r.Path.
		root, path fsys.AbsPath
		data       []byte
		cur        []byte
		has        bool
		mode       fs.FileMode // of cur
		// noop: the path already holds the wanted bytes. It is still recorded
		// (Before == After), so this rollback record is authoritative for
		// every path it covers when a later `rollback --to` reads it.
		noop bool
	}
	var ops []op
	guard := plan.NewLinkGuard(wr.Sys)
	// What each path holds now, read in parallel; a link at the path or
	// above it (below its root) is refused, not replaced: a link stays a
	// link, and nothing is read through it.
	actuals := make([]plan.Actual, len(restores))
	errs := make([]error, len(restores))
	workers.Parallel(len(restores), func(i int) {
		root, path := recorded(restores[i].Root, restores[i].Path)
		actuals[i], errs[i] = plan.ReadActual(wr.Sys, guard, nil, root, path, "")
	})
	for i, r := range restores {
		o := op{r: r}
		o.root, o.path = recorded(r.Root, r.Path)
		a, err := actuals[i], errs[i]
		if err != nil {
			return nil, err
		}
		if a.Exists {
			o.cur, o.has, o.mode = a.Data, true, a.Mode
		}
		if r.Content != nil {
			data, err := contents.Read(r.Target, r.Path, r.BlobID, r.Content, o.cur)
			if err != nil {
				return nil, err
			}
			o.data = data
			o.noop = o.has && bytes.Equal(o.cur, data) && o.mode == fs.FileMode(r.Content.Mode).Perm()
		} else if !o.has {
			continue
		}
		ops = append(ops, o)
	}
	for _, f := range state {
		cur, err := wr.Sys.ReadFile(f.Path)
		has := err == nil
		if has && bytes.Equal(cur, f.Data) {
			continue
		}
		content := &snapshots.Content{SHA256: checksum.SHA256Hex(f.Data), Size: int64(len(f.Data)), Mode: 0o600}
		ops = append(ops, op{r: snapshots.Restore{Target: snapshots.StateTarget, Root: f.Path.Dir().String(), Path: f.Path.String(), Manifest: true, Content: content},
			root: f.Path.Dir(), path: f.Path, data: f.Data, cur: cur, has: has, mode: wr.modeOf(f.Path)})
	}
	now := time.Now()
	id := store.NewID(now)
	rec := &snapshots.Record{ID: id, Kind: snapshots.KindRollback, CreatedAt: now.UTC(), Command: "rollback", Targets: targetsOf(restores, targets)}
	if to != "" {
		rec.RolledBackTo = &to
	}
	// The same transaction as a deploy's: files first, then the manifests
	// and state files that describe them.
	var files, tail []write
	out := &Restored{ID: id}
	for _, o := range ops {
		w := write{change: snapshots.FileChange{Target: o.r.Target, Root: o.r.Root, Path: o.r.Path, Manifest: o.r.Manifest, After: o.r.Content},
			root: o.root, path: o.path, data: o.data, noop: o.noop, remove: o.r.Content == nil}
		if o.has {
			w.before = o.cur
			w.change.Before = &snapshots.Content{SHA256: checksum.SHA256Hex(o.cur), Size: int64(len(o.cur)), Mode: uint32(o.mode)}
		}
		switch {
		case o.r.Content == nil:
			w.change.Op = plan.OpDelete
		case o.has:
			w.change.Op = plan.OpUpdate
		default:
			w.change.Op = plan.OpCreate
		}
		if o.r.Content != nil {
			w.mode = fs.FileMode(o.r.Content.Mode)
		}
		if o.r.Manifest {
			tail = append(tail, w)
		} else {
			files = append(files, w)
		}
		if !o.noop {
			out.Changed = append(out.Changed, o.r)
		}
	}
	if err := wr.commit(rec, append(files, tail...), len(tail), undoneDirs); err != nil {
		return nil, err
	}
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
