package engine

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/internal/apperr"
)

// UninstallOptions are the flags of `agentpack uninstall`.
type UninstallOptions struct {
	NoDeploy bool
	// Force removes a package other installed packages depend on (it stays
	// locked as their dependency).
	Force bool
}

// UninstallData is the data of `agentpack uninstall`.
type UninstallData struct {
	PackageName         string         `json:"package_name"`
	Version             string         `json:"version"`
	FilesRemoved        int            `json:"files_removed"`
	RemovedDependencies []PackageRef   `json:"removed_dependencies"`
	DependentsWarning   string         `json:"dependents_warning"`
	Deploy              *PackageDeploy `json:"deploy"`
}

// Uninstall removes a directly installed package from agentpack.yaml, drops
// the dependencies nothing else needs from the lockfile, and deploys the
// deletions in one transaction.
func (e *Engine) Uninstall(ctx context.Context, req Request, name string, opt UninstallOptions) (*UninstallData, []string, error) {
	var out *UninstallData
	var warnings []string
	err := e.WithLock(ctx, "uninstall", func(recovered []string) error {
		warnings = recovered
		var w []string
		var err error
		out, w, err = e.uninstall(ctx, req, name, opt)
		warnings = append(warnings, w...)
		return err
	})
	return out, warnings, err
}

func (e *Engine) uninstall(ctx context.Context, req Request, name string, opt UninstallOptions) (*UninstallData, []string, error) {
	m, repo, err := e.LoadManifest(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	lockPath := abs(filepath.Join(repo, lockfile.FileName))
	lf, err := lockfile.LoadOn(e.Sys, lockPath)
	if apperr.CodeOf(err) == apperr.LockfileMissing {
		lf, err = lockfile.New(), nil
	}
	if err != nil {
		return nil, nil, err
	}
	entry, lp := m.FindPackage(name), lf.FindPackage(name)
	dependents := slices.DeleteFunc(requiredBy(lf, name), func(n string) bool { return n == name })
	if entry == nil {
		if lp != nil {
			return nil, nil, apperr.New(apperr.DependencyConflict, "%s is a dependency of %s, not a package you installed", name, strings.Join(dependents, ", ")).
				WithHint("uninstall %s instead; %s goes with it when nothing else needs it", strings.Join(dependents, " or "), name).
				With("package", name).With("required_by", dependents)
		}
		return nil, nil, notInstalled(name, m)
	}
	out := &UninstallData{PackageName: name, RemovedDependencies: []PackageRef{}}
	if lp != nil {
		out.Version = lp.Version
	}
	if len(dependents) > 0 {
		if !opt.Force {
			return nil, nil, apperr.New(apperr.DependencyConflict, "%s is needed by %s", name, strings.Join(dependents, ", ")).
				WithHint("uninstall those first, or pass --force to drop it from agentpack.yaml (it stays installed as their dependency)").
				With("package", name).With("required_by", dependents)
		}
		out.DependentsWarning = name + " stays installed: " + strings.Join(dependents, ", ") + " depend on it"
	}
	data, err := e.manifestWithout(m, name)
	if err != nil {
		return nil, nil, err
	}
	nm, err := manifest.Parse(data, e.Adapters.Names())
	if err != nil {
		return nil, nil, err
	}
	keep := map[string]bool{}
	for _, p := range nm.Packages {
		for _, n := range closure(lf, p.Name) {
			keep[n] = true
		}
	}
	var pkgs []lockfile.Package
	for _, p := range lf.Packages {
		if keep[p.Name] {
			p.RequiredBy = slices.DeleteFunc(slices.Clone(p.RequiredBy), func(r string) bool { return !keep[r] })
			pkgs = append(pkgs, p)
		} else if p.Name != name {
			out.RemovedDependencies = append(out.RemovedDependencies, PackageRef{p.Name, p.Version})
		}
	}
	sort.Slice(out.RemovedDependencies, func(i, j int) bool { return out.RemovedDependencies[i].Name < out.RemovedDependencies[j].Name })
	nl := *lf
	nl.SetPackages(pkgs)
	lockBytes, err := nl.Marshal()
	if err != nil {
		return nil, nil, err
	}
	dep, warnings, err := e.commitPackages(ctx, req, abs(m.Path), data, lockPath, lockBytes, opt.NoDeploy, ApplyOptions{Command: "uninstall"})
	if err != nil {
		return nil, warnings, err
	}
	out.Deploy = dep
	if dep != nil {
		out.FilesRemoved = dep.Summary.Delete
	}
	return out, warnings, nil
}

func (e *Engine) manifestWithout(m *manifest.Manifest, name string) ([]byte, error) {
	data, err := e.Sys.ReadFile(abs(m.Path))
	if err != nil {
		return nil, err
	}
	doc, err := manifest.OpenDoc(bytesReader(data), abs(m.Path), e.Adapters.Names())
	if err != nil {
		return nil, err
	}
	return doc.RemovePackage(m, name)
}

func notInstalled(name string, m *manifest.Manifest) error {
	var names []string
	for _, p := range m.Packages {
		names = append(names, p.Name)
	}
	hint := "nothing is installed; `agentpack install <name>` installs a package"
	if len(names) > 0 {
		hint = "installed packages: " + strings.Join(names, ", ")
	}
	return apperr.New(apperr.PackageNotInstalled, "package %s is not installed", name).WithHint("%s", hint).With("package", name)
}
