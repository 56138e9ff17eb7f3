package apply

import (
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/gcpace"
	"github.com/agentpack/agentpack/internal/workers"
	"github.com/agentpack/agentpack/snapshots"
)

// Deployment is what [Writer.Apply] carries out: a plan of a desired state,
// and what the snapshot record and the target manifests say about it.
type Deployment struct {
	// Desired is the state Plan was computed from. [Writer.Apply] uses it
	// only to build the transaction's writes and lets go of it after, so
	// a caller that lets go of it too lets it be freed while the files are
	// written.
	Desired *desired.State
	// Plan is what is applied; [Writer.Apply] lets go of its lookups once
	// its writes are built ([plan.Plan.Release]): its changes stay.
	Plan *plan.Plan
	// Command names the holder in the journal and the snapshot record.
	Command string
	// Repo and Project are the desired-state repo and the project folder.
	Repo    string
	Project string
	Profile string
	Targets []string
	Machine string
	// State are agentpack's own state files that change with this apply
	// (the roots registry). They are written after the manifests inside
	// the transaction, so a crash or a rollback puts them back with the
	// files they describe.
	State []StateFile
	// Partial applies only the plan's changes (evolve restore): the
	// manifests record those files as desired and keep what they said
	// about every other file, and stale roots are left alone.
	Partial bool
}

// StateFile is one state file of a [Deployment] and the bytes it gets.
type StateFile struct {
	Path fsys.AbsPath
	Data []byte
}

// Apply runs the transaction of SPEC §6 ([Writer.commit]) for d: the
// files, then the target manifests that record them and agentpack's state.
// It returns the snapshot id, or applied=false when neither files nor
// manifests would change.
func (wr *Writer) Apply(d Deployment) (string, bool, error) {
	store := wr.Store
	now := time.Now()
	id := store.NewID(now)
	// The pack is begun when a new manifest is rendered into it, or after.
	var pack *snapshots.Pack
	begin := func() (*snapshots.Pack, error) {
		if pack == nil {
			p, err := wr.newPack(id)
			if err != nil {
				return nil, err
			}
			pack = p
		}
		return pack, nil
	}
	wr.checkpoint("deciding")
	writes, manifests, err := wr.transactionWrites(&d, id, now, begin)
	if err != nil || len(writes) == 0 {
		if pack != nil {
			_ = pack.Close()
			_ = store.DeleteBlobs(id)
		}
		return "", false, err
	}
	// What only the plan and the desired state held is let go of before
	// the pack is saved ([Writer.readManifestsBefore]); the writes hold
	// what the transaction needs of them. Collected now, the writing's
	// heap goal is set from what it holds, not from the plan's garbage (a
	// deploy updating 9,000 of 10,000 files: max RSS 38-41 -> 38-40 MiB).
	d.Plan.Release()
	d.Desired = nil
	gcpace.Between(len(writes))
	rec := &snapshots.Record{ID: id, Kind: snapshots.KindDeploy, CreatedAt: now.UTC(), Command: d.Command,
		Repo: d.Repo, Project: d.Project, Profile: d.Profile, Targets: d.Targets, Machine: d.Machine}
	if _, err := begin(); err != nil {
		return "", false, err
	}
	pack.Expect(len(writes)) // a blob a file written; the bytes an update replaces grow it once
	if err := wr.commit(rec, pack, writes, manifests, nil); err != nil {
		return "", false, err
	}
	// The stat cache records the files written from the plan's changes
	// (one write each, in order) and the few manifests and state files
	// after them, so the writes and the pack their manifests were read
	// from are let go of first. What only the transaction held (the
	// pack's index, the writes, the record's list of files) is garbage
	// now: collected before the stat cache records ten thousand entries
	// and is saved, the heap goal is set from the smaller live set, and
	// the peak is the larger of the two phases, not their sum (cold
	// deploy at 10k: max RSS 43 -> 40 MiB).
	tail := writtenOf(writes[len(writes)-manifests:])
	placed := make([]fsys.StatData, len(d.Plan.Changes))
	for i := range placed {
		placed[i] = writes[i].stat
	}
	recent := placedDistinct(writes)
	gcpace.Between(len(writes))
	wr.cacheWritten(d.Plan.StatCache, d.Plan.Changes, placed, tail, recent)
	return id, true, nil
}

