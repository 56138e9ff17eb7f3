package engine

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/engine/system"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/workers"
	"github.com/agentpack/agentpack/snapshots"
)

// LockTimeout is how long a mutating command waits for another agentpack.
var LockTimeout = 10 * time.Second

// ApplyOptions are the flags of `deploy --apply`.
type ApplyOptions struct {
	Adopt bool
	Force bool
	// Command names the holder in the lock file and the snapshot record.
	Command string
	// ExpectPlanHash, when set, refuses the apply unless the plan made under
	// the lock still has this [Plan.Hash] (E_CONFIRM_TOKEN_MISMATCH): what
	// was confirmed is exactly what is applied.
	ExpectPlanHash string
}

// DeployData is the data of `agentpack deploy`.
type DeployData struct {
	Profile    string        `json:"profile"`
	Targets    []string      `json:"targets"`
	Changes    []plan.Change `json:"changes"`
	Summary    plan.Summary  `json:"summary"`
	Applied    bool          `json:"applied"`
	SnapshotID string        `json:"snapshot_id,omitempty"`
	Reason     string        `json:"reason,omitempty"`

	ConfirmToken          string `json:"confirm_token,omitempty"`
	ConfirmPlanHash       string `json:"confirm_plan_hash,omitempty"`
	ConfirmTokenExpiresAt string `json:"confirm_token_expires_at,omitempty"`
}

func deployData(p *plan.Plan) *DeployData {
	return &DeployData{Profile: p.Profile, Targets: p.Targets, Changes: p.Changes, Summary: p.Summary}
}

// Store returns the snapshot store.
func (e *Engine) Store() *snapshots.Store { return snapshots.NewStore(e.Env.StateDir()) }

// WithLock runs fn holding the cross-process state lock, after rolling back
// any interrupted apply. The warnings of a recovery are returned.
func (e *Engine) WithLock(command string, fn func(recovered []string) error) error {
	release, err := snapshots.Lock(context.Background(), e.Env.StateDir(), command, 0)
	if apperr.CodeOf(err) == apperr.Locked {
		if e.OnLockWait != nil {
			e.OnLockWait(apperr.As(err).Message)
		}
		release, err = snapshots.Lock(context.Background(), e.Env.StateDir(), command, LockTimeout)
	}
	if err != nil {
		return err
	}
	e.locked = true
	defer func() {
		e.locked = false
		release()
	}()
	recovered, err := e.recover()
	if err != nil {
		return err
	}
	return fn(recovered)
}

// recoverFirst rolls back an interrupted apply before a command that does
// not otherwise take the lock reads anything (SPEC §6: the next command,
// whatever it is, recovers first). It returns the recovery's warnings.
func (e *Engine) recoverFirst() ([]string, error) {
	if e.locked || e.inspectOnly {
		return nil, nil
	}
	if _, err := os.Stat(filepath.Join(e.Env.StateDir(), "journal.json")); err != nil {
		return nil, nil
	}
	var warnings []string
	err := e.WithLock("recover", func(recovered []string) error {
		warnings = recovered
		return nil
	})
	return warnings, err
}

// Deploy plans and, when apply is set, applies the plan as one transaction.
func (e *Engine) Deploy(req Request, apply bool, opt ApplyOptions) (*State, *DeployData, error) {
	if !apply {
		st, p, err := e.Plan(req)
		if err != nil {
			return st, nil, err
		}
		return st, deployData(p), nil
	}
	var st *State
	var out *DeployData
	if opt.Command == "" {
		opt.Command = "deploy --apply"
	}
	err := e.WithLock(opt.Command, func(recovered []string) error {
		var p *plan.Plan
		var err error
		st, p, err = e.Plan(req)
		if st != nil {
			st.Warnings = append(recovered, st.Warnings...)
		}
		if err != nil {
			return err
		}
		out = deployData(p)
		if h := p.Hash(); opt.ExpectPlanHash != "" && h != opt.ExpectPlanHash {
			return apperr.New(apperr.ConfirmTokenMismatch, "the plan changed since it was confirmed").
				WithHint("call deploy again, review the new plan, and confirm that one").
				With("confirm_plan_hash", opt.ExpectPlanHash).With("current_plan_hash", h).
				With("next_actions", []string{"call_deploy"})
		}
		if err := checkRefusals(p, opt); err != nil {
			return err
		}
		id, applied, err := e.apply(st, p, opt)
		if err != nil {
			return err
		}
		out.Applied, out.SnapshotID = applied, id
		if !applied {
			out.Reason = "no_changes"
		}
		return nil
	})
	return st, out, err
}

