package lockfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentpack/agentpack/internal/lazyregexp"
)

// Package is one resolved package pinned by the lockfile.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Registry is the name of the registry it came from ("" for a package
	// installed from a .aam file or a folder).
	Registry string `json:"registry"`
	// URL is where the archive was fetched from: the registry's URL, or the
	// file:// URL of a local archive or folder.
	URL string `json:"url"`
	// Checksum is the archive's "sha256:<hex>"; the cache is keyed by it.
	Checksum string `json:"checksum"`
	// Digest is the OCI manifest digest ("" for local registries).
	Digest string `json:"digest,omitempty"`
	// Dependencies maps each dependency's name to its resolved version.
	Dependencies map[string]string `json:"dependencies"`
	// RequiredBy lists the resolved packages that depend on this one.
	RequiredBy []string `json:"required_by"`
	// Files are the archive's files (aam.yaml excluded) with their hashes.
	Files []PackageFile `json:"files"`
}

// PackageFile is one file of a locked package archive.
type PackageFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

var checksumRe = lazyregexp.New(`^sha256:[0-9a-f]{64}$`)

// FindPackage returns the locked package named name, or nil.
func (l *Lockfile) FindPackage(name string) *Package {
	for i := range l.Packages {
		if l.Packages[i].Name == name {
			return &l.Packages[i]
		}
	}
	return nil
}

// SetPackages replaces the packages section, sorted by name.
func (l *Lockfile) SetPackages(pkgs []Package) { l.Packages = sortedPackages(pkgs) }

// Hex returns the hex part of the package's checksum.
func (p *Package) Hex() string { return strings.TrimPrefix(p.Checksum, "sha256:") }

func (l *Lockfile) validatePackages() error {
	seen := map[string]bool{}
	for i, p := range l.Packages {
		if p.Name == "" || p.Version == "" {
			return fmt.Errorf("packages[%d]: needs a name and a version", i)
		}
		if seen[p.Name] {
			return fmt.Errorf("packages[%d]: %s is locked twice", i, p.Name)
		}
		seen[p.Name] = true
		if !checksumRe.MatchString(p.Checksum) {
			return fmt.Errorf("packages[%d] (%s): checksum must be sha256:<64 hex>", i, p.Name)
		}
		for j, f := range p.Files {
			if f.Path == "" || len(f.SHA256) != 64 {
				return fmt.Errorf("packages[%d] (%s): files[%d] needs a path and a sha256", i, p.Name, j)
			}
		}
	}
	return nil
}

func sortedPackages(pkgs []Package) []Package {
	if len(pkgs) == 0 {
		return nil
	}
	out := make([]Package, len(pkgs))
	for i, p := range pkgs {
		if p.Dependencies == nil {
			p.Dependencies = map[string]string{}
		}
		rb := append([]string{}, p.RequiredBy...)
		slices.Sort(rb)
		p.RequiredBy = rb
		fs := append([]PackageFile{}, p.Files...)
		slices.SortFunc(fs, func(a, b PackageFile) int { return strings.Compare(a.Path, b.Path) })
		p.Files = fs
		out[i] = p
	}
	slices.SortFunc(out, func(a, b Package) int { return strings.Compare(a.Name, b.Name) })
	return out
}
