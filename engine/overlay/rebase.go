package overlay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/merge3"
)

// RebaseOptions tune [Rebase].
type RebaseOptions struct {
	// DryRun reports what would change and writes nothing.
	DryRun bool
	// Sparsify deletes overlay files that end up equal to upstream.
	Sparsify bool
}

// Summary counts a rebase's outcomes.
type Summary struct {
	ProcessedFiles int `json:"processed_files"`
	UpdatedFiles   int `json:"updated_files"`
	DeletedFiles   int `json:"deleted_files"`
	SkippedFiles   int `json:"skipped_files"`
	ConflictFiles  int `json:"conflict_files"`
	ResolvedFiles  int `json:"resolved_files"`
}

// Report is what a rebase did (or would do) per file, relative paths of
// the module.
type Report struct {
	Updated   []string `json:"updated"`
	Deleted   []string `json:"deleted"`
	Skipped   []string `json:"skipped"`
	Conflicts []string `json:"conflicts"`
	// Resolved are conflicts of an earlier rebase that the user resolved
	// (in .agentpack/conflicts or in the overlay itself).
	Resolved []string `json:"resolved"`
	Summary  Summary  `json:"summary"`
}

// RebaseInput is one overlay to rebase onto the current upstream.
type RebaseInput struct {
	ModuleID string
	Layer    Layer
	Baseline *Baseline
	// Base returns a file of the merge base (the upstream the baseline
	// describes); ok=false when it has no such file.
	Base func(rel string) (data []byte, ok bool, err error)
	// Upstream are the module's current upstream files.
	Upstream []module.File
	// NewBaseline describes Upstream; it replaces the baseline once the
	// rebase completes without conflicts.
	NewBaseline *Baseline
}

// pending is .agentpack/rebase.json: the conflicts a rebase left, so the
// next rebase can tell which the user resolved.
type pending struct {
	UpstreamSHA256 string                 `json:"upstream_sha256"`
	Files          map[string]pendingFile `json:"files"`
}

type pendingFile struct {
	// OursSHA256 is the overlay file (or patch) when the conflict arose.
	OursSHA256 string `json:"ours_sha256"`
	// ConflictSHA256 is the conflict copy as written.
	ConflictSHA256 string `json:"conflict_sha256"`
}

// change is one planned write or deletion in the overlay.
type change struct {
	path fsys.AbsPath
	data []byte // nil deletes
}

// rebaser carries one rebase.
type rebaser struct {
	sys      fsys.System
	in       RebaseInput
	opt      RebaseOptions
	base     map[string]string
	upstream map[string]module.File
	pend     *pending
	changes  []change
	conflict map[string][]byte
	rep      *Report
}

// Open checks that an overlay exists and has a baseline, and returns it.
func Open(sys fsys.System, repo fsys.AbsPath, moduleID string, l Layer) (*Baseline, error) {
	ok, err := checkDir(sys, repo, l.Dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apperr.New(apperr.OverlayNotFound, "module %s has no %s overlay (%s)", moduleID, l.Scope, l.Dir).
			WithHint("create it with `agentpack overlay edit %s --scope %s`", moduleID, l.Scope).
			With("module_id", moduleID).With("scope", string(l.Scope)).With("overlay_dir", l.Dir.String())
	}
	b, ok, err := ReadBaseline(sys, l.Dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apperr.New(apperr.OverlayBaselineMissing, "the %s overlay of %s has no .agentpack/baseline.json", l.Scope, moduleID).
			WithHint("run `agentpack overlay edit %s --scope %s` to record the current upstream as its baseline", moduleID, l.Scope).
			With("module_id", moduleID).With("scope", string(l.Scope)).With("overlay_dir", l.Dir.String()).
			With("baseline_path", metaPath(l.Dir, "baseline.json").String())
	}
	return b, nil
}

