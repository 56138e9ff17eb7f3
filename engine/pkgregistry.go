package engine

import (
	"context"
	"net/url"
	"strings"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/pkgcache"
	"github.com/agentpack/agentpack/engine/resolve"
	"github.com/agentpack/agentpack/internal/apperr"
)

// PackageRegistry is what installing needs of one configured registry.
type PackageRegistry interface {
	Name() string
	URL() string
	// Lookup returns the registry's metadata of name (E_PACKAGE_NOT_FOUND).
	Lookup(ctx context.Context, name string) (*resolve.Package, error)
	// Download returns the archive of name@version, checked against the
	// registry's own checksum, and its OCI digest ("" for local registries).
	Download(ctx context.Context, name, version string) (archive []byte, digest string, err error)
}

// registrySet opens the configured registries once, on first use: a
// command that finds everything in the lockfile and the cache never opens
// one (offline).
type registrySet struct {
	e      *Engine
	opened bool
	regs   []PackageRegistry
	err    error
}

func (rs *registrySet) all(ctx context.Context) ([]PackageRegistry, error) {
	if !rs.opened {
		rs.opened = true
		if rs.e.OpenRegistries == nil {
			rs.err = notConfigured()
		} else {
			rs.regs, rs.err = rs.e.OpenRegistries(ctx)
			if rs.err == nil && len(rs.regs) == 0 {
				rs.err = notConfigured()
			}
		}
	}
	return rs.regs, rs.err
}

func notConfigured() error {
	return apperr.New(apperr.RegistryNotConfigured, "no package registry is configured").
		WithHint("create one with `agentpack registry init <path> --default` or add one with `agentpack registry add <name> <url>`")
}

func (rs *registrySet) named(ctx context.Context, name string) (PackageRegistry, error) {
	regs, err := rs.all(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range regs {
		if r.Name() == name {
			return r, nil
		}
		names = append(names, r.Name())
	}
	return nil, apperr.New(apperr.RegistryNotFound, "no registry named %q", name).
		WithHint("configured registries: %s", strings.Join(names, ", ")).With("registry", name)
}

// Lookup implements resolve.Source over the registries, in config order.
func (rs *registrySet) Lookup(ctx context.Context, name string) ([]resolve.Package, error) {
	regs, err := rs.all(ctx)
	if err != nil {
		return nil, err
	}
	var out []resolve.Package
	var firstErr error
	for _, r := range regs {
		p, err := r.Lookup(ctx, name)
		if err != nil {
			if apperr.CodeOf(err) != apperr.PackageNotFound && firstErr == nil {
				firstErr = err
			}
			continue
		}
		p.Registry = r.Name()
		out = append(out, *p)
	}
	if len(out) == 0 {
		if firstErr != nil {
			return nil, firstErr
		}
		return nil, apperr.New(apperr.PackageNotFound, "package %s was not found in any registry", name).
			WithHint("`agentpack search %s` lists close names", name).With("package", name)
	}
	return out, nil
}

// fetcher downloads a locked package again: from its registry, or from the
// file or folder it was installed from.
func (e *Engine) fetcher(lp *lockfile.Package) pkgcache.Fetcher {
	rs := &registrySet{e: e}
	return e.fetcherWith(rs, lp)
}

func (e *Engine) fetcherWith(rs *registrySet, lp *lockfile.Package) pkgcache.Fetcher {
	return func(ctx context.Context) ([]byte, error) {
		if lp.Registry == "" || isSourceRegistry(lp.Registry) {
			u, err := url.Parse(lp.URL)
			if err != nil || u.Scheme != "file" {
				return nil, apperr.New(apperr.CacheCorrupted, "package %s@%s is not cached and has no registry to fetch it from", lp.Name, lp.Version).
					WithHint("install it again from its .aam file, folder or <source>/<artifact>").With("package", lp.Name)
			}
			p := abs(u.Path)
			if info, err := e.Sys.Stat(p); err == nil && info.IsDir() && e.PackFolder != nil {
				return e.PackFolder(ctx, u.Path)
			}
			data, err := e.Sys.ReadFile(p)
			if err != nil {
				return nil, apperr.Wrap(err, apperr.PackageNotFound, "cannot read %s to refill the cache for %s", u.Path, lp.Name).
					WithHint("install it again from its .aam file, folder or <source>/<artifact>").With("package", lp.Name)
			}
			return data, nil
		}
		r, err := rs.named(ctx, lp.Registry)
		if err != nil {
			return nil, err
		}
		// An OCI registry's lock pins the manifest digest, not the tag: a
		// re-pushed tag cannot change what the lock installs.
		version := lp.Version
		if lp.Digest != "" {
			version = lp.Digest
		}
		data, _, err := r.Download(ctx, lp.Name, version)
		return data, err
	}
}
