package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentpack/agentpack/engine/apply"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/snapshots"
)

// RollbackData is the data of `agentpack rollback`.
type RollbackData struct {
	RolledBackTo    *string `json:"rolled_back_to"`
	EventSnapshotID string  `json:"event_snapshot_id"`
	Restored        int     `json:"restored"`
	Removed         int     `json:"removed"`
	// DryRun is set when the engine only recorded what it would write
	// (EventSnapshotID is then "").
	DryRun bool `json:"dry_run,omitempty"`
	// Files are the files restored or removed (manifests left out).
	Files []RollbackFile `json:"files"`
}

// RollbackFile is one file a rollback restores or removes.
type RollbackFile struct {
	Target    string `json:"target"`
	Path      string `json:"path"`
	PathPosix string `json:"path_posix"`
	Op        string `json:"op"` // restore | remove
}

func (d *RollbackData) count(r *snapshots.FileChange) {
	if r.Manifest {
		return
	}
	f := RollbackFile{Target: r.Target, Path: r.Path, PathPosix: filepath.ToSlash(r.Path), Op: "restore"}
	if r.After == nil {
		f.Op = "remove"
		d.Removed++
	} else {
		d.Restored++
	}
	d.Files = append(d.Files, f)
}

// RollbackOptions select what to roll back to.
type RollbackOptions struct {
	// To is a snapshot id; Last undoes only the newest snapshot.
	To   string
	Last bool
	// Target limits the rollback to one target ("" or "all": every target).
	Target string
}

// Rollback restores the exact bytes the disk had right after snapshot To
// (or before the newest snapshot, with Last) and records the rollback as a
// snapshot of its own, so it can be undone too. On an engine whose System
// only records, it makes the same reads and checks and reports what it
// would change, without the transaction ([apply.Writer.PreviewRestore]).
func (e *Engine) Rollback(ctx context.Context, opt RollbackOptions) (*RollbackData, []string, error) {
	if (opt.To == "") == !opt.Last {
		return nil, nil, apperr.New(apperr.InvalidArgument, "give exactly one of --to <snapshot> or --last").
			WithHint("list snapshots with `agentpack snapshots`")
	}
	var targets []string
	if opt.Target != "" && opt.Target != "all" {
		if _, err := e.Adapters.Lookup(opt.Target); err != nil {
			return nil, nil, err
		}
		targets = []string{opt.Target}
	}
	var out *RollbackData
	var warnings []string
	err := e.WithLock(ctx, "rollback", func(recovered []string) error {
		warnings = recovered
		w := e.writer()
		store := w.Store
		to := ""
		if !opt.Last {
			id, err := e.resolveSnapshotID(opt.To)
			if err != nil {
				return err
			}
			if _, err := store.Load(id); err != nil {
				return err
			}
			to = id
		}
		rp, err := store.PlanRollback(to, opt.Last, targets)
		if err != nil {
			return err
		}
		to = rp.To
		contents := store.Contents(rp.Records)
		defer contents.Close()
		// What the records say of each path is in the restores and the
		// contents now; 100,000 files' changes need not be held while
		// they are written.
		for _, r := range rp.Records {
			r.Files = nil
		}
		restores, state, err := e.restoredRoots(contents, rp.Records, rp.Restores)
		if err != nil {
			return err
		}
		rp.Restores = nil
		if e.dryRun() {
			changed, err := w.PreviewRestore(restores, contents)
			if err != nil {
				return err
			}
			out = rollbackData(&apply.Restored{Changed: changed}, to, true)
			return nil
		}
		done, err := w.Restore(restores, contents, state, to, targets, createdSince(rp.Records, to))
		if err != nil {
			return err
		}
		out = rollbackData(done, to, e.dryRun())
		return nil
	})
	return out, warnings, err
}

// rollbackData reports a restore that rolled back to snapshot to ("": none).
func rollbackData(done *apply.Restored, to string, dryRun bool) *RollbackData {
	out := &RollbackData{EventSnapshotID: done.ID, DryRun: dryRun, Files: make([]RollbackFile, 0, len(done.Changed))}
	if dryRun {
		out.EventSnapshotID = "" // the record was only written to the recording System
	}
	if to != "" {
		out.RolledBackTo = &to
	}
	for _, r := range done.Changed {
		out.count(r)
	}
	return out
}

// createdSince gathers the folders created by the records newer than to
// ("" means every record; for `--last`, to is the record before the newest).
func createdSince(records []*snapshots.Record, to string) []string {
	var out []string
	for _, r := range records {
		if r.ID > to {
			out = append(out, r.CreatedDirs...)
		}
	}
	return out
}

// SnapshotSummary is one entry of `agentpack snapshots`.
type SnapshotSummary struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	CreatedAt time.Time `json:"created_at"`
	Targets   []string  `json:"targets"`
	Files     int       `json:"files"`
}

// Snapshots lists snapshot records, oldest first.
func (e *Engine) Snapshots(ctx context.Context) ([]SnapshotSummary, []string, error) {
	recovered, err := e.recoverFirst(ctx)
	if err != nil {
		return nil, nil, err
	}
	records, warnings, err := e.Store().List()
	warnings = append(recovered, warnings...)
	if err != nil {
		return nil, warnings, err
	}
	out := []SnapshotSummary{}
	for _, r := range records {
		out = append(out, SnapshotSummary{ID: r.ID, Kind: r.Kind, CreatedAt: r.CreatedAt, Targets: nonNil(r.Targets), Files: r.TargetFiles})
	}
	return out, warnings, nil
}

