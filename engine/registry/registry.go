// Package registry is the registry contract shared by the local and OCI
// registries, plus search scoring over their indexes.
package registry

import (
	"context"
	"sort"
	"sync"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// VersionInfo is one published version of a package.
type VersionInfo struct {
	Version   string `json:"version"`
	Published string `json:"published"`
	// Checksum is "sha256:<hex>" of the .aam archive.
	Checksum     string            `json:"checksum"`
	Size         int64             `json:"size"`
	Dependencies map[string]string `json:"dependencies"`
	// Digest is the OCI manifest digest; "" for a local registry.
	Digest string `json:"digest,omitempty"`
}

// PackageInfo is a package as a registry knows it.
type PackageInfo struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	Author        string            `json:"author"`
	License       string            `json:"license"`
	Repository    string            `json:"repository"`
	Keywords      []string          `json:"keywords"`
	DistTags      map[string]string `json:"dist_tags"`
	Versions      []VersionInfo     `json:"versions"`
	ArtifactTypes []string          `json:"artifact_types"`
}

// Hit is one index entry, the unit search scores.
type Hit struct {
	Name          string   `json:"name"`
	Version       string   `json:"version"`
	Description   string   `json:"description"`
	Author        string   `json:"author"`
	ArtifactTypes []string `json:"artifact_types"`
	Keywords      []string `json:"keywords"`
}

// Registry is a store of packages.
type Registry interface {
	Name() string
	URL() string
	// Type is "local" or "oci".
	Type() string
	// Package returns everything known about name; E_PACKAGE_NOT_FOUND.
	Package(ctx context.Context, name string) (*PackageInfo, error)
	// Download returns the verified archive bytes of name@version.
	Download(ctx context.Context, name, version string) ([]byte, VersionInfo, error)
	// Publish stores archive as m.Name@m.Version and points dist-tag tag
	// at it; E_PACKAGE_VERSION_EXISTS when the version exists.
	Publish(ctx context.Context, archive []byte, m *aampkg.Manifest, tag string) (VersionInfo, error)
	// Index lists every package, for search.
	Index(ctx context.Context) ([]Hit, error)
	// Ping checks the registry can be reached; E_REGISTRY_UNREACHABLE.
	Ping(ctx context.Context) error
}

// Config is one [[registries]] entry of config.toml.
type Config struct {
	Name    string `json:"name" toml:"name"`
	URL     string `json:"url" toml:"url"`
	Type    string `json:"type" toml:"type"`
	Default bool   `json:"default" toml:"default"`
}

// Opener opens a registry of one type.
type Opener func(cfg Config, sys fsys.System) (Registry, error)

var (
	mu      sync.RWMutex
	openers = map[string]Opener{}
)

// Register makes Open handle registries of type typ. The engine calls it
// for every implementation it wires (no init functions).
func Register(typ string, open Opener) {
	mu.Lock()
	defer mu.Unlock()
	openers[typ] = open
}

// Types lists the registered registry types, sorted.
func Types() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(openers))
	for t := range openers {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Open opens cfg with the opener of its type.
func Open(cfg Config, sys fsys.System) (Registry, error) {
	mu.RLock()
	open := openers[cfg.Type]
	mu.RUnlock()
	if open == nil {
		return nil, apperr.New(apperr.RegistryNotFound, "registry %q has unknown type %q", cfg.Name, cfg.Type).
			WithHint("use type local or oci in config.toml").With("registry", cfg.Name)
	}
	return open(cfg, sys)
}

// TypeOfURL guesses a registry type from its URL: oci:// is "oci",
// everything else (a path or file://) is "local".
func TypeOfURL(url string) string {
	if len(url) >= 6 && url[:6] == "oci://" {
		return "oci"
	}
	return "local"
}
