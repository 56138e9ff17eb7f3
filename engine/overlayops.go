package engine

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/overlay"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// OverlayRequest names one overlay of one module.
type OverlayRequest struct {
	Request
	ModuleID string
	// Scope is global (default), machine or project.
	Scope string
}

// OverlayPathData is the data of `overlay path`.
type OverlayPathData struct {
	ModuleID        string `json:"module_id"`
	Scope           string `json:"scope"`
	OverlayDir      string `json:"overlay_dir"`
	OverlayDirPosix string `json:"overlay_dir_posix"`
	MachineID       string `json:"machine_id,omitempty"`
	ProjectID       string `json:"project_id,omitempty"`
	Exists          bool   `json:"exists"`
}

// overlayTarget is a module, its upstream files and one of its overlays.
type overlayTarget struct {
	st       *State
	mod      *module.Module
	layer    overlay.Layer
	path     string // the module's upstream source path
	upstream []module.File
	single   bool // the module is one file, not a folder
}

// openOverlay loads only what an overlay command needs: the manifest, the
// module and (when files is set) its upstream files — not the other
// modules, and not this module's overlays, which may be what is broken.
func (e *Engine) openOverlay(ctx context.Context, req OverlayRequest, files bool) (*overlayTarget, error) {
	scope, err := parseOverlayScope(req.Scope)
	if err != nil {
		return nil, err
	}
	m, repo, err := e.LoadManifest(ctx, req.Request)
	if err != nil {
		return nil, err
	}
	st := &State{Req: req.Request, Repo: repo, Project: e.projectRoot(), Manifest: m, Profile: req.Profile}
	if st.Profile == "" {
		st.Profile = "default"
	}
	if err := e.expandPackages(ctx, st, m); err != nil {
		return nil, err
	}
	t := &overlayTarget{st: st}
	if t.mod, err = findModule(m, req.ModuleID); err != nil {
		return nil, err
	}
	lay := e.overlayLayout(repo, req.Request)
	t.layer = overlay.Layer{Scope: scope, Dir: lay.Dir(e.Sys, scope, t.mod.ID)}
	if files {
		if t.path, err = e.modulePath(ctx, st, t.mod); err != nil {
			return nil, err
		}
		within := ""
		if t.mod.Source.LocalPath != nil {
			within = st.Repo
		}
		if t.upstream, err = module.LoadFilesIn(e.Sys, t.mod, t.path, within); err != nil {
			return nil, err
		}
		fi, err := e.Sys.Stat(abs(t.path))
		t.single = err == nil && !fi.IsDir()
	}
	return t, nil
}

func (t *overlayTarget) pathData(e *Engine) OverlayPathData {
	d := OverlayPathData{ModuleID: t.mod.ID, Scope: string(t.layer.Scope), OverlayDir: t.layer.Dir.String(), OverlayDirPosix: t.layer.Dir.ToSlash()}
	switch t.layer.Scope {
	case overlay.Machine:
		d.MachineID = e.MachineID(t.st.Req)
	case overlay.Project:
		d.ProjectID = e.ProjectID()
	}
	fi, err := e.Sys.Lstat(t.layer.Dir)
	d.Exists = err == nil && fi.IsDir()
	return d
}

// OverlayPath locates a module's overlay folder in a scope.
func (e *Engine) OverlayPath(ctx context.Context, req OverlayRequest) (*OverlayPathData, error) {
	t, err := e.openOverlay(ctx, req, false)
	if err != nil {
		return nil, err
	}
	d := t.pathData(e)
	return &d, nil
}

// baselineOf describes the module's current upstream files and where they
// can be found again, for a later rebase; warnings say when they cannot.
func (e *Engine) baselineOf(ctx context.Context, t *overlayTarget) (*overlay.Baseline, []string, error) {
	entries, hash := overlay.TreeHash(t.upstream)
	b := &overlay.Baseline{Version: 2, CreatedAt: time.Now().UTC().Format(time.RFC3339), UpstreamSHA256: hash, FileManifest: entries}
	var warnings []string
	src := t.mod.Source
	switch {
	case src.Git != nil:
		lf, err := t.st.lockfile(e.Sys)
		if err != nil {
			return nil, nil, err
		}
		if lm := lf.Find(t.mod.ID); lm != nil && lm.ResolvedSource.Git != nil {
			g := lm.ResolvedSource.Git
			b.Upstream = &overlay.Source{Kind: "git", URL: g.URL, Commit: g.Commit, Subdir: g.Subdir}
		}
	case src.Package != nil:
		lf, err := t.st.lockfile(e.Sys)
		if err != nil {
			return nil, nil, err
		}
		if lp := lf.FindPackage(src.Package.Name); lp != nil {
			ent, err := e.lockedPackage(ctx, lp)
			if err != nil {
				return nil, nil, err
			}
			rel, _ := filepath.Rel(ent.Dir.String(), t.path)
			b.Upstream = &overlay.Source{Kind: "package", Package: lp.Name, Version: lp.Version, Registry: lp.Registry,
				PackageURL: lp.URL, Checksum: lp.Checksum, Digest: lp.Digest, Artifact: filepath.ToSlash(rel)}
		}
	default:
		u, w, err := e.localBaseline(t)
		if err != nil {
			return nil, nil, err
		}
		b.Upstream, warnings = u, w
	}
	return b, warnings, nil
}

