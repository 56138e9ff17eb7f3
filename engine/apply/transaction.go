package apply

import (
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/workers"
	"github.com/agentpack/agentpack/snapshots"
)

// commit runs the transaction of SPEC §6 that deploys and rollbacks share:
// it saves the bytes every path has in the snapshot's pack, writes the
// journal, performs writes (files, then the last nTail manifests and state
// files) adding the bytes each file gets to the pack as it is written,
// removes the undone folders that are empty again, commits the pack, saves
// rec (its Files and CreatedDirs filled in here) and drops the journal. A
// failed write rolls everything back. Before bytes undo the transaction;
// After bytes let `rollback --to` return to exactly what it wrote, even
// after a later hand edit. A noop write is recorded, not performed. A
// target manifest's bytes are saved as deltas ([savedBytes]), so a small
// deploy saves a small pack. No file's bytes are held longer than it takes
// to write them.
//
// pack is rec's pack ([Writer.newPack]), begun by the caller, who may have
// added bytes already; commit ends it, and on a failure drops it.
func (wr *Writer) commit(rec *snapshots.Record, pack *snapshots.Pack, writes []write, nTail int, undoneDirs []string) error {
	store := wr.Store
	wr.checkpoint("planned")
	if err := wr.savePack(pack, writes); err != nil {
		_ = pack.Close()
		_ = store.DeleteBlobs(rec.ID)
		return err
	}
	wr.checkpoint("pack saved")
	paths := make([]fsys.AbsPath, 0, len(writes))
	for _, w := range writes {
		if !w.remove && !w.noop {
			paths = append(paths, w.path())
		}
	}
	rec.CreatedDirs = createdDirs(wr.Sys, paths)
	j := &snapshots.Journal{ID: rec.ID, Command: rec.Command, PID: os.Getpid(), StartedAt: rec.CreatedAt, CreatedDirs: rec.CreatedDirs}
	if err := store.WriteJournalFiles(j, filesOf(writes, nil)); err != nil {
		_ = pack.Close()
		_ = store.DeleteBlobs(rec.ID)
		return err
	}
	wr.checkpoint("journal written")
	changing := 0
	for _, w := range writes[:len(writes)-nTail] {
		if !w.noop {
			changing++
		}
	}
	// In durable mode the files are flushed together by one barrier, not
	// one fsync each, and before the record says they were written: a
	// crash never leaves a record of bytes that did not reach the disk.
	sys, barrier := fsys.Batched(wr.Sys)
	saveAfter := func(w *write, data []byte) error {
		if w.planned != nil {
			w.afterSize = int64(len(data))
			if sum, ok := checksum.ParseSHA256Hex(*w.planned.AfterSHA256); w.checked && ok {
				return pack.AddSum(data, sum)
			}
		} else if w.change.Manifest {
			return nil // saved with the Before bytes ([savedBytes])
		} else {
			w.change.After.Size = int64(len(data))
		}
		_, err := pack.Add(data)
		return err
	}
	if err := wr.performAll(sys, writes, nTail, wr.progress(changing), saveAfter, rec.Kind != snapshots.KindRollback); err != nil {
		_ = pack.Close()
		return wr.undoFailed(err)
	}
	// Folders the undone applies created go too, once nothing is left in
	// them (a rollback removes no other folder: one that was there before
	// the apply it undoes, empty or made by the user, stays).
	removeEmptyCreatedDirs(sys, undoneDirs)
	if err := pack.Close(); err != nil {
		return wr.undoFailed(packFailed(err, store))
	}
	if err := barrier(); err != nil {
		return wr.undoFailed(err)
	}
	wr.checkpoint("files written")
	// The record lists what the journal listed (with the sizes of the
	// bytes loaded as they were written), sorted as records are; like the
	// journal's, its files are made from the writes as they are written,
	// so no list of 100,000 is held (rec.Files stays empty).
	if err := store.SaveFiles(rec, filesOf(writes, recordOrder(writes))); err != nil {
		return wr.undoFailed(err)
	}
	wr.checkpoint("record saved")
	if err := store.RemoveJournal(); err != nil {
		return err
	}
	store.RemoveJournalCopy(rec.ID)
	wr.checkpoint("journal removed")
	return nil
}