// placedDistinct reports whether every file writes placed told distinct
// stat data ([fsys.Placed.Distinct]), and at least one did: the stat cache
// may then trust them at once. One write that did not (a file system with
// coarse times, or a clock tick falling inside one write's few
// microseconds) and none are trusted until they are old enough: the next
// command reads them.
func placedDistinct(writes []write) bool {
	seen := false
	for i := range writes {
		w := &writes[i]
		if w.noop || w.remove || w.stat.Ino == 0 {
			continue
		}
		if !w.distinct {
			return false
		}
		seen = true
	}
	return seen
}

// undoFailed rolls back a transaction whose write failed with err. When
// that fails too, the error says so: files are half-applied and the journal
// stays for the next command to retry.
func (wr *Writer) undoFailed(err error) error {
	_, rerr := wr.Recover()
	if rerr == nil {
		return err
	}
	ae := apperr.As(err)
	journal := filepath.Join(wr.Store.Dir(), "journal.json")
	out := apperr.Wrap(err, ae.Code, "%s; rolling the partial apply back failed too (%s): files are half-applied and the journal %s is pending",
		ae.Message, apperr.As(rerr).Message, journal).
		WithHint("fix the cause, then run any agentpack command (or `agentpack doctor --fix`): it rolls the partial apply back first")
	for k, v := range ae.Details {
		out = out.With(k, v)
	}
	return out.With("journal", journal).With("journal_posix", filepath.ToSlash(journal)).
		With("rollback_error", apperr.As(rerr).Message).With("reason_code", "apply_half_done")
}

// performAll runs writes on sys: target files first (in parallel: they are
// independent and the disk, not the CPU, is the limit), then the last
// nManifests manifests that record them, calling tick after each target
// file it changes and, when set, wrote with the bytes of each file it
// writes (a transaction saves them in its pack). Apply and dry run share it.
// With prune, the folders its removals empty go too ([emptiedDirs]); a
// restore, which puts back what was there, removes only the folders the
// applies it undoes created.
func (wr *Writer) performAll(sys fsys.System, writes []write, nManifests int, tick func(), wrote func(*write, []byte) error, prune bool) error {
	files, manifests := writes[:len(writes)-nManifests], writes[len(writes)-nManifests:]
	guard := plan.NewLinkGuard(sys)
	errs := make([]error, len(files))
	runs := folderRuns(files)
	workers.Parallel(len(runs)-1, func(r int) {
		var in runFolder
		defer in.close()
		for i := runs[r]; i < runs[r+1]; i++ {
			in.more = i+1 < runs[r+1]
			errs[i] = wr.perform(sys, guard, &files[i], wrote, &in)
			if !files[i].noop {
				tick()
			}
		}
	})
	emptied := newEmptiedDirs()
	for i, err := range errs {
		if err != nil {
			return err
		}
		if prune {
			emptied.removed(files[i])
		}
	}
	// Folders the removals emptied go once all files are done: one look
	// at each folder, not one per file removed from it.
	emptied.prune(sys)
	for i := range manifests {
		if err := wr.perform(sys, guard, &manifests[i], wrote, nil); err != nil {
			return err
		}
		if prune {
			emptied.removed(manifests[i])
		}
	}
	emptied.prune(sys)
	return nil
}

// runFolder is the folder of a run of writes ([folderRuns]), held open
// once a create in it has made sure it exists and more of the run are to
// come: the run's next creates are made by name in it ([fsys.Folder]),
// without walking its path twice each.
type runFolder struct {
	f fsys.Folder
	// more: a write of the run follows the one being performed.
	more bool
	// tried: the folder was opened, or could not be.
	tried bool
}

// create makes w's file with data in the run's folder when it is open,
// else by path, then opens the folder when more of the run may use it.
func (in *runFolder) create(sys fsys.System, w *write, data []byte) (fsys.Placed, error) {
	if in != nil && in.f != nil {
		return in.f.CreateFileStat(w.path().Base(), data, w.mode)
	}
	placed, err := fsys.WriteFileStat(sys, w.path(), data, w.mode, true)
	if err == nil && in != nil && in.more && !in.tried {
		in.tried = true
		in.f = fsys.OpenFolder(sys, w.path().Dir())
	}
	return placed, err
}

