package snapshots

import (
	"slices"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
)

// Restore is what one path must become for a rollback.
type Restore struct {
	Target string
	Root   string
	Path   string
	// Content is nil when the path must not exist.
	Content *Content
	// BlobID is the snapshot id whose blob folder holds Content's bytes
	// (read them with [Store.ReadBlob]); empty when Content is nil.
	BlobID   string
	Manifest bool
}

// RestoreTo returns what to write so the disk is back to its state right
// after snapshot toID was applied. For each (target, path) touched by a
// record newer than toID it is the After of the newest record up to toID
// that touched the path — the bytes agentpack wrote then, even if the file
// was later edited by hand and overwritten with --force — or, when no such
// record exists, the Before of the oldest newer record. toID "" means
// before the oldest record (undo everything). Only files whose Target is in
// targets count (empty, or one "all", means every target). records may come
// in any order. The result is sorted by (Target, Path) and keeps paths whose
// net recorded change is nil, since only the disk can tell whether they need
// writing. An unknown toID is E_SNAPSHOT_NOT_FOUND.
func RestoreTo(records []*Record, toID string, targets []string) ([]Restore, error) {
	ordered := sortedRecords(records)
	start := 0
	if toID != "" {
		i := slices.IndexFunc(ordered, func(r *Record) bool { return r.ID == toID })
		if i < 0 {
			return nil, apperr.New(apperr.SnapshotNotFound, "snapshot %s not found", toID).
				WithHint("run `agentpack snapshots` to list snapshot ids").
				With("id", toID)
		}
		start = i + 1
	}
	// The After of the newest record up to toID, per path.
	lastWritten := map[fileKey]Restore{}
	for _, r := range ordered[:start] {
		for _, f := range r.Files {
			lastWritten[fileKey{f.Target, f.Path}] = afterOf(r.ID, f)
		}
	}
	seen := map[fileKey]bool{}
	out := []Restore{}
	for _, r := range ordered[start:] {
		for _, f := range r.Files {
			k := fileKey{f.Target, f.Path}
			if seen[k] || !wanted(f.Target, targets) {
				continue
			}
			seen[k] = true
			if w, ok := lastWritten[k]; ok {
				out = append(out, w)
			} else {
				out = append(out, restoreOf(r.ID, f))
			}
		}
	}
	sortRestores(out)
	return out, nil
}

// RestoreLast undoes only the newest record (for `rollback --last`): every
// path it touched gets back its exact Before, including a file the user had
// edited by hand before a --force. It also returns the id the disk is rolled
// back to: the previous record's id, or "" when the newest record is the
// only one. No records at all is E_SNAPSHOT_NOT_FOUND.
func RestoreLast(records []*Record, targets []string) (restores []Restore, rolledBackTo string, err error) {
	ordered := sortedRecords(records)
	if len(ordered) == 0 {
		return nil, "", apperr.New(apperr.SnapshotNotFound, "there is no snapshot to roll back").
			WithHint("deploy with `agentpack deploy --apply` first; every apply records a snapshot")
	}
	n := len(ordered)
	if n > 1 {
		rolledBackTo = ordered[n-2].ID
	}
	last := ordered[n-1]
	restores = []Restore{}
	for _, f := range last.Files {
		if wanted(f.Target, targets) {
			restores = append(restores, restoreOf(last.ID, f))
		}
	}
	sortRestores(restores)
	return restores, rolledBackTo, nil
}

func sortRestores(out []Restore) {
	slices.SortFunc(out, func(a, b Restore) int {
		if c := strings.Compare(a.Target, b.Target); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
}

func afterOf(id string, f FileChange) Restore {
	r := Restore{Target: f.Target, Root: f.Root, Path: f.Path, Manifest: f.Manifest}
	if f.After != nil {
		c := *f.After
		r.Content = &c
		r.BlobID = id
	}
	return r
}

// sortedRecords returns the non-nil records oldest first (by id, which sorts
// by time) without changing the caller's slice.
func sortedRecords(records []*Record) []*Record {
	out := make([]*Record, 0, len(records))
	for _, r := range records {
		if r != nil {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b *Record) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func wanted(target string, targets []string) bool {
	return len(targets) == 0 || slices.Contains(targets, target) || slices.Contains(targets, "all")
}

func restoreOf(id string, f FileChange) Restore {
	r := Restore{Target: f.Target, Root: f.Root, Path: f.Path, Manifest: f.Manifest}
	if f.Before != nil {
		c := *f.Before
		r.Content = &c
		r.BlobID = id
	}
	return r
}