func checkRefusals(p *plan.Plan, opt ApplyOptions) error {
	var adopt, drift []string
	for _, c := range p.Changes {
		switch {
		case c.UpdateKind == plan.UpdateAdopt:
			adopt = append(adopt, c.Path)
		case c.UpdateKind == plan.UpdateDrifted, c.Op == plan.OpDelete && c.Reason == plan.ReasonEdited:
			drift = append(drift, c.Path)
		}
	}
	if len(adopt) > 0 && !opt.Adopt {
		hint := "re-run with --adopt to take them over (their current bytes are saved in the snapshot; `rollback --last` brings them back)"
		if len(drift) > 0 && !opt.Force {
			// Say both at once rather than refusing twice in a row.
			hint = fmt.Sprintf("re-run with --adopt --force: --adopt takes them over, --force also overwrites %d managed file(s) edited by hand (all their bytes are saved in the snapshot)", len(drift))
		}
		return apperr.New(apperr.AdoptConfirmRequired, "%d file(s) exist but are not managed by agentpack; refusing to overwrite them", len(adopt)).
			WithHint("%s", hint).
			With("paths", adopt).With("sample_paths", sample(adopt)).With("flag", "--adopt").With("drifted_paths", drift).
			With("reason_code", "adopt_confirm_required").With("next_actions", []string{"retry_with_adopt"})
	}
	if len(drift) > 0 && !opt.Force {
		return apperr.New(apperr.DriftConflict, "%d managed file(s) were edited since the last deploy; refusing to overwrite them", len(drift)).
			WithHint("review with `agentpack diff`, then re-run with --force (the edited bytes are saved in the snapshot)").
			With("paths", drift).With("sample_paths", sample(drift)).With("flag", "--force").
			With("reason_code", "drift_conflict").With("next_actions", []string{"review_diff", "retry_with_force"})
	}
	return nil
}

func sample(paths []string) []string {
	if len(paths) > 5 {
		return paths[:5]
	}
	return paths
}

// write is one file operation of a transaction.
type write struct {
	change snapshots.FileChange
	data   []byte // nil for a removal
	mode   fs.FileMode
	before []byte // the bytes it replaces (nil when the path is new)
}

// apply runs the transaction of SPEC §6 for p. It returns the snapshot id,
// or applied=false when neither files nor manifests would change.
func (e *Engine) apply(st *State, p *plan.Plan, opt ApplyOptions) (string, bool, error) {
	store := e.Store()
	now := time.Now()
	id := store.NewID(now)
	writes, manifests, err := e.transactionWrites(st, p, id, now)
	if err != nil || len(writes) == 0 {
		return "", false, err
	}

	// Save the bytes every touched path had and gets, in one pack (one write,
	// however many files), then the journal, then write. Before bytes undo
	// this apply; After bytes let `rollback --to` return to exactly what this
	// apply wrote, even after a later hand edit.
	var blobs [][]byte
	for _, w := range writes {
		if w.change.Before != nil {
			blobs = append(blobs, w.before)
		}
		if w.data != nil {
			blobs = append(blobs, w.data)
		}
	}
	if _, err := store.SavePack(id, blobs); err != nil {
		_ = store.DeleteBlobs(id)
		return "", false, apperr.Wrap(err, apperr.IOFailed, "cannot save snapshot bytes").WithHint("check free space under %s", e.Env.StateDir())
	}
	e.checkpoint("pack saved")
	j := &snapshots.Journal{ID: id, Command: opt.Command, PID: os.Getpid(), StartedAt: now.UTC()}
	paths := make([]string, 0, len(writes))
	for _, w := range writes {
		j.Files = append(j.Files, w.change)
		if w.data != nil {
			paths = append(paths, w.change.Path)
		}
	}
	j.CreatedDirs = createdDirs(e.Sys, paths)
	if err := store.WriteJournal(j); err != nil {
		_ = store.DeleteBlobs(id)
		return "", false, err
	}
	e.checkpoint("journal written")
	if err := e.performAll(e.Sys, writes, manifests); err != nil {
		return "", false, e.undoFailedApply(err)
	}
	e.checkpoint("files written")
	rec := &snapshots.Record{ID: id, Kind: snapshots.KindDeploy, CreatedAt: now.UTC(), Command: opt.Command,
		Repo: st.Repo, Project: e.Env.ProjectRoot(),
		Profile: st.Profile, Targets: st.Targets, Machine: st.Req.Machine, Files: j.Files, CreatedDirs: j.CreatedDirs}
	if err := store.Save(rec); err != nil {
		return "", false, e.undoFailedApply(err)
	}
	e.checkpoint("record saved")
	if err := store.RemoveJournal(); err != nil {
		return "", false, err
	}
	e.checkpoint("journal removed")
	e.cacheWritten(writes)
	e.recordRoots(st, liveRoots(st, p), st.Desired.Stale)
	return id, true, nil
}

