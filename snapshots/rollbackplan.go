package snapshots

import (
	"slices"

	"github.com/agentpack/agentpack/internal/apperr"
)

// RollbackPlan is what a rollback restores, and the records it read to
// decide.
type RollbackPlan struct {
	// Restores are as [RestoreTo] and [RestoreLast] return them.
	Restores []Restore
	// To is the snapshot rolled back to ("" for the state before the first).
	To string
	// Records are the records read, oldest first: every record newer than
	// To, To's own, and the older ones that last wrote a path the newer
	// ones touch. Records that changed none of those paths are not read.
	// For a rollback of the newest record, its Files are only those with
	// bytes saved as a delta: all [Store.Contents] needs of them.
	Records []*Record
}

// PlanRollback reads what a rollback needs and returns its restores: with
// last, undoing the newest record ([RestoreLast]); else returning to
// snapshot to ([RestoreTo]). It reads the record files one by one, newest
// first, and stops as soon as every path is decided, so undoing a small
// deploy never decodes the big ones before it. A record it needs that
// cannot be read is E_SNAPSHOT_CORRUPTED: skipping it could undo the wrong
// snapshot or miss changes.
func (s *Store) PlanRollback(to string, last bool, targets []string) (*RollbackPlan, error) {
	ids, err := s.recordIDs()
	if err != nil {
		return nil, err
	}
	if last {
		if len(ids) == 0 {
			_, _, err := RestoreLast(nil, targets)
			return nil, err
		}
		// The newest record's restores are made as it is read, and of its
		// files only those saved as deltas are kept, for [Contents]: a
		// rollback of a deploy of 100,000 files does not hold them twice.
		id := ids[len(ids)-1]
		var restores []Restore
		newest, err := s.loadForRollback(id, func(f *FileChange, i, files int) bool {
			if i == 0 {
				restores = make([]Restore, 0, files)
			}
			if wanted(f.Target, targets) {
				restores = append(restores, restoreOf(id, *f))
			}
			return hasDelta(f.Before) || hasDelta(f.After)
		})
		if err != nil {
			return nil, err
		}
		if restores == nil {
			restores = []Restore{}
		}
		sortRestores(restores)
		p := &RollbackPlan{Restores: restores, Records: []*Record{newest}}
		if len(ids) > 1 {
			p.To = ids[len(ids)-2]
		}
		return p, nil
	}
	at := slices.Index(ids, to)
	if at < 0 {
		return nil, apperr.New(apperr.SnapshotNotFound, "snapshot %s not found", to).
			WithHint("run `agentpack snapshots` to list snapshot ids").
			With("id", to)
	}
	var newer []*Record
	open := map[fileKey]bool{} // paths newer records touch, not yet found at or before to
	for _, id := range ids[at+1:] {
		r, err := s.loadForRollback(id, nil)
		if err != nil {
			return nil, err
		}
		newer = append(newer, r)
		for _, f := range r.Files {
			if wanted(f.Target, targets) {
				open[fileKey{f.Target, f.Path}] = true
			}
		}
	}
	var older []*Record
	for i := at; i >= 0 && (i == at || len(open) > 0); i-- {
		r, err := s.loadForRollback(ids[i], nil)
		if err != nil {
			return nil, err
		}
		touches := i == at
		for _, f := range r.Files {
			if k := (fileKey{f.Target, f.Path}); open[k] {
				delete(open, k)
				touches = true
			}
		}
		if touches {
			older = append(older, r)
		}
	}
	slices.Reverse(older)
	records := append(older, newer...)
	restores, err := RestoreTo(records, to, targets)
	return &RollbackPlan{Restores: restores, To: to, Records: records}, err
}

// loadForRollback loads id, refusing a damaged record in the words of a
// rollback.
func (s *Store) loadForRollback(id string, each func(*FileChange, int, int) bool) (*Record, error) {
	r, err := s.loadEach(id, each, true)
	if err != nil {
		ae := apperr.As(err)
		if ae.Code != apperr.SnapshotCorrupted {
			return nil, err
		}
		return nil, apperr.Wrap(err, apperr.SnapshotCorrupted, "cannot roll back safely: snapshot %s skipped", id).
			WithHint("inspect or remove the damaged record under %s", s.snapshotsDir())
	}
	return r, nil
}

// IDs returns the ids of every snapshot record, oldest first, without
// reading them.
func (s *Store) IDs() ([]string, error) { return s.recordIDs() }