// localBaseline records the desired-state repo's commit for a local_path
// module, warning when the module's files are not committed as they are
// (a later rebase could not find this merge base).
func (e *Engine) localBaseline(t *overlayTarget) (*overlay.Source, []string, error) {
	mp := abs(t.path)
	lr, ok, err := gitsource.OpenLocal(e.Sys, mp.Dir())
	if err != nil || !ok {
		return nil, []string{"the desired-state repo is not a git repository, so `overlay rebase` will not find this overlay's merge base; run `git init` and commit it first"}, err
	}
	rel, err := lr.Top.Rel(mp)
	if err != nil {
		return nil, nil, err
	}
	head, err := lr.Head()
	if err != nil {
		return nil, nil, err
	}
	u := &overlay.Source{Kind: "local_path", RepoRelPath: rel.String()}
	if head == "" {
		return u, []string{"the desired-state repo has no commit yet, so `overlay rebase` will not find this overlay's merge base; commit it first"}, nil
	}
	u.RepoGitRev = &head
	dirty := false
	for _, f := range t.upstream {
		h, err := lr.FileHash(head, t.fileRel(rel.String(), f.Path))
		if err != nil {
			return nil, nil, err
		}
		dirty = dirty || h != gitsource.BlobHash(f.Data)
	}
	u.RepoDirty = &dirty
	if dirty {
		return u, []string{"module " + t.mod.ID + " has uncommitted changes, so `overlay rebase` will not find this overlay's merge base; commit the module, then run `agentpack overlay edit` again to record the baseline"}, nil
	}
	return u, nil, nil
}

// fileRel is an upstream file's path from the git top folder: below the
// module folder, or the module's own path for a single-file module.
func (t *overlayTarget) fileRel(moduleRel, file string) string {
	if t.single {
		return moduleRel
	}
	return moduleRel + "/" + file
}

// mergeBase returns a reader of the files of the upstream a baseline
// describes.
func (e *Engine) mergeBase(ctx context.Context, t *overlayTarget, b *overlay.Baseline) (func(string) ([]byte, bool, error), error) {
	u := b.Upstream
	unsupported := func(why string) error {
		return apperr.New(apperr.OverlayBaselineUnsupported, "the baseline of the %s overlay of %s cannot locate its merge base: %s", t.layer.Scope, t.mod.ID, why).
			WithHint("commit the desired-state repo, copy the overlay's edits aside and recreate its baseline with `agentpack overlay edit %s --scope %s`", t.mod.ID, t.layer.Scope).
			With("module_id", t.mod.ID).With("scope", string(t.layer.Scope))
	}
	fromDir := func(dir string) func(string) ([]byte, bool, error) {
		root := abs(dir)
		fi, err := e.Sys.Stat(root)
		single := err == nil && fi.Mode().IsRegular() // a single-file module
		return func(rel string) ([]byte, bool, error) {
			p := root.Join(fsys.RelPath(rel))
			if single {
				if root.Base() != rel {
					return nil, false, nil
				}
				p = root
			}
			data, err := e.Sys.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, false, nil
			}
			return data, err == nil, err
		}
	}
	switch {
	case u == nil:
		return nil, unsupported("it does not record where the upstream came from")
	case u.Kind == "git":
		dir, err := e.GitCache().Dir(u.URL, u.Commit)
		if errors.Is(err, gitsource.ErrNotCached) {
			var co map[repoRef][2]string
			if co, err = e.checkoutAll(ctx, []repoRef{{u.URL, u.Commit}}); err == nil {
				dir = co[repoRef{u.URL, u.Commit}][1]
			}
		}
		if err != nil {
			return nil, err
		}
		return fromDir(filepath.Join(dir, filepath.FromSlash(u.Subdir))), nil
	case u.Kind == "package":
		ent, err := e.lockedPackage(ctx, &lockfile.Package{Name: u.Package, Version: u.Version, Registry: u.Registry,
			URL: u.PackageURL, Checksum: u.Checksum, Digest: u.Digest})
		if err != nil {
			return nil, err
		}
		return fromDir(filepath.Join(ent.Dir.String(), filepath.FromSlash(u.Artifact))), nil
	case u.Kind == "local_path" && u.RepoGitRev != nil:
		lr, ok, err := gitsource.OpenLocal(e.Sys, abs(t.st.Repo))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, unsupported("the desired-state repo is no longer a git repository")
		}
		rev := *u.RepoGitRev
		return func(rel string) ([]byte, bool, error) {
			return lr.ReadFile(rev, t.fileRel(u.RepoRelPath, rel))
		}, nil
	}
	return nil, unsupported("it records no commit of the desired-state repo")
}
