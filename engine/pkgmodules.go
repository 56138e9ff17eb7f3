package engine

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/pkgcache"
	"github.com/agentpack/agentpack/engine/resolve"
	"github.com/agentpack/agentpack/internal/apperr"
)

// artifactKinds maps aam.yaml's artifact keys to module types, in the order
// modules are made.
var artifactKinds = []struct {
	key string
	typ module.Type
}{
	{"skills", module.TypeSkill}, {"agents", module.TypeAgent}, {"prompts", module.TypePrompt},
	{"instructions", module.TypeInstructions}, {"commands", module.TypeCommand}, {"mcp", module.TypeMCP},
}

// PackageCache is the content-addressed package cache of this engine.
func (e *Engine) PackageCache() *pkgcache.Cache {
	return &pkgcache.Cache{Sys: e.Sys, Root: abs(filepath.Join(e.Env.CacheDir(), "packages")), Extract: e.extractor()}
}

func (e *Engine) extractor() pkgcache.Extractor {
	base := e.ExtractPackage
	if base == nil {
		return func([]byte) (*pkgcache.Extracted, error) {
			return nil, apperr.New(apperr.Unexpected, "this build cannot read package archives")
		}
	}
	return func(archive []byte) (*pkgcache.Extracted, error) {
		ex, err := base(archive)
		if err != nil {
			return nil, err
		}
		adaptAAMAgents(ex)
		return ex, nil
	}
}

// packageModuleID is the id of the module an artifact of a package becomes.
func packageModuleID(t module.Type, pkg, artifact string) string {
	return string(t) + ":" + pkg + "/" + artifact
}

// lockedPackage returns the cache entry of a locked package, verified
// against the lock; it fetches only when the cache lacks it or is damaged.
func (e *Engine) lockedPackage(ctx context.Context, lp *lockfile.Package) (*pkgcache.Entry, error) {
	return e.PackageCache().Get(ctx, lp, e.fetcher(lp))
}