// Rebase carries an overlay's edits onto the current upstream with a
// three-way merge against the baseline. Files the overlay copied but never
// changed follow upstream. On a conflict nothing in the overlay changes:
// each conflicted file is written with markers to .agentpack/conflicts/,
// and the error is E_OVERLAY_REBASE_CONFLICT; resolve by editing that copy
// (or the overlay file itself) and run the rebase again.
func Rebase(sys fsys.System, in RebaseInput, opt RebaseOptions) (*Report, error) {
	r := &rebaser{sys: sys, in: in, opt: opt, base: map[string]string{}, upstream: map[string]module.File{},
		conflict: map[string][]byte{}, rep: &Report{}}
	for _, e := range in.Baseline.FileManifest {
		r.base[e.Path] = e.SHA256
	}
	for _, f := range in.Upstream {
		r.upstream[f.Path] = f
	}
	k, err := readKind(sys, in.ModuleID, in.Layer)
	if err != nil {
		return nil, err
	}
	if r.pend, err = r.readPending(); err != nil {
		return nil, err
	}
	if k.kind == KindDir {
		for _, f := range k.overrides {
			if err := r.dirFile(f); err != nil {
				return nil, err
			}
		}
	} else {
		for _, p := range k.patches {
			if err := r.patchFile(p); err != nil {
				return nil, err
			}
		}
	}
	if len(r.conflict) > 0 {
		return r.rep, r.conflicted()
	}
	if !opt.DryRun {
		if err := r.commit(); err != nil {
			return nil, err
		}
	}
	return r.rep, nil
}

func (r *rebaser) dir() fsys.AbsPath { return r.in.Layer.Dir }

func (r *rebaser) filePath(rel string) fsys.AbsPath {
	p := r.dir()
	for _, part := range strings.Split(rel, "/") {
		p = p.JoinName(part)
	}
	return p
}

func (r *rebaser) patchPath(rel string) fsys.AbsPath {
	return r.dir().JoinName(MetaDir).JoinName("patches").Join(fsys.RelPath(rel + ".patch"))
}

func (r *rebaser) conflictPath(rel string) fsys.AbsPath {
	return r.dir().JoinName(MetaDir).JoinName("conflicts").Join(fsys.RelPath(rel))
}

// mergeBase returns the baseline's bytes of rel, checked against the hash
// the baseline recorded.
func (r *rebaser) mergeBase(rel string) ([]byte, error) {
	data, ok, err := r.in.Base(rel)
	if err != nil {
		return nil, err
	}
	if !ok || sum(data) != r.base[rel] {
		return nil, apperr.New(apperr.OverlayBaselineUnsupported, "the merge base of %s (module %s) is not what the overlay's baseline recorded", rel, r.in.ModuleID).
			WithHint("the upstream the baseline names is gone or changed; copy your edits aside, delete .agentpack/baseline.json and run `agentpack overlay edit %s --scope %s`", r.in.ModuleID, r.in.Layer.Scope).
			With("module_id", r.in.ModuleID).With("path", rel).With("expected_sha256", r.base[rel])
	}
	return data, nil
}

func (r *rebaser) plan(path fsys.AbsPath, data []byte, report *[]string, rel string) {
	r.changes = append(r.changes, change{path: path, data: data})
	*report = append(*report, rel)
	if data == nil {
		r.rep.Summary.DeletedFiles++
	} else {
		r.rep.Summary.UpdatedFiles++
	}
}

func (r *rebaser) skip(rel string) {
	r.rep.Skipped = append(r.rep.Skipped, rel)
	r.rep.Summary.SkippedFiles++
}

// dirFile rebases one replacement file of a dir overlay.
func (r *rebaser) dirFile(f module.File) error {
	rel := f.Path
	r.rep.Summary.ProcessedFiles++
	if _, known := r.base[rel]; !known {
		r.skip(rel) // a file the overlay added: upstream has nothing to merge
		return nil
	}
	base, err := r.mergeBase(rel)
	if err != nil {
		return err
	}
	ours, p := f.Data, r.filePath(rel)
	theirs, still := r.upstream[rel]
	switch {
	case !still && bytes.Equal(ours, base):
		r.plan(p, nil, &r.rep.Deleted, rel)
	case !still:
		r.skip(rel) // upstream dropped a file the overlay edited: keep the edit
	case bytes.Equal(ours, base) && r.opt.Sparsify:
		r.plan(p, nil, &r.rep.Deleted, rel)
	case bytes.Equal(ours, base):
		if !bytes.Equal(ours, theirs.Data) {
			r.plan(p, theirs.Data, &r.rep.Updated, rel)
		}
	case bytes.Equal(theirs.Data, base):
	case bytes.Equal(ours, theirs.Data):
		if r.opt.Sparsify {
			r.plan(p, nil, &r.rep.Deleted, rel)
		}
	default:
		if r.resolvedInPlace(rel, ours) {
			r.resolved(rel) // the overlay file is the user's resolution: keep it
			return nil
		}
		merged, ok, err := r.merge(rel, base, ours, theirs.Data)
		if err != nil || !ok {
			return err
		}
		if r.opt.Sparsify && bytes.Equal(merged, theirs.Data) {
			r.plan(p, nil, &r.rep.Deleted, rel)
		} else {
			r.plan(p, merged, &r.rep.Updated, rel)
		}
	}
	return nil
}

