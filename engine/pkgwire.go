package engine

import (
	"context"
	"os"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/engine/pkgcache"
	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/engine/resolve"
	"github.com/agentpack/agentpack/engine/settings"
)

// wirePackages gives a new engine the package format (aampkg) and the
// configured registries (settings + registry.Open).
func (e *Engine) wirePackages() {
	e.ExtractPackage = extractAAM
	e.PackFolder = func(ctx context.Context, dir string) ([]byte, error) {
		archive, _, err := aampkg.Pack(ctx, e.Sys, abs(dir))
		return archive, err
	}
	e.OpenRegistries = e.openRegistries
}

// extractAAM implements pkgcache.Extractor with aampkg's checked reader.
func extractAAM(archive []byte) (*pkgcache.Extracted, error) {
	a, err := aampkg.Extract(archive, aampkg.DefaultLimits)
	if err != nil {
		return nil, err
	}
	m := a.Manifest
	meta := pkgcache.Meta{Name: m.Name, Version: m.Version, Description: m.Description,
		Dependencies: m.Dependencies, Artifacts: map[string][]pkgcache.Artifact{}}
	for kind, as := range m.Artifacts {
		for _, x := range as {
			meta.Artifacts[kind] = append(meta.Artifacts[kind], pkgcache.Artifact{Name: x.Name, Path: x.Path, Description: x.Description})
		}
	}
	out := &pkgcache.Extracted{Meta: meta}
	for _, f := range a.Files {
		out.Files = append(out.Files, pkgcache.File{Path: f.Path, Data: f.Data, Mode: f.Mode})
	}
	return out, nil
}

// openRegistries opens the [[registries]] of config.toml, in file order.
func (e *Engine) openRegistries(ctx context.Context) ([]PackageRegistry, error) {
	s, err := settings.Load(e.Sys, abs(e.Env.AgentpackHome), os.LookupEnv)
	if err != nil {
		return nil, err
	}
	var out []PackageRegistry
	for _, cfg := range s.Registries() {
		r, err := registry.Open(cfg, e.Sys)
		if err != nil {
			return nil, err
		}
		out = append(out, registryAdapter{r})
	}
	return out, nil
}

// registryAdapter implements PackageRegistry over a registry.Registry.
type registryAdapter struct{ r registry.Registry }

func (a registryAdapter) Name() string { return a.r.Name() }
func (a registryAdapter) URL() string  { return a.r.URL() }

// Lookup implements PackageRegistry.
func (a registryAdapter) Lookup(ctx context.Context, name string) (*resolve.Package, error) {
	info, err := a.r.Package(ctx, name)
	if err != nil {
		return nil, err
	}
	p := &resolve.Package{Name: info.Name, Registry: a.r.Name(), DistTags: info.DistTags}
	for _, v := range info.Versions {
		p.Versions = append(p.Versions, resolve.Version{Version: v.Version, Dependencies: v.Dependencies})
	}
	return p, nil
}

// Download implements PackageRegistry.
func (a registryAdapter) Download(ctx context.Context, name, version string) ([]byte, string, error) {
	data, vi, err := a.r.Download(ctx, name, version)
	return data, vi.Digest, err
}