// filesOf is the change of each of writes, in order, or in the order of
// the indexes order lists when it is set, made as it is asked for.
func filesOf(writes []write, order []int32) snapshots.Files {
	return snapshots.Files{N: len(writes), At: func(i int) snapshots.FileChange {
		if order != nil {
			i = int(order[i])
		}
		return writes[i].fileChange()
	}}
}

// recordOrder is the indexes of writes in the order a record lists their
// files ([snapshots.CompareFiles]).
func recordOrder(writes []write) []int32 {
	order := make([]int32, len(writes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		wa, wb := &writes[a], &writes[b]
		return snapshots.CompareFiles(wa.target(), string(wa.path()), wb.target(), string(wb.path()))
	})
	return order
}

// newPack begins snapshot id's pack.
func (wr *Writer) newPack(id string) (*snapshots.Pack, error) {
	pack, err := wr.Store.NewPack(id)
	if err != nil {
		_ = wr.Store.DeleteBlobs(id)
		return nil, packFailed(err, wr.Store)
	}
	return pack, nil
}

func packFailed(err error, store *snapshots.Store) error {
	return apperr.Wrap(err, apperr.IOFailed, "cannot save snapshot bytes").WithHint("check free space under %s", store.Dir())
}

// savePack adds to pack what undoing writes needs (the bytes each path
// has: [Writer.savePlannedBefore], [savedBytes]) and commits it, so it is
// on disk before the journal names it. Each Before is let go once saved, and so are the new bytes of
// a large manifest rendered for the transaction and saved whole: they are
// copied from the pack when the manifest is written, after the target
// files, rather than held (a manifest of 100,000 files is 18 MB).
func (wr *Writer) savePack(pack *snapshots.Pack, writes []write) error {
	if err := wr.readManifestsBefore(writes); err != nil {
		return err
	}
	// The bytes plans' changes replace are read again (a plan keeps
	// their hashes), on every CPU: 9,000 files of 9 KB one after the
	// other took 180 ms.
	guard := plan.NewLinkGuard(wr.Sys)
	var failed firstError
	workers.Parallel(len(writes), func(i int) {
		if err := wr.savePlannedBefore(pack, guard, &writes[i]); err != nil {
			failed.set(i, err)
		}
	})
	if failed.err != nil {
		return failed.err
	}
	for i := range writes {
		w := &writes[i]
		for _, b := range savedBytes(w) {
			if _, err := pack.Add(b); err != nil {
				return packFailed(err, wr.Store)
			}
		}
		if w.h == nil {
			continue
		}
		w.h.before = nil
		if w.rendered && !w.noop && len(w.h.data) >= deltaMin && w.change.After.Delta == nil {
			sha := w.change.After.SHA256
			w.h.data, w.h.stream = nil, func(out io.Writer) error { return pack.CopyTo(sha, out) }
		}
	}
	if err := pack.Commit(); err != nil {
		return packFailed(err, wr.Store)
	}
	return nil
}

// readManifestsBefore reads the target manifests writes replace, left
// unread until the plan was let go of ([held.readBefore]), so that a
// manifest of 100,000 files and the plan that listed them are not held at
// once; when they are large, what the plan held is collected first (a
// deploy of 1% at 100,000 files: max RSS 121-122 -> 100-115 MiB).
func (wr *Writer) readManifestsBefore(writes []write) error {
	var size int64
	for i := range writes {
		if w := &writes[i]; w.h != nil && w.h.readBefore {
			size += w.change.Before.Size
		}
	}
	if size >= collectBefore {
		runtime.GC()
	}
	for i := range writes {
		w := &writes[i]
		if w.h == nil || !w.h.readBefore {
			continue
		}
		before, err := wr.Sys.ReadFile(w.path())
		if err != nil {
			return err
		}
		w.h.before, w.h.readBefore = before, false
		w.change.Before = &snapshots.Content{SHA256: checksum.SHA256Hex(before), Size: int64(len(before)), Mode: uint32(wr.modeOf(w.path()))}
	}
	return nil
}

