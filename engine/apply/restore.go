package apply

import (
	"bytes"
	"io/fs"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/gcpace"
	"github.com/agentpack/agentpack/internal/workers"
	"github.com/agentpack/agentpack/snapshots"
)

// Restored is what [Writer.Restore] did (on a recording System: would do).
type Restored struct {
	// ID is the rollback's own snapshot ("" for a dry run).
	ID string
	// Changed are the changes of the paths the rollback changed, in order
	// (their Before left out: the record holds it). A nil After is a
	// removal.
	Changed []*snapshots.FileChange
}

// Restore writes restores as one recorded transaction, a snapshot of its
// own: contents reads their saved bytes, state are agentpack's state files as the rollback leaves them,
// written with the restored manifests; to is the snapshot rolled back to ("" for none), targets the
// targets it covers (nil: those of restores) and undoneDirs the folders the
// undone applies created, removed once empty. Every saved byte is read and
// verified before the first write, so a damaged snapshot changes nothing.
// What each path holds now goes into the rollback's pack as it is read,
// and the bytes restored are held only up to [restoreHeld] in all: past
// that, a file's are read again, from the pack that was just checked, when
// it is written. restores is not read after the writes are made from it,
// so a caller that lets go of it lets its memory go.
func (wr *Writer) Restore(restores []snapshots.Restore, contents *snapshots.Contents, state []StateFile, to string, targets []string, undoneDirs []string) (*Restored, error) {
	store := wr.Store
	// A large rollback holds its writes (~420 bytes a file) from the reads
	// to the record while every file read or removed makes garbage: paced
	// as a deploy of as many files is (100k files: RSS ~125 -> ~104 MiB).
	gcpace.ForFiles(len(restores))
	now := time.Now()
	id := store.NewID(now)
	pack, err := wr.newPack(id)
	if err != nil {
		return nil, err
	}
	pack.Expect(len(restores)) // at most the bytes each file replaces
	rec := &snapshots.Record{ID: id, Kind: snapshots.KindRollback, CreatedAt: now.UTC(), Command: "rollback", Targets: targetsOf(restores, targets)}
	if to != "" {
		rec.RolledBackTo = &to
	}
	ws, err := wr.restoreWrites(restores, contents, pack, len(state))
	if err != nil {
		_ = pack.Close()
		_ = store.DeleteBlobs(id)
		return nil, err
	}
	// The same transaction as a deploy's: files first, then the manifests
	// and state files that describe them (moved behind the files in place:
	// no second list of the writes is made).
	ws = wr.restoreState(ws, state)
	wholeManifests(ws)
	nTail := manifestsLast(ws)
	if err := wr.commit(rec, pack, ws, nTail, undoneDirs); err != nil {
		return nil, err
	}
	out := &Restored{ID: id}
	n := 0
	for i := range ws {
		if !ws[i].noop {
			n++
		}
	}
	out.Changed = make([]*snapshots.FileChange, 0, n)
	done := make([]written, 0, n)
	for i := range ws {
		if w := &ws[i]; !w.noop {
			w.change.Before = nil
			out.Changed = append(out.Changed, w.change)
			done = append(done, w.written())
		}
	}
	wr.cacheRestored(done, placedDistinct(ws))
	return out, nil
}

// PreviewRestore returns the changes [Writer.Restore] would make of
// restores, in its order, from the same reads and checks: each file to be
// replaced or removed is read through the link guard and each saved byte
// to be put back is read from its snapshot and verified. Nothing is held,
// saved or written: no pack, journal, record or file, on any System. A
// rollback's dry run and the preview an interactive rollback shows before
// it asks are this: running the whole transaction on a recording System
// held and "wrote" what it never showed (10,000 files: 0.85 s and 86 MiB
// against 0.46 s and 32 MiB for the rollback itself).
func (wr *Writer) PreviewRestore(restores []snapshots.Restore, contents *snapshots.Contents) ([]*snapshots.FileChange, error) {
	ws, err := wr.restoreWrites(restores, contents, nil, 0)
	if err != nil {
		return nil, err
	}
	var out []*snapshots.FileChange
	for i := range ws {
		if w := &ws[i]; !w.noop {
			w.change.Before = nil
			out = append(out, w.change)
		}
	}
	return out, nil
}