// SnapshotFile is one file of `snapshots show`.
type SnapshotFile struct {
	Target    string `json:"target"`
	Root      string `json:"root"`
	RootPosix string `json:"root_posix"`
	Path      string `json:"path"`
	PathPosix string `json:"path_posix"`
	Op        string `json:"op"`
	Manifest  bool   `json:"manifest,omitempty"`
}

// SnapshotDetail is the data of `snapshots show`.
type SnapshotDetail struct {
	ID           string         `json:"id"`
	Kind         string         `json:"kind"`
	CreatedAt    time.Time      `json:"created_at"`
	Targets      []string       `json:"targets"`
	Profile      string         `json:"profile,omitempty"`
	RolledBackTo *string        `json:"rolled_back_to,omitempty"`
	Files        []SnapshotFile `json:"files"`
}

// Snapshot returns one snapshot's details. id may be "last" (the newest) or
// an unambiguous prefix of an id.
func (e *Engine) Snapshot(ctx context.Context, id string) (*SnapshotDetail, error) {
	if _, err := e.recoverFirst(ctx); err != nil {
		return nil, err
	}
	id, err := e.resolveSnapshotID(id)
	if err != nil {
		return nil, err
	}
	r, err := e.Store().Load(id)
	if err != nil {
		return nil, err
	}
	d := &SnapshotDetail{ID: r.ID, Kind: r.Kind, CreatedAt: r.CreatedAt, Targets: nonNil(r.Targets), Profile: r.Profile, RolledBackTo: r.RolledBackTo, Files: []SnapshotFile{}}
	for _, f := range r.Files {
		d.Files = append(d.Files, SnapshotFile{Target: f.Target, Root: f.Root, RootPosix: filepath.ToSlash(f.Root), Path: f.Path,
			PathPosix: filepath.ToSlash(f.Path), Op: f.Op, Manifest: f.Manifest})
	}
	return d, nil
}

// PruneSnapshots keeps the newest keep snapshots.
func (e *Engine) PruneSnapshots(ctx context.Context, keep int) (removed []string, kept int, err error) {
	err = e.WithLock(ctx, "snapshots prune", func([]string) error {
		removed, err = e.Store().Prune(keep)
		if err != nil {
			return err
		}
		records, _, err := e.Store().List()
		kept = len(records)
		return err
	})
	if removed == nil {
		removed = []string{}
	}
	return removed, kept, err
}

// restoredRoots is the roots registry as a rollback leaves it, written
// inside the rollback's transaction: the registry the restores bring back
// (or the current one), plus every root whose manifest comes back (with the
// repo and project of the deploy that wrote it), so a later deploy can
// clean them up. restores is returned without the registry's own restore.
func (e *Engine) restoredRoots(contents *snapshots.Contents, records []*snapshots.Record, restores []snapshots.Restore) ([]snapshots.Restore, []apply.StateFile, error) {
	byID := map[string]*snapshots.Record{}
	for _, r := range records {
		byID[r.ID] = r
	}
	path := e.rootsPath()
	roots := e.readRoots()
	rest := restores[:0] // in place: restores is not read again
	var entries []rootEntry
	for _, r := range restores {
		if r.Target == snapshots.StateTarget {
			if r.Path == path.String() {
				roots = nil
				if r.Content != nil {
					cur, _ := e.Sys.ReadFile(path)
					data, err := contents.Read(r.Target, r.Path, r.BlobID, r.Content, cur)
					if err != nil {
						return nil, nil, err
					}
					_ = json.Unmarshal(data, &roots) // as readRoots: damage only loses cleanup
				}
			}
			continue
		}
		rest = append(rest, r)
		rec := byID[r.BlobID]
		if !r.Manifest || r.Content == nil || rec == nil || rec.Repo == "" {
			continue
		}
		entries = append(entries, rootEntry{Target: r.Target, Root: fsys.AbsPath(r.Root), Repo: rec.Repo, Project: fsys.AbsPath(rec.Project)})
	}
	seen := map[rootEntry]bool{}
	for _, r := range roots {
		seen[r] = true
	}
	for _, r := range entries {
		if !seen[r] {
			seen[r] = true
			roots = append(roots, r)
		}
	}
	return rest, []apply.StateFile{{Path: path, Data: encodeRoots(roots)}}, nil
}

// resolveSnapshotID expands "last" and unique id prefixes; anything else is
// returned as is (Load then reports E_SNAPSHOT_NOT_FOUND).
func (e *Engine) resolveSnapshotID(id string) (string, error) {
	ids, err := e.Store().IDs()
	if err != nil || len(ids) == 0 {
		return id, err
	}
	if id == "last" || id == "latest" {
		return ids[len(ids)-1], nil
	}
	var matches []string
	for _, r := range ids {
		if r == id {
			return id, nil
		}
		if strings.HasPrefix(r, id) {
			matches = append(matches, r)
		}
	}
	if len(matches) > 1 {
		return "", apperr.New(apperr.InvalidArgument, "snapshot id %q matches %d snapshots", id, len(matches)).
			WithHint("give more of the id: %s", strings.Join(sample(matches), ", "))
	}
	if len(matches) == 1 {
		return matches[0], nil
	}
	return id, nil
}