// collectBefore is the size of the manifests to read from which what the
// plan held is collected first: a collection costs about what reading
// that much does.
const collectBefore = 8 << 20

// savePlannedBefore saves in pack the bytes a plan's change replaces:
// those it holds, or, as a plan holds only their hash unless it shows
// them, the file's, read now through guard and checked against that hash
// (a file edited since the plan is refused, as its write would be). One
// file's bytes are held at a time.
func (wr *Writer) savePlannedBefore(pack *snapshots.Pack, guard *plan.LinkGuard, w *write) error {
	c := w.planned
	if c == nil || c.BeforeSHA256 == nil || w.beforeSaved {
		return nil
	}
	var err error
	if data := c.Before(); data != nil {
		w.beforeSize = int64(len(data))
		_, err = pack.Add(data)
	} else {
		data, seen, rerr := c.ReadBefore(wr.Sys, guard)
		sum, ok := checksum.ParseSHA256Hex(*c.BeforeSHA256)
		switch {
		case apperr.CodeOf(rerr) == apperr.DriftConflict || rerr == nil && !ok:
			return changedSincePlan(w)
		case rerr != nil:
			return rerr
		}
		w.beforeSize, w.stat = int64(len(data)), seen
		err = pack.AddSum(data, sum) // just hashed
	}
	if err != nil {
		return packFailed(err, wr.Store)
	}
	return nil
}

// deltaMin is the size from which a manifest's bytes are saved as deltas.
const deltaMin = 4 << 10

// savedBytes returns the blobs w's change saves before any file is
// written and sets its contents to match: the bytes it replaces, and a
// manifest's or state file's new bytes; a target file's new bytes are
// saved as it is written ([Writer.commit]). A manifest or state file that
// is updated saves two deltas (undo: after → before, redo: before → after)
// instead of both texts whole when they are less than half the size: a
// manifest lists every file of its root, but a deploy changes few of its
// lines (one whose plan changes half its entries or more is not even
// compared: its new text was rendered into the pack, [mostChanged]). The
// disk holds the after bytes, so undo rebuilds the before bytes from it;
// a rollback further back chains the undos of the newer snapshots.
// Contents read from older records are copied without their deltas: these
// bytes are saved here. A plan's target file has no contents to copy: its
// record is made from the change when asked for.
func savedBytes(w *write) [][]byte {
	if w.planned != nil {
		return nil // [Writer.savePlannedBefore]
	}
	w.change.Before, w.change.After = w.change.Before.Plain(), w.change.After.Plain()
	var out [][]byte
	before, data := w.beforeBytes(), w.data()
	if w.change.Before != nil && !w.beforeSaved {
		out = append(out, before)
	}
	if w.remove || w.noop || !w.change.Manifest || w.streamer() != nil {
		return out // a streamed manifest's bytes are in the pack already
	}
	if w.change.Before == nil || len(before)+len(data) < deltaMin || w.h != nil && w.h.whole {
		return append(out, data)
	}
	undo, redo := snapshots.ComputeDelta(data, before), snapshots.ComputeDelta(before, data)
	if len(undo)+len(redo) >= (len(before)+len(data))/2 {
		return append(out, data)
	}
	w.change.Before.Delta = &snapshots.DeltaRef{Base: w.change.After.SHA256, SHA256: checksum.SHA256Hex(undo)}
	w.change.After.Delta = &snapshots.DeltaRef{Base: w.change.Before.SHA256, SHA256: checksum.SHA256Hex(redo)}
	return [][]byte{undo, redo}
}