// cacheRestored records done, what a rollback wrote or removed, as a
// deploy records what it writes ([Writer.cacheWritten]; recent as there),
// in the stat cache of every scope covering each path: the next status,
// whatever roots it plans for, need not read and hash every file put back
// (the first status after a rollback of 9,000 updates at 10k took 151-194
// ms reading them).
// A file already as restored (no write) is left as the caches had it.
//
// The files each cache covers are counted first: a cache covering them
// all (the project's, most often) takes done as it is, and one covering
// some a slice of their number, instead of a copy of done grown by
// doubling for each cache (18 ms of a 10,000-file rollback).
func (wr *Writer) cacheRestored(done []written, recent bool) {
	for _, c := range plan.LoadScopedStatCaches(wr.Sys, fsys.AbsPath(wr.Store.Dir())) {
		n := 0
		for i := range done {
			if c.Covers(done[i].path) {
				n++
			}
		}
		in := done
		if n == 0 {
			continue
		} else if n < len(done) {
			in = make([]written, 0, n)
			for _, w := range done {
				if c.Covers(w.path) {
					in = append(in, w)
				}
			}
		}
		wr.cacheWritten(c, nil, nil, in, recent)
	}
}

// wholeManifests marks the target manifests of ws whose entries the
// rollback's file writes are at least half of: as a deploy does
// ([mostChanged]), such a manifest is saved whole, without computing two
// deltas about as large as its texts (a rollback of 9,000 updates at 10k:
// max RSS 63-69 -> 56-57 MiB, and faster). Its entries are counted in the
// text restored, by their "path" keys (a count that errs high only keeps
// the deltas).
func wholeManifests(ws []write) {
	changed := map[string]int{}
	for i := range ws {
		if w := &ws[i]; !w.noop && !w.change.Manifest {
			changed[w.change.Root]++
		}
	}
	for i := range ws {
		w := &ws[i]
		if !w.noop && w.change.Manifest && w.change.Target != snapshots.StateTarget && w.data() != nil {
			entries := bytes.Count(w.data(), []byte(`"path":`))
			w.hold().whole = mostChanged(changed[w.change.Root], entries)
		}
	}
}

// manifestsLast moves the writes of manifests and state files behind those
// of target files, each in its order, in place, and returns their number.
func manifestsLast(ws []write) int {
	var tail []write
	n := 0
	for i := range ws {
		if ws[i].change.Manifest {
			tail = append(tail, ws[i])
		} else {
			ws[n] = ws[i]
			n++
		}
	}
	copy(ws[n:], tail)
	return len(tail)
}

// restoreHeld is how many restored bytes a rollback keeps from the check
// of every saved byte to the write; the rest are read again, from a pack
// just read (so from the page cache). 2 MiB, not 8: the heap's goal is
// twice what it holds, and a rollback of 9,000 updates at 10k peaked at
// 57-60 MiB with 8, 48-53 with 2, in the same time.
const restoreHeld = 2 << 20

