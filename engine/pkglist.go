package engine

import (
	"context"
	"path/filepath"
	"sort"

	"github.com/Masterminds/semver/v3"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/engine/resolve"
	"github.com/agentpack/agentpack/internal/apperr"
)

// ListedPackage is one entry of `agentpack list`.
type ListedPackage struct {
	Name          string         `json:"name"`
	Version       string         `json:"version"`
	Source        string         `json:"source"`
	ArtifactCount int            `json:"artifact_count"`
	Artifacts     map[string]int `json:"artifacts"`
	Checksum      string         `json:"checksum"`
	Direct        bool           `json:"direct"`
	RequiredBy    []string       `json:"required_by"`
}

// ListData is the data of `agentpack list`.
type ListData struct {
	Packages []ListedPackage `json:"packages"`
}

// installedState loads agentpack.yaml and the lockfile for the package
// read commands; a missing lockfile is an empty one.
func (e *Engine) installedState(ctx context.Context, req Request) (*manifest.Manifest, *lockfile.Lockfile, error) {
	m, repo, err := e.LoadManifest(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	lf, err := lockfile.LoadOn(e.Sys, abs(filepath.Join(repo, lockfile.FileName)))
	if apperr.CodeOf(err) == apperr.LockfileMissing {
		return m, lockfile.New(), nil
	}
	return m, lf, err
}

// ListPackages lists the installed packages from the lockfile, with the
// artifact counts of their cached archives. It never contacts a registry.
func (e *Engine) ListPackages(ctx context.Context, req Request) (*ListData, []string, error) {
	m, lf, err := e.installedState(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	out := &ListData{Packages: []ListedPackage{}}
	var warnings []string
	for i := range lf.Packages {
		lp := &lf.Packages[i]
		src := lp.Registry
		if src == "" {
			src = lp.URL
		}
		lpkg := ListedPackage{Name: lp.Name, Version: lp.Version, Source: src, Artifacts: map[string]int{}, Checksum: lp.Checksum,
			Direct: m.FindPackage(lp.Name) != nil, RequiredBy: append([]string{}, lp.RequiredBy...)}
		ent, err := e.PackageCache().Get(ctx, lp, nil)
		if err != nil {
			warnings = append(warnings, lp.Name+": "+apperr.As(err).Message+" (artifact counts unknown; `agentpack install` refills the cache)")
		} else {
			for k, as := range ent.Meta.Artifacts {
				if len(as) > 0 {
					lpkg.Artifacts[k] = len(as)
					lpkg.ArtifactCount += len(as)
				}
			}
		}
		out.Packages = append(out.Packages, lpkg)
	}
	return out, warnings, nil
}

// OutdatedPackage is one entry of `agentpack outdated`.
type OutdatedPackage struct {
	Name      string `json:"name"`
	Installed string `json:"installed"`
	Wanted    string `json:"wanted"`
	Latest    string `json:"latest"`
	Registry  string `json:"registry"`
}

// OutdatedData is the data of `agentpack outdated`.
type OutdatedData struct {
	Packages []OutdatedPackage `json:"packages"`
}

// Outdated compares each directly installed package with its registry:
// wanted is the highest version its constraint allows, latest the latest
// dist-tag (else the highest release). Only packages behind either appear.
func (e *Engine) Outdated(ctx context.Context, req Request) (*OutdatedData, []string, error) {
	m, lf, err := e.installedState(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	rs := &registrySet{e: e}
	out := &OutdatedData{Packages: []OutdatedPackage{}}
	var warnings []string
	for _, entry := range m.Packages {
		lp := lf.FindPackage(entry.Name)
		if lp == nil || lp.Registry == "" || isSourceRegistry(lp.Registry) {
			continue
		}
		r, err := rs.named(ctx, lp.Registry)
		if err != nil {
			return nil, warnings, err
		}
		p, err := r.Lookup(ctx, entry.Name)
		if err != nil {
			warnings = append(warnings, entry.Name+": "+apperr.As(err).Message)
			continue
		}
		con, err := resolve.ParseConstraint(entry.Version)
		if err != nil {
			return nil, warnings, err
		}
		wanted, latest := "", ""
		var wv, lv *semver.Version
		for _, v := range p.Versions {
			sv, err := semver.NewVersion(v.Version)
			if err != nil {
				continue
			}
			if con.Match(sv, p.DistTags) && (wv == nil || sv.GreaterThan(wv)) {
				wv, wanted = sv, v.Version
			}
			if sv.Prerelease() == "" && (lv == nil || sv.GreaterThan(lv)) {
				lv, latest = sv, v.Version
			}
		}
		if t, ok := p.DistTags["latest"]; ok {
			latest = t
		}
		if wanted != lp.Version || latest != lp.Version {
			out.Packages = append(out.Packages, OutdatedPackage{Name: entry.Name, Installed: lp.Version, Wanted: wanted, Latest: latest, Registry: lp.Registry})
		}
	}
	sort.Slice(out.Packages, func(i, j int) bool { return out.Packages[i].Name < out.Packages[j].Name })
	return out, warnings, nil
}