func (in *runFolder) close() {
	if in.f != nil {
		_ = in.f.Close()
	}
}

// folderRuns splits files into runs of neighbours in one folder: the
// bounds of run r are out[r] and out[r+1]. One goroutine writes a whole
// run, so goroutines do not queue on one folder's lock.
func folderRuns(files []write) []int {
	out := []int{0}
	for i := 1; i < len(files); i++ {
		if files[i].path().Dir() != files[i-1].path().Dir() {
			out = append(out, i)
		}
	}
	return append(out, len(files))
}

// DryRun runs d's transaction against a recording System and returns what
// [Writer.Apply] would write, in order, without touching the disk or the
// store.
func (wr *Writer) DryRun(d Deployment) ([]fsys.Op, error) {
	writes, manifests, err := wr.transactionWrites(&d, "dry-run", time.Now(), nil)
	if err != nil {
		return nil, err
	}
	sys := fsys.NewDryRunSystem(wr.Sys)
	if err := wr.performAll(sys, writes, manifests, func() {}, nil, true); err != nil {
		return nil, err
	}
	return sys.Ops(), nil
}

// written is a file a transaction wrote (with the hash of its bytes and,
// when the write could tell, the stat data it placed) or removed.
type written struct {
	path   fsys.AbsPath
	sha256 string
	placed fsys.StatData
	remove bool
	// decoded is the manifest cache's form of a target manifest written
	// ([held.decoded]).
	decoded []byte
}

// writtenOf is what each of ws wrote or removed.
func writtenOf(ws []write) []written {
	out := make([]written, len(ws))
	for i := range ws {
		out[i] = ws[i].written()
	}
	return out
}

// written is what w wrote or removed.
func (w *write) written() written {
	out := written{path: w.path(), placed: w.stat, remove: w.remove}
	if !w.remove {
		out.sha256 = w.afterSHA256()
	}
	if w.h != nil {
		out.decoded = w.h.decoded
	}
	return out
}

// cacheWritten records the stat identity of the files just written, those
// of changes (with the stat data their writes placed, where known) and
// then those of tail, so the next status need not re-hash them; cache is
// the one the plan used, if any. A file whose write could not tell is
// looked at. recent: the stat data placed may be trusted however recent
// ([placedDistinct]); otherwise those of the last 100 ms are left out.
func (wr *Writer) cacheWritten(cache *plan.StatCache, changes []plan.Change, placed []fsys.StatData, tail []written, recent bool) {
	if cache == nil {
		cache = plan.LoadStatCache(wr.Sys, fsys.AbsPath(wr.Store.Dir()))
	}
	cache.Expect(len(changes) + len(tail))
	workers.Chunks(len(changes)+len(tail), func(i int) bool {
		var w written
		if i < len(changes) {
			c := &changes[i]
			w = written{path: c.Path, placed: placed[i], remove: c.Op == plan.OpDelete}
			if !w.remove {
				w.sha256 = *c.AfterSHA256
			}
		} else {
			w = tail[i-len(changes)]
		}
		if w.remove {
			cache.Forget(w.path)
			return true
		}
		if w.placed.Ino != 0 {
			cache.Record(w.path, w.placed, w.sha256, recent)
			cache.RecordManifest(w.path, w.placed, w.decoded, recent)
		} else if d, err := fsys.LstatData(wr.Sys, w.path); err == nil {
			cache.Record(w.path, d, w.sha256, false)
		}
		return true
	})
	cache.Save()
}