// patchFile rebases one patch of a patch overlay: the patch applied to the
// base is "ours", merged with upstream, and stored again as a patch
// against the new upstream.
func (r *rebaser) patchFile(pf module.File) error {
	rel := patchTarget(pf.Path)
	r.rep.Summary.ProcessedFiles++
	if _, known := r.base[rel]; !known {
		return apperr.New(apperr.OverlayBaselineUnsupported, "the baseline of module %s has no %s to patch", r.in.ModuleID, rel).
			WithHint("delete .agentpack/patches/%s or recreate the baseline with `agentpack overlay edit %s --kind patch`", pf.Path, r.in.ModuleID).
			With("module_id", r.in.ModuleID).With("path", rel)
	}
	base, err := r.mergeBase(rel)
	if err != nil {
		return err
	}
	p := r.patchPath(rel)
	theirs, still := r.upstream[rel]
	if still {
		// A patch that already applies to the new upstream and was resolved
		// by hand is kept as it is.
		if r.resolvedInPlace(rel, pf.Data) {
			if _, err := applyPatch(r.dir(), r.in.Layer.Scope, r.in.ModuleID, rel, pf.Data, theirs.Data); err == nil {
				r.resolved(rel)
				return nil
			}
		}
	}
	ours, err := applyPatch(r.dir(), r.in.Layer.Scope, r.in.ModuleID, rel, pf.Data, base)
	if err != nil {
		return err
	}
	if !still {
		r.addConflict(rel, pf.Data, []byte("<<<<<<< overlay\n"+string(ours)+"=======\n>>>>>>> upstream (file deleted)\n"))
		return nil
	}
	merged, ok, err := r.merge(rel, base, ours, theirs.Data)
	if err != nil || !ok {
		return err
	}
	patch, text := makePatch(rel, theirs.Data, merged)
	switch {
	case !text:
		return apperr.New(apperr.OverlayPatchApplyFailed, "%s of module %s is no longer text; patch overlays change text files only", rel, r.in.ModuleID).
			With("module_id", r.in.ModuleID).With("path", rel)
	case patch == nil:
		r.plan(p, nil, &r.rep.Deleted, rel)
	case !bytes.Equal(patch, pf.Data):
		r.plan(p, patch, &r.rep.Updated, rel)
	}
	return nil
}

// merge merges ours and theirs over base; a conflict is recorded (ok=false)
// unless the user resolved it in the conflict copy, whose text is then the
// result.
func (r *rebaser) merge(rel string, base, ours, theirs []byte) ([]byte, bool, error) {
	res := merge3.Merge(base, ours, theirs, merge3.Labels{Ours: "overlay", Theirs: "upstream"})
	if res.Conflicts == 0 {
		return res.Merged, true, nil
	}
	if text, ok, err := r.resolvedCopy(rel); err != nil || ok {
		if ok {
			r.resolved(rel)
		}
		return text, ok, err
	}
	r.addConflict(rel, ours, res.Merged)
	return nil, false, nil
}

func (r *rebaser) addConflict(rel string, ours, marked []byte) {
	r.conflict[rel] = marked
	r.rep.Conflicts = append(r.rep.Conflicts, rel)
	r.rep.Summary.ConflictFiles++
	if r.pend.Files == nil {
		r.pend.Files = map[string]pendingFile{}
	}
	r.pend.Files[rel] = pendingFile{OursSHA256: sum(ours), ConflictSHA256: sum(marked)}
}

// samePending reports whether the last rebase's conflicts were against
// the upstream there is now.
func (r *rebaser) samePending(rel string) (pendingFile, bool) {
	pf, ok := r.pend.Files[rel]
	return pf, ok && r.pend.UpstreamSHA256 == r.in.NewBaseline.UpstreamSHA256
}

