package apply

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/snapshots"
)

// recoveryStep is what recovery does to one path of an interrupted apply.
type recoveryStep struct {
	f      snapshots.FileChange
	data   []byte // the pre-apply bytes to write back; nil with remove
	remove bool
}

// keptEdit is a path edited after the crash: recovery keeps it and records
// its pre-apply bytes in a snapshot, so neither version is lost. notFile
// says a link or folder is there now (or a link on the way): why says so,
// and only the pre-apply bytes are recorded.
type keptEdit struct {
	f        snapshots.FileChange
	pre, cur []byte
	curMode  fs.FileMode
	notFile  bool
	why      string
}

// Recover rolls back an interrupted apply found in the journal. The caller
// holds the state lock. It returns warnings describing what it did.
//
// Every decision is made, and every saved byte read and verified, before the
// first write: a damaged snapshot changes nothing. A path is put back only
// when it still holds what the apply found (Before) or wrote (After), or is
// missing; a path edited since the crash is kept, and its pre-apply bytes go
// into a recovery snapshot that `rollback --last` can bring back. Running it
// again after a second crash finds the same answers, so it is idempotent.
func (wr *Writer) Recover() ([]string, error) {
	store := wr.Store
	j, err := store.ReadJournal()
	if err != nil {
		if !wr.BestEffort || apperr.CodeOf(err) != apperr.IOFailed {
			return nil, err
		}
		to, serr := store.SetAsideJournal(time.Now())
		if serr != nil {
			return nil, serr
		}
		return []string{fmt.Sprintf("the apply journal was damaged and had no readable copy; moved it to %s. Files an interrupted apply touched may be half-applied: `agentpack status` shows them", to)}, nil
	}
	if j == nil {
		return nil, nil
	}
	var warnings []string
	if j.CopyPath != "" {
		warnings = append(warnings, fmt.Sprintf("state/journal.json was damaged; recovered from its copy %s", j.CopyPath))
	}
	if _, err := store.Load(j.ID); err == nil {
		// The record was saved: the apply finished; only the journal is left.
		return warnings, wr.finishRecovery(store, j)
	}
	steps, kept, ws, err := wr.recoverySteps(store, j)
	warnings = append(warnings, ws...)
	if err != nil {
		return nil, err
	}
	if len(kept) > 0 {
		id, err := wr.saveKeptEdits(store, j, kept)
		if err != nil {
			return nil, err
		}
		for _, k := range kept {
			if k.notFile {
				warnings = append(warnings, fmt.Sprintf("left %s as it is: %s; the bytes it had before the interrupted apply are saved in snapshot %s (`agentpack rollback --last` brings them back once no link or folder is in the way)", k.f.Path, k.why, id))
				continue
			}
			warnings = append(warnings, fmt.Sprintf("kept %s: it was edited after the interrupted apply; its previous bytes are saved in snapshot %s (`agentpack rollback --last` brings them back)", k.f.Path, id))
		}
	}
	guard := plan.NewLinkGuard(wr.Sys)
	for _, s := range steps {
		root, path := recorded(s.f.Root, s.f.Path)
		if err := guard.Check(root, path); err != nil {
			return nil, err
		}
		if s.remove {
			if err := wr.Sys.Remove(path); err != nil {
				return nil, err
			}
			continue
		}
		if err := wr.Sys.WriteFile(path, s.data, fs.FileMode(s.f.Before.Mode)); err != nil {
			return nil, err
		}
	}
	for _, f := range j.Files {
		wr.removeTempFiles(guard, f)
	}
	// Only the folders the interrupted apply created go, once empty: a
	// folder that was there before it stays, as everything else does.
	removeEmptyCreatedDirs(wr.Sys, j.CreatedDirs)
	warnings = append([]string{fmt.Sprintf("recovered from an interrupted %q (pid %d, started %s): put back %d file(s) as they were before it",
		j.Command, j.PID, j.StartedAt.Format(time.RFC3339), len(steps))}, warnings...)
	return warnings, wr.finishRecovery(store, j)
}