// restoreWrites reads, in parallel, what each path of restores holds now
// and turns it into a write: its current bytes go into pack (a manifest's
// are kept: they anchor its deltas), its saved bytes are read and checked.
// A path that must not exist and does not is left out. A link at the path
// or above it (below its root) is refused, not replaced: a link stays a
// link, and nothing is read through it.
func (wr *Writer) restoreWrites(restores []snapshots.Restore, contents *snapshots.Contents, pack *snapshots.Pack, extra int) ([]write, error) {
	// Without a pack it previews ([Writer.PreviewRestore]): every read and
	// check is made, and nothing read is kept.
	preview := pack == nil
	ws, blobIDs := newRestoreWrites(restores, extra)
	// restores is not read again: what the writes need of it is in them.
	guard := plan.NewLinkGuard(wr.Sys)
	var held atomic.Int64
	var failed firstError
	workers.Parallel(len(ws), func(i int) {
		w := &ws[i]
		c := w.change
		root, path := recorded(c.Root, c.Path)
		a, seen, err := plan.ReadSeen(wr.Sys, guard, root, path)
		if err != nil {
			failed.set(i, err)
			return
		}
		if c.After == nil && !a.Exists {
			w.change = nil // nothing to remove: left out
			return
		}
		switch {
		case c.After == nil:
			c.Op = plan.OpDelete
		case a.Exists:
			c.Op = plan.OpUpdate
		}
		if a.Exists {
			c.Before = &snapshots.Content{SHA256: a.SHA256, Size: int64(len(a.Data)), Mode: uint32(a.Mode)}
			w.stat = seen
			// A manifest restored keeps its bytes: they anchor its deltas.
			// One removed needs none, and a large one is let go of here.
			if c.Manifest && c.After != nil {
				w.hold().before = a.Data
			} else if !preview {
				if err := addRead(pack, a); err != nil {
					failed.set(i, err)
					return
				}
				w.beforeSaved = true
			}
		}
		if c.After != nil {
			w.mode = fs.FileMode(c.After.Mode)
			w.noop = a.Exists && a.SHA256 == c.After.SHA256 && a.Mode == w.mode.Perm()
		}
		// A target file's saved bytes are whole (only manifests save
		// deltas), read straight from their pack, which is safe in
		// parallel; a manifest's are read below, one at a time.
		if c.After != nil && !w.noop && !c.Manifest && c.After.Delta == nil {
			target, path, id, saved := c.Target, c.Path, blobIDs[i], c.After
			data, err := contents.Read(target, path, id, saved, nil)
			if err != nil {
				failed.set(i, err)
				return
			}
			switch {
			case preview:
			case held.Add(int64(len(data))) <= restoreHeld:
				w.hold().data = data
			default:
				w.hold().load = func() ([]byte, error) { return contents.Read(target, path, id, saved, nil) }
			}
		}
	})
	out := ws[:0]
	for i := range ws {
		if i == failed.at && failed.err != nil {
			return nil, failed.err
		}
		w := ws[i]
		if w.change == nil {
			continue
		}
		if c := w.change.After; c != nil && !w.noop && w.data() == nil && (w.h == nil || w.h.load == nil) &&
			(!preview || c.Delta != nil || w.change.Manifest) {
			data, err := contents.Read(w.change.Target, w.change.Path, blobIDs[i], c, w.beforeBytes())
			if err != nil {
				return nil, err
			}
			if !preview {
				w.hold().data = data
			}
		}
		out = append(out, w)
	}
	return out, nil
}

// addRead adds to pack the bytes of a file just read: their hash, made as
// they were read, is not made again.
func addRead(pack *snapshots.Pack, a plan.Actual) error {
	if sum, ok := checksum.ParseSHA256Hex(a.SHA256); ok {
		return pack.AddSum(a.Data, sum)
	}
	_, err := pack.Add(a.Data)
	return err
}

// newRestoreWrites makes the write of each of restores, with room for
// extra more (the state files: appending them does not copy the writes of
// every file into a slice twice their size), and the snapshot id of each
// restore's saved bytes (nil when no restore has any). Their changes are
// made in one block; each says what the path becomes, so far created.
func newRestoreWrites(restores []snapshots.Restore, extra int) ([]write, []string) {
	ws := make([]write, len(restores), len(restores)+extra)
	changes := make([]snapshots.FileChange, len(restores))
	var blobIDs []string
	for i, r := range restores {
		changes[i] = snapshots.FileChange{Target: r.Target, Root: r.Root, Path: r.Path, Op: plan.OpCreate, Manifest: r.Manifest, After: r.Content}
		ws[i] = write{change: &changes[i], remove: r.Content == nil}
		if r.Content != nil {
			if blobIDs == nil {
				blobIDs = make([]string, len(restores))
			}
			blobIDs[i] = r.BlobID
		}
	}
	return ws, blobIDs
}

// firstError keeps the error of the lowest index among those set, from
// any goroutine.
type firstError struct {
	mu  sync.Mutex
	at  int
	err error
}

func (f *firstError) set(i int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil || i < f.at {
		f.at, f.err = i, err
	}
}

// restoreState adds the writes of the state files whose bytes change.
func (wr *Writer) restoreState(ws []write, state []StateFile) []write {
	for _, f := range state {
		cur, err := wr.Sys.ReadFile(f.Path)
		has := err == nil
		if has && bytes.Equal(cur, f.Data) {
			continue
		}
		content := &snapshots.Content{SHA256: checksum.SHA256Hex(f.Data), Size: int64(len(f.Data)), Mode: 0o600}
		w := write{change: &snapshots.FileChange{Target: snapshots.StateTarget, Root: f.Path.Dir().String(), Path: f.Path.String(), Manifest: true, Op: plan.OpCreate, After: content},
			h: &held{data: f.Data}, mode: 0o600}
		if has {
			w.h.before = cur
			w.change.Op = plan.OpUpdate
			w.change.Before = &snapshots.Content{SHA256: checksum.SHA256Hex(cur), Size: int64(len(cur)), Mode: uint32(wr.modeOf(f.Path))}
		}
		ws = append(ws, w)
	}
	return ws
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
