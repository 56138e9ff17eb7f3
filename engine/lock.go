package engine

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"sync"

	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// LockedModule is one module of the lock/fetch/update data.
type LockedModule struct {
	ID              string                  `json:"id"`
	Type            string                  `json:"type"`
	ResolvedSource  lockfile.ResolvedSource `json:"resolved_source"`
	ResolvedVersion string                  `json:"resolved_version"`
	SHA256          string                  `json:"sha256"`
	// PreviousVersion is the version the lockfile had before, when it moved.
	PreviousVersion string `json:"previous_version,omitempty"`
}

// LockData is the data of `agentpack lock`, `fetch` and `update`.
type LockData struct {
	Lockfile      string         `json:"lockfile"`
	LockfilePosix string         `json:"lockfile_posix"`
	Modules       []LockedModule `json:"modules"`
	Fetched       int            `json:"fetched"`
}

// GitCache is the immutable checkout cache under $AGENTPACK_HOME/cache/git.
func (e *Engine) GitCache() *gitsource.Cache {
	return &gitsource.Cache{Root: filepath.Join(e.Env.CacheDir(), "git"), System: e.Sys}
}

// maxParallelFetches bounds concurrent git fetches.
const maxParallelFetches = 4

type repoRef struct{ url, ref string }

// checkoutAll fetches each distinct (url, ref) once, in parallel (bounded),
// reporting progress as repos finish.
func (e *Engine) checkoutAll(ctx context.Context, refs []repoRef) (map[repoRef][2]string, error) {
	out := make(map[repoRef][2]string, len(refs))
	var mu sync.Mutex
	var errs []error
	sem := make(chan struct{}, maxParallelFetches)
	var wg sync.WaitGroup
	done := 0
	for _, r := range refs {
		wg.Add(1)
		go func(r repoRef) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			commit, dir, err := e.checkout(ctx, r.url, r.ref)
			mu.Lock()
			defer mu.Unlock()
			done++
			if e.Progress != nil {
				e.Progress(done, len(refs), r.url)
			}
			if err != nil {
				errs = append(errs, err)
				return
			}
			out[r] = [2]string{commit, dir}
		}(r)
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return out, nil
}

// Lock resolves every module's source to exact bytes and writes
// agentpack.lock.json: git refs become commits, every file gets a sha256.
func (e *Engine) Lock(ctx context.Context, req Request) (*LockData, []string, error) {
	return e.syncSources(ctx, req, "lock", true, false)
}

// Fetch fills the cache with every git checkout the lockfile pins and
// verifies them against it.
func (e *Engine) Fetch(ctx context.Context, req Request) (*LockData, []string, error) {
	return e.syncSources(ctx, req, "fetch", false, true)
}

// Update re-resolves every source (lock) and fills the cache (fetch).
func (e *Engine) Update(ctx context.Context, req Request) (*LockData, []string, error) {
	return e.syncSources(ctx, req, "update", true, true)
}

// syncSources is lock, fetch and update under the state lock: relock
// re-resolves sources into a new lockfile, fetch fills and verifies the cache
// for the lockfile (new or existing).
func (e *Engine) syncSources(ctx context.Context, req Request, command string, relock, fetch bool) (*LockData, []string, error) {
	var out *LockData
	var warnings []string
	ctx = withCheckouts(ctx)
	e.prefetchSync(ctx, req, relock, fetch)
	err := e.WithLock(ctx, command, func(recovered []string) error {
		warnings = recovered
		m, repo, err := e.LoadManifest(ctx, req)
		if err != nil {
			return err
		}
		warnings = append(warnings, m.Warnings...)
		path := filepath.Join(repo, lockfile.FileName)
		var lf *lockfile.Lockfile
		prev, _ := lockfile.LoadOn(e.Sys, abs(path))
		if relock {
			// lock keeps the pins of modules whose source did not change;
			// update moves every pin.
			keep := prev
			if fetch {
				keep = nil
			}
			lf, err = e.lockModules(ctx, m, repo, keep)
		} else {
			lf, err = lockfile.LoadOn(e.Sys, abs(path))
		}
		if err != nil {
			return err
		}
		if relock && prev != nil {
			lf.Packages = prev.Packages // install/uninstall own the packages section
		}
		fetched := 0
		if fetch {
			if fetched, err = e.fetchLocked(ctx, lf); err != nil {
				return err
			}
		}
		if relock {
			if err := lf.SaveOn(e.Sys, abs(path)); err != nil {
				return err
			}
		}
		out = lockData(lf, path)
		out.Fetched = fetched
		warnings = append(warnings, e.takeRepairs()...)
		for i, lm := range out.Modules {
			if prev == nil {
				break
			}
			if pm := prev.Find(lm.ID); pm != nil && pm.ResolvedVersion != lm.ResolvedVersion {
				out.Modules[i].PreviousVersion = pm.ResolvedVersion
			}
		}
		return nil
	})
	return out, warnings, err
}