// undoFailedApply rolls back a transaction whose write failed with err. When
// that fails too, the error says so: files are half-applied and the journal
// stays for the next command to retry.
func (e *Engine) undoFailedApply(err error) error {
	_, rerr := e.recover()
	if rerr == nil {
		return err
	}
	ae := apperr.As(err)
	journal := filepath.Join(e.Env.StateDir(), "journal.json")
	out := apperr.Wrap(err, ae.Code, "%s; rolling the partial apply back failed too (%s): files are half-applied and the journal %s is pending",
		ae.Message, apperr.As(rerr).Message, journal).
		WithHint("fix the cause, then run any agentpack command (or `agentpack doctor --fix`): it rolls the partial apply back first")
	for k, v := range ae.Details {
		out = out.With(k, v)
	}
	return out.With("journal", journal).With("journal_posix", filepath.ToSlash(journal)).
		With("rollback_error", apperr.As(rerr).Message).With("reason_code", "apply_half_done")
}

// transactionWrites turns a plan into the ordered writes of its transaction:
// target files, then the manifests recording them (the last nManifests).
func (e *Engine) transactionWrites(st *State, p *plan.Plan, id string, now time.Time) (writes []write, nManifests int, err error) {
	writes = make([]write, 0, len(p.Changes))
	for _, c := range p.Changes {
		w := write{change: snapshots.FileChange{Target: c.Target, Root: c.Root, Path: c.Path, Op: c.Op}}
		if c.BeforeSHA256 != nil {
			w.before = c.Before
			w.change.Before = &snapshots.Content{SHA256: *c.BeforeSHA256, Size: int64(len(c.Before)), Mode: uint32(e.modeOf(c.Path))}
		}
		if c.Op != plan.OpDelete {
			w.data, w.mode = c.After, c.Mode
			w.change.After = &snapshots.Content{SHA256: *c.AfterSHA256, Size: int64(len(c.After)), Mode: uint32(c.Mode.Perm())}
		}
		writes = append(writes, w)
	}
	manifests, err := e.manifestWrites(st, p, id, now)
	if err != nil {
		return nil, 0, err
	}
	return append(writes, manifests...), len(manifests), nil
}

// performAll runs writes on sys: target files first (in parallel: they are
// independent and the disk, not the CPU, is the limit), then the last
// nManifests manifests that record them. Apply and dry run share it.
func (e *Engine) performAll(sys system.System, writes []write, nManifests int) error {
	files, manifests := writes[:len(writes)-nManifests], writes[len(writes)-nManifests:]
	guard := plan.NewLinkGuard(sys)
	errs := make([]error, len(files))
	workers.Parallel(len(files), func(i int) { errs[i] = e.perform(sys, guard, files[i]) })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for _, w := range manifests {
		if err := e.perform(sys, guard, w); err != nil {
			return err
		}
	}
	return nil
}

// DryRun runs p's transaction against a recording System and returns what
// an apply would write, in order, without touching the disk or the store.
func (e *Engine) DryRun(st *State, p *plan.Plan) ([]system.Op, error) {
	writes, manifests, err := e.transactionWrites(st, p, "dry-run", time.Now())
	if err != nil {
		return nil, err
	}
	sys := system.NewDryRun(e.Sys)
	if err := e.performAll(sys, writes, manifests); err != nil {
		return nil, err
	}
	return sys.Ops(), nil
}