// resolvedCopy returns the conflict copy of rel when the user edited it
// and removed every marker.
func (r *rebaser) resolvedCopy(rel string) ([]byte, bool, error) {
	pf, ok := r.samePending(rel)
	if !ok {
		return nil, false, nil
	}
	data, err := r.sys.ReadFile(r.conflictPath(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if sum(data) == pf.ConflictSHA256 || merge3.HasMarkers(data) {
		return nil, false, nil
	}
	return data, true, nil
}

// resolvedInPlace reports whether the overlay file (or patch) changed
// since the last rebase's conflict: the user resolved it there.
func (r *rebaser) resolvedInPlace(rel string, ours []byte) bool {
	pf, ok := r.samePending(rel)
	return ok && sum(ours) != pf.OursSHA256 && !merge3.HasMarkers(ours)
}

func (r *rebaser) resolved(rel string) {
	r.rep.Resolved = append(r.rep.Resolved, rel)
	r.rep.Summary.ResolvedFiles++
}

func (r *rebaser) pendingPath() fsys.AbsPath { return metaPath(r.dir(), "rebase.json") }

func (r *rebaser) readPending() (*pending, error) {
	p := &pending{}
	data, err := r.sys.ReadFile(r.pendingPath())
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	if json.Unmarshal(data, p) != nil {
		return &pending{}, nil // unreadable: treat every conflict as new
	}
	return p, nil
}

// conflicted writes the conflict copies and the pending record (not on a
// dry run) and returns E_OVERLAY_REBASE_CONFLICT.
func (r *rebaser) conflicted() error {
	l := r.in.Layer
	if !r.opt.DryRun {
		for rel, data := range r.conflict {
			if err := r.sys.WriteFile(r.conflictPath(rel), data, 0o644); err != nil {
				return err
			}
		}
		r.pend.UpstreamSHA256 = r.in.NewBaseline.UpstreamSHA256
		for rel := range r.pend.Files {
			if _, still := r.conflict[rel]; !still {
				delete(r.pend.Files, rel)
			}
		}
		if err := writeJSON(r.sys, r.pendingPath(), r.pend); err != nil {
			return err
		}
	}
	conflictsDir := r.dir().JoinName(MetaDir).JoinName("conflicts")
	return apperr.New(apperr.OverlayRebaseConflict, "overlay rebase of %s (%s) has conflicts in %d file(s): %s",
		r.in.ModuleID, l.Scope, len(r.conflict), strings.Join(r.rep.Conflicts, ", ")).
		WithHint("resolve each file in %s (remove the <<<<<<< ======= >>>>>>> markers) or edit the overlay file itself, then run `agentpack overlay rebase %s --scope %s` again; the overlay is unchanged until then", conflictsDir, r.in.ModuleID, l.Scope).
		With("module_id", r.in.ModuleID).With("scope", string(l.Scope)).
		With("overlay_dir", l.Dir.String()).With("overlay_dir_posix", l.Dir.ToSlash()).
		With("conflicts_dir", conflictsDir.String()).With("conflicts", r.rep.Conflicts).
		With("dry_run", r.opt.DryRun).With("sparsify", r.opt.Sparsify).With("summary", r.rep.Summary).
		With("reason_code", "overlay_rebase_conflict").
		With("next_actions", []string{"resolve_overlay_conflicts", "retry_overlay_rebase"})
}

// commit writes the planned changes, the new baseline, and clears the
// conflict copies.
func (r *rebaser) commit() error {
	for _, c := range r.changes {
		var err error
		if c.data == nil {
			err = r.sys.Remove(c.path)
			if err == nil {
				err = pruneEmpty(r.sys, c.path.Dir(), r.dir())
			}
		} else {
			err = r.sys.WriteFile(c.path, c.data, 0o644)
		}
		if err != nil {
			return err
		}
	}
	if err := writeJSON(r.sys, metaPath(r.dir(), "baseline.json"), r.in.NewBaseline); err != nil {
		return err
	}
	if err := r.sys.RemoveAll(r.dir().JoinName(MetaDir).JoinName("conflicts")); err != nil {
		return err
	}
	return r.sys.Remove(r.pendingPath())
}

// pruneEmpty removes dir and its parents up to (not including) stop while
// they are empty.
func pruneEmpty(sys fsys.System, dir, stop fsys.AbsPath) error {
	for dir != stop && stop.Contains(dir) {
		entries, err := sys.ReadDir(dir)
		if err != nil || len(entries) > 0 {
			return nil
		}
		if err := sys.Remove(dir); err != nil {
			return err
		}
		dir = dir.Dir()
	}
	return nil
}

func sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// Normalized is r with nil lists made empty, for stable JSON.
func (r *Report) Normalized() *Report {
	for _, l := range []*[]string{&r.Updated, &r.Deleted, &r.Skipped, &r.Conflicts, &r.Resolved} {
		if *l == nil {
			*l = []string{}
		}
	}
	return r
}