func (e *Engine) lockModules(ctx context.Context, m *manifest.Manifest, repo string, prev *lockfile.Lockfile) (*lockfile.Lockfile, error) {
	refs, want, err := lockWants(m, prev)
	if err != nil {
		return nil, err
	}
	checkouts, err := e.checkoutAll(ctx, refs)
	if err != nil {
		return nil, err
	}
	lf := lockfile.New()
	for _, mod := range m.Modules {
		lm := lockfile.Module{ID: mod.ID, Type: string(mod.Type)}
		var dir string
		switch {
		case mod.Source.LocalPath != nil:
			dir = e.Env.ExpandHome(mod.Source.LocalPath.Path)
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(repo, filepath.FromSlash(dir))
			}
			lm.ResolvedSource.LocalPath = &lockfile.LocalPathSource{Path: filepath.ToSlash(mod.Source.LocalPath.Path)}
			lm.ResolvedVersion = "local"
		case mod.Source.Git != nil:
			g := mod.Source.Git
			co := checkouts[want[mod.ID]]
			sub, _ := gitsource.CleanSubdir(g.Subdir)
			dir = filepath.Join(co[1], filepath.FromSlash(sub))
			if _, err := e.Sys.Stat(abs(dir)); err != nil {
				return nil, apperr.New(apperr.ModuleInvalid, "module %q: subdir %q not found in %s at %s", mod.ID, sub, g.URL, ShortHash(co[0])).
					WithHint("fix source.git.subdir; `agentpack source add %s` then `source scan` lists what the repo holds", g.URL).
					With("module_id", mod.ID)
			}
			lm.ResolvedSource.Git = &lockfile.GitSource{URL: g.URL, Commit: co[0], Subdir: sub, Ref: g.Ref}
			lm.ResolvedVersion = co[0]
		default:
			// Package modules are pinned by the lockfile's packages section.
			continue
		}
		files, err := lockfile.HashDirOn(e.Sys, abs(dir))
		if err != nil {
			return nil, apperr.Wrap(err, apperr.ModuleInvalid, "module %q: cannot hash %s", mod.ID, dir).
				WithHint("check that the source path exists").With("module_id", mod.ID)
		}
		lm.FileManifest, lm.SHA256 = files, lockfile.ModuleHash(files)
		lf.Upsert(lm)
	}
	return lf, nil
}

// lockWants lists what lock checks out for m: each distinct (url, ref),
// sorted, and which one each git module uses; prev's pins are kept for
// modules whose source did not change.
func lockWants(m *manifest.Manifest, prev *lockfile.Lockfile) ([]repoRef, map[string]repoRef, error) {
	var refs []repoRef
	seen := map[repoRef]bool{}
	want := map[string]repoRef{} // module id → what to check out
	for _, mod := range m.Modules {
		if g := mod.Source.Git; g != nil {
			sub, err := gitsource.CleanSubdir(g.Subdir)
			if err != nil {
				return nil, nil, err
			}
			r := repoRef{g.URL, g.Ref}
			if pin := keptPin(prev, mod.ID, g, sub); pin != "" {
				r = repoRef{g.URL, pin}
			}
			want[mod.ID] = r
			if !seen[r] {
				seen[r] = true
				refs = append(refs, r)
			}
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].url+refs[i].ref < refs[j].url+refs[j].ref })
	return refs, want, nil
}

// keptPin returns the commit prev pins for a git module whose url, subdir
// and ref are unchanged ("" when it must be resolved again).
func keptPin(prev *lockfile.Lockfile, id string, g *module.GitSource, sub string) string {
	if prev == nil {
		return ""
	}
	pm := prev.Find(id)
	if pm == nil || pm.ResolvedSource.Git == nil {
		return ""
	}
	pg := pm.ResolvedSource.Git
	if pg.URL != g.URL || pg.Subdir != sub || pg.Commit == "" || (pg.Ref != "" && pg.Ref != g.Ref) {
		return ""
	}
	return pg.Commit
}

func lockData(lf *lockfile.Lockfile, path string) *LockData {
	out := &LockData{Lockfile: path, LockfilePosix: filepath.ToSlash(path), Modules: []LockedModule{}}
	for _, m := range lf.Modules {
		out.Modules = append(out.Modules, LockedModule{ID: m.ID, Type: m.Type, ResolvedSource: m.ResolvedSource, ResolvedVersion: m.ResolvedVersion, SHA256: m.SHA256})
	}
	return out
}