// liveRoots are the desired roots that hold a manifest after an apply.
func liveRoots(st *State, p *plan.Plan) []desired.Root {
	has := map[desired.Root]bool{}
	for _, f := range st.Desired.Files {
		has[desired.Root{Target: f.Target, Path: f.Root}] = true
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

// cacheWritten records the stat identity of files just written, so the next
// status need not re-hash them.
func (e *Engine) cacheWritten(ws []write) {
	cache := plan.LoadStatCache(e.Env.StateDir())
	for _, w := range ws {
		if w.data == nil {
			cache.Forget(w.change.Path)
			continue
		}
		if fi, err := e.Sys.Lstat(w.change.Path); err == nil {
			cache.Record(w.change.Path, fi, w.change.After.SHA256)
		}
	}
	cache.Save()
}

// perform executes one write or removal of a transaction on sys, after
// checking that no folder below its root is a link.
func (e *Engine) perform(sys system.System, guard *plan.LinkGuard, w write) error {
	if err := guard.Check(w.change.Root, w.change.Path); err != nil {
		return err
	}
	if w.data != nil {
		return sys.WriteFile(w.change.Path, w.data, w.mode)
	}
	if err := sys.Remove(w.change.Path); err != nil {
		return err
	}
	pruneEmptyDirs(sys, filepath.Dir(w.change.Path), w.change.Root)
	return nil
}

func (e *Engine) modeOf(path string) fs.FileMode {
	fi, err := e.Sys.Lstat(path)
	if err != nil {
		return 0o644
	}
	return fi.Mode().Perm()
}

// manifestWrites returns the manifest files whose content must change after
// applying p: each root lists the desired files under it.
func (e *Engine) manifestWrites(st *State, p *plan.Plan, id string, now time.Time) ([]write, error) {
	perRoot := map[desired.Root][]plan.ManagedFile{}
	for _, f := range st.Desired.Files {
		r := desired.Root{Target: f.Target, Path: f.Root}
		rel, err := filepath.Rel(f.Root, f.Path)
		if err != nil {
			return nil, apperr.Wrap(err, apperr.Unexpected, "path %s outside root %s", f.Path, f.Root)
		}
		perRoot[r] = append(perRoot[r], plan.ManagedFile{Path: filepath.ToSlash(rel), SHA256: f.SHA256, ModuleIDs: f.ModuleIDs})
	}
	var out []write
	for _, root := range st.Desired.Roots {
		key := desired.Root{Target: root.Target, Path: root.Path}
		files := perRoot[key]
		old := p.Manifests[root]
		if len(files) == 0 && old == nil {
			continue
		}
		if old != nil && sameManaged(old.ManagedFiles, files) {
			continue
		}
		path := filepath.Join(root.Path, plan.TargetManifestName(root.Target))
		data := plan.RenderTargetManifest(root.Target, id, st.Profile, now, files)
		w := write{change: snapshots.FileChange{Target: root.Target, Root: root.Path, Path: path, Op: plan.OpCreate, Manifest: true}, data: data, mode: 0o644}
		if before, err := e.Sys.ReadFile(path); err == nil {
			w.before = before
			w.change.Op = plan.OpUpdate
			w.change.Before = &snapshots.Content{SHA256: checksum.SHA256Hex(before), Size: int64(len(before)), Mode: uint32(e.modeOf(path))}
		}
		w.change.After = &snapshots.Content{SHA256: checksum.SHA256Hex(data), Size: int64(len(data)), Mode: 0o644}
		out = append(out, w)
	}
	// A stale root's manifest goes with the files it listed.
	for _, root := range st.Desired.Stale {
		if p.Manifests[root] == nil {
			continue
		}
		path := filepath.Join(root.Path, plan.TargetManifestName(root.Target))
		before, err := e.Sys.ReadFile(path)
		if err != nil {
			continue
		}
		out = append(out, write{change: snapshots.FileChange{Target: root.Target, Root: root.Path, Path: path, Op: plan.OpDelete, Manifest: true,
			Before: &snapshots.Content{SHA256: checksum.SHA256Hex(before), Size: int64(len(before)), Mode: uint32(e.modeOf(path))}}, before: before})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].change.Path < out[j].change.Path })
	return out, nil
}

func sameManaged(a, b []plan.ManagedFile) bool {
	if len(a) != len(b) {
		return false
	}
	sort.Slice(b, func(i, j int) bool { return b[i].Path < b[j].Path })
	for i := range a {
		if a[i].Path != b[i].Path || a[i].SHA256 != b[i].SHA256 || !slices.Equal(a[i].ModuleIDs, b[i].ModuleIDs) {
			return false
		}
	}
	return true
}

// pruneEmptyDirs removes now-empty folders from dir up to (not including)
// root, so deleting a skill does not leave its empty folder behind.
func pruneEmptyDirs(sys system.System, dir, root string) {
	for desired.Within(root, dir) && dir != root {
		if fi, err := sys.Lstat(dir); err != nil || !fi.IsDir() {
			return // a link is not ours to remove, even when what it names is empty
		}
		entries, err := sys.ReadDir(dir)
		if err != nil || len(entries) > 0 {
			return
		}
		if sys.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}
