package engine

import (
	"context"
	"slices"

	"github.com/agentpack/agentpack/engine/apply"
	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/fsys"
)

// EvolveRestoreRequest is `evolve restore`.
type EvolveRestoreRequest struct {
	Request
	// ModuleID limits the restore to one module's files.
	ModuleID string
}

// EvolveRestoreItem is one missing file recreated.
type EvolveRestoreItem struct {
	Target    string       `json:"target"`
	Path      fsys.AbsPath `json:"path"`
	PathPosix string       `json:"path_posix"`
	ModuleIDs []string     `json:"module_ids,omitempty"`
}

// EvolveRestoreSummary counts the desired files restore looked at.
type EvolveRestoreSummary struct {
	Missing          int `json:"missing"`
	Restored         int `json:"restored"`
	SkippedExisting  int `json:"skipped_existing"`
	SkippedReadError int `json:"skipped_read_error"`
}

// EvolveRestoreData is the data of `evolve restore`.
type EvolveRestoreData struct {
	Restored []EvolveRestoreItem  `json:"restored"`
	Summary  EvolveRestoreSummary `json:"summary"`
	// Reason is no_missing, dry_run or restored.
	Reason     string   `json:"reason"`
	SnapshotID string   `json:"snapshot_id,omitempty"`
	Warnings   []string `json:"-"`
}

// EvolveRestore recreates the desired files that are missing on disk and
// nothing else: no file that exists is updated, none is deleted. It is a
// deploy of only the plan's creates — one transaction with a snapshot, so
// `rollback` undoes it — whose manifests keep what they said of every
// other file.
func (e *Engine) EvolveRestore(ctx context.Context, req EvolveRestoreRequest) (*EvolveRestoreData, error) {
	var out *EvolveRestoreData
	ctx = withCheckouts(ctx)
	err := e.WithLock(ctx, "evolve restore", func(recovered []string) error {
		st, p, err := e.planWith(ctx, req.Request, e.Load, true) // --module-id is checked against the manifest
		if err != nil {
			return err
		}
		defer func() {
			if out != nil {
				out.Warnings = append(recovered, st.Warnings...)
			}
		}()
		if err := checkModuleID(st, req.ModuleID); err != nil {
			return err
		}
		out = &EvolveRestoreData{Restored: []EvolveRestoreItem{}}
		part := &plan.Plan{Profile: p.Profile, Targets: p.Targets, Manifests: p.Manifests, Managed: p.Managed, Actual: p.Actual}
		creates := map[fsys.AbsPath]bool{}
		for _, c := range p.Changes {
			if c.Op != plan.OpCreate || req.ModuleID != "" && !slices.Contains(c.ModuleIDs, req.ModuleID) {
				continue
			}
			creates[c.Path] = true
			part.Changes = append(part.Changes, c)
			out.Restored = append(out.Restored, EvolveRestoreItem{Target: c.Target, Path: c.Path, PathPosix: c.Path.ToSlash(), ModuleIDs: c.ModuleIDs})
		}
		for _, f := range st.Desired.Files {
			if !creates[f.Path] && (req.ModuleID == "" || slices.Contains(f.ModuleIDs, req.ModuleID)) {
				out.Summary.SkippedExisting++
			}
		}
		out.Summary.Missing = len(part.Changes)
		part.Summary.Create = len(part.Changes)
		if len(part.Changes) == 0 {
			out.Reason = "no_missing"
			return nil
		}
		d := e.deployment(st, part, "evolve restore")
		d.Partial = true
		d.State = []apply.StateFile{e.rootsAfter(st, restoredRoots(st, part), nil)}
		id, _, err := e.writer().Apply(d)
		if err != nil {
			return err
		}
		out.Reason = "restored"
		if e.dryRun() {
			out.Reason = "dry_run"
			return nil
		}
		out.SnapshotID, out.Summary.Restored = id, len(part.Changes)
		return nil
	})
	return out, err
}

// restoredRoots are the roots a partial apply leaves managed: those with a
// manifest and those it writes a file into.
func restoredRoots(st *State, p *plan.Plan) []desired.Root {
	has := map[desired.Root]bool{}
	for _, c := range p.Changes {
		has[desired.Root{Target: c.Target, Path: c.Root}] = true
	}
	var out []desired.Root
	for _, r := range st.Desired.Roots {
		key := desired.Root{Target: r.Target, Path: r.Path}
		if has[key] || p.Manifests[r] != nil {
			out = append(out, key)
		}
	}
	return out
}
