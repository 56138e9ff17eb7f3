package apply

import (
	"os"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/snapshots"
)

// commit runs the transaction of SPEC §6 that deploys and rollbacks share:
// it saves the bytes every path had and gets in one pack (one write,
// however many files), writes the journal, performs writes (files, then the
// last nTail manifests and state files), removes the undone folders that
// are empty again, saves rec (its Files and CreatedDirs filled in here) and
// drops the journal. A failed write rolls everything back. Before bytes
// undo the transaction; After bytes let `rollback --to` return to exactly
// what it wrote, even after a later hand edit. A noop write is recorded,
// not performed.
func (wr *Writer) commit(rec *snapshots.Record, writes []write, nTail int, undoneDirs []string) error {
	store := wr.Store
	var blobs [][]byte
	for _, w := range writes {
		if w.change.Before != nil {
			blobs = append(blobs, w.before)
		}
		if w.data != nil && !w.noop {
			blobs = append(blobs, w.data)
		}
	}
	if _, err := store.SavePack(rec.ID, blobs); err != nil {
		_ = store.DeleteBlobs(rec.ID)
		return apperr.Wrap(err, apperr.IOFailed, "cannot save snapshot bytes").WithHint("check free space under %s", store.Dir())
	}
	wr.checkpoint("pack saved")
	paths := make([]fsys.AbsPath, 0, len(writes))
	rec.Files = make([]snapshots.FileChange, 0, len(writes))
	for _, w := range writes {
		rec.Files = append(rec.Files, w.change)
		if w.data != nil && !w.noop {
			paths = append(paths, w.path)
		}
	}
	rec.CreatedDirs = createdDirs(wr.Sys, paths)
	j := &snapshots.Journal{ID: rec.ID, Command: rec.Command, PID: os.Getpid(), StartedAt: rec.CreatedAt, Files: rec.Files, CreatedDirs: rec.CreatedDirs}
	if err := store.WriteJournal(j); err != nil {
		_ = store.DeleteBlobs(rec.ID)
		return err
	}
	wr.checkpoint("journal written")
	if err := wr.performAll(wr.Sys, writes, nTail); err != nil {
		return wr.undoFailed(err)
	}
	// Folders the undone applies created go too, once nothing is left in them.
	removeEmptyCreatedDirs(wr.Sys, undoneDirs)
	wr.checkpoint("files written")
	if err := store.Save(rec); err != nil {
		return wr.undoFailed(err)
	}
	wr.checkpoint("record saved")
	if err := store.RemoveJournal(); err != nil {
		return err
	}
	wr.checkpoint("journal removed")
	return nil
}