// recoverySteps decides each path's fate and reads the bytes it needs. In
// best-effort mode (doctor --fix), a path whose saved bytes are damaged is
// left as it is with a warning instead of stopping everything.
func (wr *Writer) recoverySteps(store *snapshots.Store, j *snapshots.Journal) (steps []recoveryStep, kept []keptEdit, warnings []string, err error) {
	guard := plan.NewLinkGuard(wr.Sys)
	contents := store.Contents(nil)
	defer contents.Close()
	contents.Add(j.ID, j.Files)
	for i := len(j.Files) - 1; i >= 0; i-- {
		f := j.Files[i]
		root, path := recorded(f.Root, f.Path)
		a, aerr := plan.ReadActual(wr.Sys, guard, nil, root, path, "")
		// A link or a folder there now, or a link on the way: the apply
		// never makes either, so someone else did. Not ours to replace,
		// and nothing is written through a link; the other paths are
		// still put back.
		notFile := apperr.CodeOf(aerr) == apperr.IOInvalidPath
		switch {
		case notFile && f.Before == nil:
			warnings = append(warnings, fmt.Sprintf("left %s as it is: %s", f.Path, apperr.As(aerr).Message))
			continue
		case aerr != nil && !notFile:
			return nil, nil, nil, aerr
		}
		wrote := f.After != nil && a.Exists && a.SHA256 == f.After.SHA256
		if f.Before == nil {
			switch {
			case wrote:
				steps = append(steps, recoveryStep{f: f, remove: true})
			case a.Exists:
				// Not ours to delete: someone created it after the crash.
				warnings = append(warnings, fmt.Sprintf("kept %s: it did not exist before the interrupted apply and now holds bytes that apply did not write", f.Path))
			}
			continue
		}
		untouched := a.Exists && a.SHA256 == f.Before.SHA256
		if untouched && a.Mode == fs.FileMode(f.Before.Mode).Perm() {
			continue
		}
		pre, err := contents.Read(f.Target, f.Path, j.ID, f.Before, a.Data)
		if err == nil && notFile {
			// Left as it is, its pre-apply bytes kept in a snapshot.
			kept = append(kept, keptEdit{f: f, pre: pre, notFile: true, why: apperr.As(aerr).Message})
			continue
		}
		if err != nil {
			if !wr.BestEffort {
				return nil, nil, nil, apperr.As(err).WithHint("nothing was changed; run `agentpack doctor --fix` to put back every file whose saved bytes are intact and leave the others as they are")
			}
			warnings = append(warnings, fmt.Sprintf("left %s as it is: its saved bytes are damaged (%v)", f.Path, err))
			continue
		}
		if !a.Exists || untouched || wrote {
			steps = append(steps, recoveryStep{f: f, data: pre})
			continue
		}
		kept = append(kept, keptEdit{f: f, pre: pre, cur: a.Data, curMode: a.Mode})
	}
	return steps, kept, warnings, nil
}

// saveKeptEdits records the kept paths as a snapshot whose Before is the
// pre-apply bytes and whose After is the edit on disk. A second recovery of
// the same journal finds its record and does not make another.
func (wr *Writer) saveKeptEdits(store *snapshots.Store, j *snapshots.Journal, kept []keptEdit) (string, error) {
	command := "recover " + j.ID
	latest, err := store.Latest()
	if err != nil {
		return "", err
	}
	if latest != nil && latest.Command == command {
		return latest.ID, nil
	}
	now := time.Now()
	id := store.NewID(now)
	rec := &snapshots.Record{ID: id, Kind: snapshots.KindRollback, CreatedAt: now.UTC(), Command: command, Targets: []string{}}
	if latest != nil {
		rec.RolledBackTo = &latest.ID
	}
	var blobs [][]byte
	for _, k := range kept {
		fc := snapshots.FileChange{Target: k.f.Target, Root: k.f.Root, Path: k.f.Path, Op: plan.OpUpdate, Manifest: k.f.Manifest, Before: k.f.Before.Plain(),
			After: &snapshots.Content{SHA256: checksum.SHA256Hex(k.cur), Size: int64(len(k.cur)), Mode: uint32(k.curMode)}}
		blobs = append(blobs, k.pre)
		if k.notFile {
			// No file there now: rolling this back puts the bytes back
			// once the link or folder is gone.
			fc.Op, fc.After = plan.OpDelete, nil
		} else {
			blobs = append(blobs, k.cur)
		}
		rec.Files = append(rec.Files, fc)
		if k.f.Target != snapshots.StateTarget && !slices.Contains(rec.Targets, k.f.Target) {
			rec.Targets = append(rec.Targets, k.f.Target)
		}
	}
	if _, err := store.SavePack(id, blobs); err != nil {
		return "", err
	}
	return id, store.Save(rec)
}

// finishRecovery drops the interrupted apply's saved bytes, the journal and
// whatever else crashed writes left in the state folder.
func (wr *Writer) finishRecovery(store *snapshots.Store, j *snapshots.Journal) error {
	if _, err := store.Load(j.ID); err != nil {
		if err := store.DeleteBlobs(j.ID); err != nil {
			return err
		}
	}
	if err := store.RemoveJournal(); err != nil {
		return err
	}
	store.RemoveJournalCopy(j.ID)
	_, err := store.CleanLeftovers()
	return err
}

// removeTempFiles deletes the temp files a crashed write left next to f,
// unless the folder is reached through a link.
func (wr *Writer) removeTempFiles(guard *plan.LinkGuard, f snapshots.FileChange) {
	root, path := recorded(f.Root, f.Path)
	dir := path.Dir()
	if dir != root && guard.Check(root, dir) != nil {
		return
	}
	entries, _ := wr.Sys.ReadDir(dir)
	for _, ent := range entries {
		if strings.HasPrefix(ent.Name(), fsys.TempPrefix) && ent.Type().IsRegular() {
			_ = wr.Sys.Remove(dir.JoinName(ent.Name()))
		}
	}
}