// perform executes one write or removal of a transaction on sys, after
// checking that no folder below its root is a link, and hands the bytes
// written to wrote (when set). A create goes into in, the folder of its
// run, when that is held open (in may be nil). The folders a removal
// empties are left to [emptiedDirs].
func (wr *Writer) perform(sys fsys.System, guard *plan.LinkGuard, w *write, wrote func(*write, []byte) error, in *runFolder) error {
	if w.noop {
		return nil
	}
	var err error
	switch {
	case w.shared || w.replacesFile():
		// What it replaces or removes is looked at (through the guard)
		// first, and read again unless the look finds it as it was read:
		// an edit made since the plan (or the rollback's read) is never
		// lost.
		err = unchangedSincePlan(sys, guard, w)
	case w.remove:
		err = guard.Check(w.root(), w.path())
	default:
		// The write refuses a link or folder at the path itself.
		err = guard.CheckParents(w.root(), w.path())
	}
	if err != nil {
		return err
	}
	w.stat = fsys.StatData{} // the look's is spent: now what the write places
	if w.remove {
		return sys.Remove(w.path())
	}
	if stream := w.streamer(); stream != nil {
		placed, err := fsys.WriteStreamStat(sys, w.path(), w.mode, stream)
		if err != nil {
			return err
		}
		w.stat, w.distinct = placed.Stat, placed.Distinct
		if wrote != nil {
			return wrote(w, nil)
		}
		return nil
	}
	buf := fsys.GetReadBuf()
	data, err := w.bytes(wr.Sys, *buf)
	if err != nil {
		fsys.PutReadBuf(buf, nil)
		return err
	}
	// Read from the source, data is held by nothing else. Every System
	// copies what it is handed to write (or writes it out) and the pack
	// copies what it saves: nothing keeps data once wrote returns.
	var read []byte
	if w.checked {
		read = data
	}
	defer fsys.PutReadBuf(buf, read)
	// A create (missing when planned) never replaces a file another
	// program made since, in the same step as the write.
	var placed fsys.Placed
	if w.createsFile() {
		placed, err = in.create(sys, w, data)
	} else {
		placed, err = fsys.WriteFileStat(sys, w.path(), data, w.mode, false)
	}
	w.stat, w.distinct = placed.Stat, placed.Distinct
	if errors.Is(err, fs.ErrExist) && w.createsFile() {
		return appearedSincePlan(w)
	} else if err != nil {
		return err
	}
	if wrote != nil {
		return wrote(w, data)
	}
	return nil
}

// appearedSincePlan is the error of a create whose path another program
// took between the plan and the write.
func appearedSincePlan(w *write) error {
	return apperr.New(apperr.DriftConflict, "%s appeared while agentpack was writing it (another program created it); it was left as it is", w.path()).
		WithHint("run the command again: the plan shows the file, which --adopt replaces").
		With("path", w.path().String()).With("path_posix", w.path().ToSlash()).
		With("reason_code", "created_since_plan").With("next_actions", []string{"retry"})
}

// unchangedSincePlan refuses to write or remove a file that changed since
// plan (or a rollback) read it: the other writer's change would be lost.
// A link there (or on the way) is refused, not read through.
func unchangedSincePlan(sys fsys.System, guard *plan.LinkGuard, w *write) error {
	fc := w.fileChange()
	d, err := guard.LstatData(w.root(), w.path())
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	case exists && d.IsDir():
		return apperr.New(apperr.IOInvalidPath, "%s is a folder where agentpack manages a file", w.path()).
			WithHint("move the folder away, then run the command again").With("path", w.path().String())
	case exists && fc.Before != nil && plan.Unchanged(w.stat, d):
		// Its bytes were read (and saved in the snapshot), and nothing
		// wrote it since: not read again.
		return nil
	}
	var sum string
	if exists {
		cur, err := sys.ReadFile(w.path())
		if err != nil {
			return err
		}
		sum = checksum.SHA256Hex(cur)
	}
	switch {
	case !exists && (fc.Before == nil || !w.shared):
		// Nothing there: writing or removing it loses nobody's bytes (a
		// key-level file gone since is rebuilt by the next plan instead).
		return nil
	case fc.Before != nil && exists && sum == fc.Before.SHA256:
		return nil
	}
	return changedSincePlan(w)
}

// changedSincePlan is the error of a write or removal whose file another
// program changed since the plan read it.
func changedSincePlan(w *write) error {
	return apperr.New(apperr.DriftConflict, "%s changed while agentpack was writing it (another program rewrote it); nothing was lost", w.path()).
		WithHint("run the command again: it edits the file as it is now").
		With("path", w.path().String()).With("path_posix", w.path().ToSlash()).
		With("reason_code", "changed_since_plan").With("next_actions", []string{"retry"})
}