// closure returns the names of the locked packages name needs, itself
// first, then its dependencies breadth first.
func closure(lf *lockfile.Lockfile, name string) []string {
	out := []string{name}
	seen := map[string]bool{name: true}
	for i := 0; i < len(out); i++ {
		lp := lf.FindPackage(out[i])
		if lp == nil {
			continue
		}
		deps := make([]string, 0, len(lp.Dependencies))
		for d := range lp.Dependencies {
			deps = append(deps, d)
		}
		sort.Strings(deps)
		for _, d := range deps {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// pkgUse is how one resolved package is used by the manifest's entries.
type pkgUse struct {
	tags, targets []string
	artifacts     []string // nil: all
	all           bool
}

// expandPackages turns the manifest's packages (and their locked
// dependencies) into modules, one per artifact, read from the verified
// package cache. It never contacts a registry unless the cache lacks an
// archive the lock pins.
func (e *Engine) expandPackages(ctx context.Context, st *State, m *manifest.Manifest) error {
	if len(m.Packages) == 0 {
		return nil
	}
	lf, err := st.lockfile(e.Sys)
	if err != nil {
		if apperr.CodeOf(err) == apperr.LockfileMissing {
			return apperr.New(apperr.LockfileMissing, "agentpack.yaml lists packages but there is no %s", lockfile.FileName).
				WithHint("run `agentpack install` to resolve and lock them")
		}
		return err
	}
	uses := map[string]*pkgUse{}
	var order []string
	profileTags := m.Profiles[st.Profile].IncludeTags
	for _, entry := range m.Packages {
		if lf.FindPackage(entry.Name) == nil {
			return apperr.New(apperr.LockfileMissing, "package %s is in agentpack.yaml but not in %s", entry.Name, lockfile.FileName).
				WithHint("run `agentpack install` to resolve and lock it").With("package", entry.Name)
		}
		tags := entry.Tags
		if len(tags) == 0 {
			tags = profileTags // no tags: every profile deploys it
		}
		for i, name := range closure(lf, entry.Name) {
			u := uses[name]
			if u == nil {
				u = &pkgUse{}
				uses[name] = u
				order = append(order, name)
			}
			u.tags = union(u.tags, tags)
			u.targets = union(u.targets, entry.Targets)
			if i == 0 && len(entry.Artifacts) > 0 {
				u.artifacts = union(u.artifacts, entry.Artifacts)
			} else {
				u.all = true
			}
		}
	}
	sort.Strings(order)
	owner := map[string]string{} // type/name -> package
	ids := map[string]bool{}
	for _, mod := range m.Modules {
		ids[mod.ID] = true
	}
	st.pkgPaths = map[string]string{}
	for _, name := range order {
		lp := lf.FindPackage(name)
		if lp == nil {
			return apperr.New(apperr.LockfileInvalid, "%s needs %s, which is not in %s", strings.Join(requiredBy(lf, name), ", "), name, lockfile.FileName).
				WithHint("run `agentpack install --force` to resolve again").With("package", name)
		}
		ent, err := e.lockedPackage(ctx, lp)
		if err != nil {
			return err
		}
		u := uses[name]
		for _, k := range artifactKinds {
			for _, a := range ent.Meta.Artifacts[k.key] {
				if !u.all && !slices.Contains(u.artifacts, a.Name) {
					continue
				}
				key := string(k.typ) + "/" + a.Name
				if other, ok := owner[key]; ok {
					return apperr.New(apperr.DesiredStateConflict, "packages %s and %s both ship a %s named %q", other, name, k.typ, a.Name).
						WithHint("install only one of them, or limit one with `artifacts:` in its packages entry").
						With("packages", []string{other, name}).With("type", string(k.typ)).With("artifact", a.Name)
				}
				owner[key] = name
				id := packageModuleID(k.typ, name, a.Name)
				if ids[id] {
					return apperr.New(apperr.DesiredStateConflict, "module %s is defined in agentpack.yaml and by package %s", id, name).
						WithHint("remove one of them").With("module_id", id)
				}
				rel, err := cleanArtifactPath(a.Path)
				if err != nil {
					return apperr.New(apperr.ManifestInvalid, "package %s: artifact %s has an unsafe path %q", name, a.Name, a.Path).With("package", name)
				}
				ids[id] = true
				m.Modules = append(m.Modules, module.Module{ID: id, Type: k.typ, Tags: u.tags, Targets: u.targets, DeployName: a.Name,
					Source: module.Source{Package: &module.PackageSource{Name: name, Version: lp.Version, Artifact: a.Name, Registry: lp.Registry}}})
				st.pkgPaths[id] = filepath.Join(ent.Dir.String(), filepath.FromSlash(rel))
			}
		}
	}
	return nil
}

func cleanArtifactPath(p string) (string, error) {
	p = strings.TrimPrefix(strings.TrimSuffix(p, "/"), "./")
	if strings.HasPrefix(p, "/") || p == "" || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") {
		return "", apperr.New(apperr.ManifestInvalid, "unsafe artifact path %q", p)
	}
	return p, nil
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func requiredBy(lf *lockfile.Lockfile, name string) []string {
	var out []string
	for _, p := range lf.Packages {
		if _, ok := p.Dependencies[name]; ok {
			out = append(out, p.Name)
		}
	}
	return out
}

// resolvePackageModule maps a package module to its artifact in the
// verified cache: an expanded package artifact, or a module whose source is
// `package: {name, version, artifact}` and whose package is locked.
func (e *Engine) resolvePackageModule(ctx context.Context, st *State, mod *module.Module) (string, error) {
	if p, ok := st.pkgPaths[mod.ID]; ok {
		return p, nil
	}
	src := mod.Source.Package
	lf, err := st.lockfile(e.Sys)
	if err != nil && apperr.CodeOf(err) != apperr.LockfileMissing {
		return "", err
	}
	var lp *lockfile.Package
	if lf != nil {
		lp = lf.FindPackage(src.Name)
	}
	if lp == nil {
		return "", apperr.New(apperr.LockfileMissing, "module %q uses package %s, which is not installed", mod.ID, src.Name).
			WithHint("run `agentpack install %s` to resolve and lock it", resolve.Spec{Name: src.Name, Constraint: src.Version}).
			With("module_id", mod.ID).With("package", src.Name)
	}
	if src.Version != "" {
		if c, err := resolve.ParseConstraint(src.Version); err == nil && c.Tag() == "" && !matchesVersion(c, lp.Version) {
			st.Warn("module %s wants %s@%s but %s is locked; run `agentpack install %s@%s`", mod.ID, src.Name, src.Version, lp.Version, src.Name, src.Version)
		}
	}
	ent, err := e.lockedPackage(ctx, lp)
	if err != nil {
		return "", err
	}
	var found []pkgcache.Artifact
	for _, k := range artifactKinds {
		if k.typ != mod.Type {
			continue
		}
		for _, a := range ent.Meta.Artifacts[k.key] {
			if a.Name == src.Artifact || src.Artifact == "" {
				found = append(found, a)
			}
		}
	}
	if len(found) != 1 {
		var names []string
		for _, a := range ent.Meta.Artifacts[kindKey(mod.Type)] {
			names = append(names, a.Name)
		}
		return "", apperr.New(apperr.ModuleInvalid, "module %q: package %s@%s has no single %s artifact %q", mod.ID, lp.Name, lp.Version, mod.Type, src.Artifact).
			WithHint("set source.package.artifact to one of: %s", strings.Join(names, ", ")).With("module_id", mod.ID)
	}
	rel, err := cleanArtifactPath(found[0].Path)
	if err != nil {
		return "", err
	}
	return filepath.Join(ent.Dir.String(), filepath.FromSlash(rel)), nil
}

func kindKey(t module.Type) string {
	for _, k := range artifactKinds {
		if k.typ == t {
			return k.key
		}
	}
	return ""
}

func matchesVersion(c *resolve.Constraint, version string) bool {
	v, err := semver.NewVersion(version)
	return err == nil && c.Match(v, nil)
}

// checkPackageModule loads a new `source: package` module from the
// package cache, so `add pkg:...` refuses a package that is not installed
// or an artifact it does not have.
func (e *Engine) checkPackageModule(ctx context.Context, req Request, mod *module.Module) error {
	st := &State{Req: req, Repo: e.Env.ResolveRepo(req.Repo)}
	path, err := e.resolvePackageModule(ctx, st, mod)
	if ae := apperr.As(err); err != nil && ae.Code == apperr.LockfileMissing {
		ae.Code = apperr.PackageNotInstalled
		return ae
	}
	if err != nil {
		return err
	}
	_, err = module.LoadModule(e.Sys, mod, path)
	return err
}