// fetchLocked fills the cache with every commit lf pins and checks each
// module's files against lf. A checkout that fails its own verification is
// downloaded again by the checkout; one that passes it but disagrees with
// lf (its files and marker were both rewritten) is downloaded again once
// here, and only a second disagreement is E_CHECKSUM_MISMATCH. Repairs
// become warnings ([Engine.takeRepairs]).
func (e *Engine) fetchLocked(ctx context.Context, lf *lockfile.Lockfile) (int, error) {
	refs := pinnedRefs(lf)
	co, err := e.checkoutAll(ctx, refs)
	if err != nil {
		return 0, err
	}
	repaired := map[repoRef]bool{}
	for _, m := range lf.Modules {
		g := m.ResolvedSource.Git
		if g == nil {
			continue
		}
		key := repoRef{g.URL, g.Commit}
		err := e.GitCache().VerifySubdir(co[key][1], g.Subdir, m.FileManifest)
		if apperr.CodeOf(err) == apperr.ChecksumMismatch && !repaired[key] {
			repaired[key] = true
			var dir string
			if dir, err = e.repair(ctx, g.URL, g.Commit); err == nil {
				co[key] = [2]string{g.Commit, dir}
				err = e.GitCache().VerifySubdir(dir, g.Subdir, m.FileManifest)
			}
		}
		if err != nil {
			return 0, err
		}
	}
	return len(refs), nil
}

// repair downloads commit of url again in place of its cached checkout.
func (e *Engine) repair(ctx context.Context, url, commit string) (string, error) {
	opt, err := e.fetchOptions()
	if err != nil {
		return "", err
	}
	return e.GitCache().Repair(ctx, url, commit, opt)
}

// resolveLocked maps a git module to its verified cached checkout, fetching
// the pinned commit when the cache lacks it. Plan and deploy use exactly the
// locked bytes, offline once fetched.
func (e *Engine) resolveLocked(ctx context.Context, st *State, mod *module.Module) (string, error) {
	if mod.Source.Package != nil {
		return e.resolvePackageModule(ctx, st, mod)
	}
	lf, err := st.lockfile(e.Sys)
	if err != nil {
		if apperr.CodeOf(err) == apperr.LockfileMissing {
			return "", apperr.New(apperr.LockfileMissing, "module %q comes from git but there is no %s", mod.ID, lockfile.FileName).
				WithHint("run `agentpack lock` (or `agentpack update`) to pin it").With("module_id", mod.ID)
		}
		return "", err
	}
	lm := lf.Find(mod.ID)
	if lm == nil || lm.ResolvedSource.Git == nil {
		return "", apperr.New(apperr.LockfileMissing, "module %q is not in %s", mod.ID, lockfile.FileName).
			WithHint("run `agentpack lock` to pin it").With("module_id", mod.ID)
	}
	g := lm.ResolvedSource.Git
	if !lockMatches(mod, lm) {
		st.Warn("module %s: agentpack.yaml changed its git source since the lockfile was written; run `agentpack lock`", mod.ID)
	}
	dir, err := e.GitCache().Dir(g.URL, g.Commit)
	if errors.Is(err, gitsource.ErrNotCached) {
		var co map[repoRef][2]string
		co, err = e.checkoutAll(ctx, []repoRef{{g.URL, g.Commit}})
		if err == nil {
			dir = co[repoRef{g.URL, g.Commit}][1]
		}
	}
	if err != nil {
		return "", err
	}
	if err := e.GitCache().VerifySubdir(dir, g.Subdir, lm.FileManifest); err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.FromSlash(g.Subdir)), nil
}

// lockMatches reports whether a lockfile entry still describes mod's source
// (url, subdir and, when recorded, ref).
func lockMatches(mod *module.Module, lm *lockfile.Module) bool {
	g, pg := mod.Source.Git, lm.ResolvedSource.Git
	if g == nil || pg == nil {
		return g == nil && pg == nil
	}
	return pg.URL == g.URL && pg.Subdir == cleanSub(g.Subdir) && (pg.Ref == "" || pg.Ref == g.Ref)
}

func cleanSub(s string) string {
	c, err := gitsource.CleanSubdir(s)
	if err != nil {
		return s
	}
	return c
}

// lockfile loads the repo's lockfile once per State.
func (st *State) lockfile(sys fsys.System) (*lockfile.Lockfile, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.lock == nil {
		lf, err := lockfile.LoadOn(sys, abs(filepath.Join(st.Repo, lockfile.FileName)))
		if err != nil {
			return nil, err
		}
		st.lock = lf
	}
	return st.lock, nil
}
