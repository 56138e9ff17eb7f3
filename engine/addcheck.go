package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
)

// CheckNewModule validates a module before `add` writes it, so agentpack.yaml
// never gains an entry that breaks every later command. A relative local
// path is looked up from the working directory first (what a person typing
// it means), then from the repo; it is stored repo-relative when it lies in
// the repo. Files are validated by the same rules as plan. A git source is
// fetched into the cache (a bad url, ref or subdir is refused now, not at
// the next lock) and its module loaded; a package source must name an
// installed package and one of its artifacts.
func (e *Engine) CheckNewModule(ctx context.Context, req Request, mod *module.Module) ([]string, error) {
	var warnings []string
	if !e.supportedAnywhere(mod.Type) {
		warnings = append(warnings, fmt.Sprintf("no target deploys %s modules yet: %s is recorded but writes no files", mod.Type, mod.ID))
	}
	switch {
	case mod.Source.Package != nil:
		return warnings, e.checkPackageModule(ctx, req, mod)
	case mod.Source.Git != nil:
		return warnings, e.checkGitModule(ctx, mod)
	}
	lp := mod.Source.LocalPath
	if lp == nil {
		return warnings, nil
	}
	repo := e.Env.ResolveRepo(req.Repo)
	path := e.Env.ExpandHome(filepath.FromSlash(lp.Path))
	var found string
	switch {
	case filepath.IsAbs(path):
		found = path
	case e.exists(filepath.Join(e.Env.Cwd, path)):
		found = filepath.Join(e.Env.Cwd, path)
	case e.exists(filepath.Join(repo, path)):
		found = filepath.Join(repo, path)
	}
	if found == "" || !e.exists(found) {
		return warnings, apperr.New(apperr.ModuleInvalid, "source path %s does not exist", lp.Path).
			WithHint("give a path relative to the current folder or to the repo %s", repo).
			With("path", lp.Path).With("module_id", mod.ID)
	}
	if rel, err := filepath.Rel(repo, found); err == nil && !strings.HasPrefix(rel, "..") {
		lp.Path = filepath.ToSlash(rel)
	} else {
		lp.Path = filepath.ToSlash(found)
		warnings = append(warnings, fmt.Sprintf("%s is outside the repo %s: the repo now depends on this machine's path", found, repo))
	}
	lm, err := module.LoadModule(e.Sys, mod, found)
	if err != nil {
		return warnings, err
	}
	warnings = append(warnings, lm.Warnings()...)
	return warnings, e.trialCompile(ctx, req, *mod)
}

// trialCompile compiles every profile that would select mod with mod added,
// so `add` refuses a module that collides with another (the same file
// written with other bytes) instead of breaking the next plan.
func (e *Engine) trialCompile(ctx context.Context, req Request, mod module.Module) error {
	m, repo, err := e.LoadManifest(ctx, req)
	if err != nil {
		return err
	}
	m.Modules = append(m.Modules, mod)
	for name := range m.Profiles {
		sel, err := m.SelectModules(name)
		if err != nil || !slices.ContainsFunc(sel, func(x *module.Module) bool { return x.ID == mod.ID }) {
			continue
		}
		if _, err := e.loadFrom(ctx, Request{Repo: req.Repo, Profile: name, Machine: req.Machine}, m, repo, nil); apperr.CodeOf(err) == apperr.DesiredStateConflict {
			return err
		}
	}
	return nil
}

// exists reports whether p, an absolute path, names something, following
// links.
func (e *Engine) exists(p string) bool {
	_, err := e.Sys.Stat(abs(p))
	return err == nil
}

// supportedAnywhere reports whether any registered target renders type t.
func (e *Engine) supportedAnywhere(t module.Type) bool {
	for _, name := range e.Adapters.Names() {
		if tg, err := e.Adapters.Lookup(name); err == nil && tg.Supports(t) {
			return true
		}
	}
	return false
}

// checkGitModule fetches a git module's ref into the cache and loads the
// module from its subdir, so `add` refuses what `lock` would.
func (e *Engine) checkGitModule(ctx context.Context, mod *module.Module) error {
	g := mod.Source.Git
	sub, err := gitsource.CleanSubdir(g.Subdir)
	if err != nil {
		return err
	}
	commit, dir, err := e.checkout(ctx, g.URL, g.Ref)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, filepath.FromSlash(sub))
	if _, err := e.Sys.Stat(abs(path)); err != nil {
		return apperr.New(apperr.ModuleInvalid, "module %q: subdir %q not found in %s at %s", mod.ID, sub, g.URL, ShortHash(commit)).
			WithHint("fix the subdir; `agentpack source add %s` then `source scan` lists what the repo holds", g.URL).
			With("module_id", mod.ID)
	}
	_, err = module.LoadModule(e.Sys, mod, path)
	return err
}
