// Package local is the local registry: a folder in AAM's layout, readable
// and writable by both tools.
//
//	registry.yaml                                {name, type: local, description, api_version: 1, created_at}
//	index.yaml                                   {packages: [{name, description, latest, keywords, artifact_types, updated_at}]}
//	packages/<scope--name>/metadata.yaml         {name, …, dist_tags, versions: [{version, published, checksum, size, dependencies}]}
//	packages/<scope--name>/versions/<version>.aam
//
// Writes are atomic (through the System) and serialised by a lock file in
// the registry folder, so two publishers never lose an index entry.
package local

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Type is the registry type this package implements.
const Type = "local"

// Registry is one local registry.
type Registry struct {
	cfg  registry.Config
	root fsys.AbsPath
	sys  fsys.System
}

// Open opens cfg (a path or file:// URL) on sys.
func Open(cfg registry.Config, sys fsys.System) (registry.Registry, error) {
	root, err := Root(cfg.URL)
	if err != nil {
		return nil, err
	}
	return &Registry{cfg: cfg, root: root, sys: sys}, nil
}

// Root is the folder a local registry URL names.
func Root(u string) (fsys.AbsPath, error) {
	p := u
	if strings.HasPrefix(u, "file://") {
		parsed, err := url.Parse(u)
		if err != nil {
			return "", apperr.Wrap(err, apperr.InvalidArgument, "%q is not a valid file:// URL", u)
		}
		p = parsed.Path
	}
	p = filepath.FromSlash(p)
	if !filepath.IsAbs(p) {
		return "", apperr.New(apperr.InvalidArgument, "a local registry needs an absolute path, got %q", u).
			WithHint("give the registry folder's absolute path or a file:// URL")
	}
	return fsys.AbsPath(filepath.Clean(p)), nil
}

type registryFile struct {
	Name        string `yaml:"name"`
	Type        string `yaml:"type"`
	Description string `yaml:"description"`
	APIVersion  int    `yaml:"api_version"`
	CreatedAt   string `yaml:"created_at"`
}

type indexEntry struct {
	Name          string   `yaml:"name"`
	Description   string   `yaml:"description"`
	Latest        string   `yaml:"latest"`
	Keywords      []string `yaml:"keywords"`
	ArtifactTypes []string `yaml:"artifact_types"`
	UpdatedAt     string   `yaml:"updated_at"`
}

type indexFile struct {
	Packages []indexEntry `yaml:"packages"`
}

type versionEntry struct {
	Version      string            `yaml:"version"`
	Published    string            `yaml:"published"`
	Checksum     string            `yaml:"checksum"`
	Size         int64             `yaml:"size"`
	Dependencies map[string]string `yaml:"dependencies"`
}

type metadataFile struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Author      string            `yaml:"author"`
	License     string            `yaml:"license"`
	Repository  string            `yaml:"repository"`
	Keywords    []string          `yaml:"keywords"`
	DistTags    map[string]string `yaml:"dist_tags"`
	Versions    []versionEntry    `yaml:"versions"`
}

// Init creates an empty registry in root (refusing a folder that already
// holds one) named name.
func Init(sys fsys.System, root fsys.AbsPath, name string, now time.Time) error {
	if _, err := sys.Stat(root.JoinName("registry.yaml")); err == nil {
		return apperr.New(apperr.InvalidArgument, "%s already holds a registry", root).
			WithHint("add it with `agentpack registry add <name> %s`", root).With("path", root.String())
	}
	reg, _ := yaml.Marshal(registryFile{Name: name, Type: Type, APIVersion: 1, CreatedAt: now.UTC().Format(time.RFC3339)})
	if err := sys.WriteFile(root.JoinName("registry.yaml"), reg, 0o644); err != nil {
		return err
	}
	idx, _ := yaml.Marshal(indexFile{Packages: []indexEntry{}})
	return sys.WriteFile(root.JoinName("index.yaml"), idx, 0o644)
}

// Name implements registry.Registry.
func (r *Registry) Name() string { return r.cfg.Name }

// URL implements registry.Registry.
func (r *Registry) URL() string { return r.cfg.URL }

// Type implements registry.Registry.
func (r *Registry) Type() string { return Type }

// Ping implements registry.Registry.
func (r *Registry) Ping(ctx context.Context) error {
	if _, err := r.sys.Stat(r.root.JoinName("index.yaml")); err != nil {
		if _, err2 := r.sys.Stat(r.root.JoinName("registry.yaml")); err2 != nil {
			return apperr.Wrap(err, apperr.RegistryUnreachable, "registry %s (%s) cannot be read", r.cfg.Name, r.root).
				WithHint("check the path, or create it with `agentpack registry init %s`", r.root).With("registry", r.cfg.Name)
		}
	}
	return nil
}

func (r *Registry) pkgDir(name string) fsys.AbsPath {
	return r.root.JoinName("packages").JoinName(aampkg.DiskName(name))
}

func (r *Registry) readYAML(p fsys.AbsPath, v any) error {
	data, err := r.sys.ReadFile(p)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		return apperr.Wrap(err, apperr.RegistryUnreachable, "registry %s: %s is not valid YAML", r.cfg.Name, p).With("registry", r.cfg.Name)
	}
	return nil
}

func (r *Registry) metadata(name string) (*metadataFile, error) {
	var md metadataFile
	err := r.readYAML(r.pkgDir(name).JoinName("metadata.yaml"), &md)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, apperr.New(apperr.PackageNotFound, "package %s is not in registry %s", name, r.cfg.Name).With("package", name).With("registry", r.cfg.Name)
	}
	return &md, err
}

func (r *Registry) index() (*indexFile, error) {
	var idx indexFile
	err := r.readYAML(r.root.JoinName("index.yaml"), &idx)
	if errors.Is(err, fs.ErrNotExist) {
		if perr := r.Ping(context.Background()); perr != nil {
			return nil, perr
		}
		return &indexFile{}, nil
	}
	return &idx, err
}

// Package implements registry.Registry.
func (r *Registry) Package(ctx context.Context, name string) (*registry.PackageInfo, error) {
	md, err := r.metadata(name)
	if err != nil {
		return nil, err
	}
	out := &registry.PackageInfo{Name: md.Name, Description: md.Description, Author: md.Author, License: md.License,
		Repository: md.Repository, Keywords: md.Keywords, DistTags: md.DistTags, ArtifactTypes: []string{}}
	for _, v := range md.Versions {
		out.Versions = append(out.Versions, registry.VersionInfo{Version: v.Version, Published: v.Published, Checksum: v.Checksum, Size: v.Size, Dependencies: v.Dependencies})
	}
	if idx, err := r.index(); err == nil {
		for _, e := range idx.Packages {
			if e.Name == name && e.ArtifactTypes != nil {
				out.ArtifactTypes = e.ArtifactTypes
			}
		}
	}
	return out, nil
}

// Download implements registry.Registry: the archive of name@version
// (version may be a dist-tag), checked against the recorded checksum.
func (r *Registry) Download(ctx context.Context, name, version string) ([]byte, registry.VersionInfo, error) {
	md, err := r.metadata(name)
	if err != nil {
		return nil, registry.VersionInfo{}, err
	}
	if v, ok := md.DistTags[version]; ok {
		version = v
	}
	for _, v := range md.Versions {
		if v.Version != version {
			continue
		}
		vi := registry.VersionInfo{Version: v.Version, Published: v.Published, Checksum: v.Checksum, Size: v.Size, Dependencies: v.Dependencies}
		data, err := r.sys.ReadFile(r.pkgDir(name).JoinName("versions").JoinName(v.Version + ".aam"))
		if err != nil {
			return nil, vi, apperr.Wrap(err, apperr.RegistryUnreachable, "registry %s lists %s@%s but its archive cannot be read", r.cfg.Name, name, v.Version).With("registry", r.cfg.Name)
		}
		if got := "sha256:" + checksum.SHA256Hex(data); v.Checksum != "" && !strings.EqualFold(got, v.Checksum) {
			return nil, vi, apperr.New(apperr.ChecksumMismatch, "%s@%s in registry %s has checksum %s, its metadata says %s", name, v.Version, r.cfg.Name, got, v.Checksum).
				WithHint("the registry's archive was changed or damaged; publish the version again to a new registry or ask its owner").With("package", name)
		}
		return data, vi, nil
	}
	return nil, registry.VersionInfo{}, apperr.New(apperr.PackageNotFound, "%s has no version or dist-tag %q in registry %s", name, version, r.cfg.Name).With("package", name)
}

// Index implements registry.Registry.
func (r *Registry) Index(ctx context.Context) ([]registry.Hit, error) {
	idx, err := r.index()
	if err != nil {
		return nil, err
	}
	out := make([]registry.Hit, 0, len(idx.Packages))
	for _, e := range idx.Packages {
		out = append(out, registry.Hit{Name: e.Name, Version: e.Latest, Description: e.Description, ArtifactTypes: e.ArtifactTypes, Keywords: e.Keywords})
	}
	return out, nil
}

// Publish implements registry.Registry.
func (r *Registry) Publish(ctx context.Context, archive []byte, m *aampkg.Manifest, tag string) (registry.VersionInfo, error) {
	if err := r.Ping(ctx); err != nil {
		return registry.VersionInfo{}, err
	}
	unlock, err := r.lock(ctx)
	if err != nil {
		return registry.VersionInfo{}, err
	}
	defer unlock()
	if tag == "" {
		tag = "latest"
	}
	md, err := r.metadata(m.Name)
	if apperr.CodeOf(err) == apperr.PackageNotFound {
		md, err = &metadataFile{Name: m.Name, DistTags: map[string]string{}}, nil
	}
	if err != nil {
		return registry.VersionInfo{}, err
	}
	for _, v := range md.Versions {
		if v.Version == m.Version {
			return registry.VersionInfo{}, apperr.New(apperr.PackageVersionExists, "%s@%s is already in registry %s", m.Name, m.Version, r.cfg.Name).
				WithHint("bump version in aam.yaml; published versions never change").With("package", m.Name).With("version", m.Version)
		}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	vi := registry.VersionInfo{Version: m.Version, Published: now, Checksum: "sha256:" + checksum.SHA256Hex(archive), Size: int64(len(archive)), Dependencies: m.Dependencies}
	if vi.Dependencies == nil {
		vi.Dependencies = map[string]string{}
	}
	md.Description, md.Author, md.License, md.Repository, md.Keywords = m.Description, m.Author, m.License, m.Repository, m.Keywords
	if md.DistTags == nil {
		md.DistTags = map[string]string{}
	}
	md.DistTags[tag] = m.Version
	md.Versions = append(md.Versions, versionEntry{Version: vi.Version, Published: vi.Published, Checksum: vi.Checksum, Size: vi.Size, Dependencies: vi.Dependencies})
	dir := r.pkgDir(m.Name)
	if err := r.sys.WriteFile(dir.JoinName("versions").JoinName(m.Version+".aam"), archive, 0o644); err != nil {
		return vi, err
	}
	data, _ := yaml.Marshal(md)
	if err := r.sys.WriteFile(dir.JoinName("metadata.yaml"), data, 0o644); err != nil {
		return vi, err
	}
	idx, err := r.index()
	if err != nil {
		return vi, err
	}
	entry := indexEntry{Name: m.Name, Description: m.Description, Latest: md.DistTags["latest"], Keywords: m.Keywords, ArtifactTypes: m.ArtifactTypes(), UpdatedAt: now}
	if entry.Latest == "" {
		entry.Latest = m.Version
	}
	replaced := false
	for i := range idx.Packages {
		if idx.Packages[i].Name == m.Name {
			idx.Packages[i], replaced = entry, true
		}
	}
	if !replaced {
		idx.Packages = append(idx.Packages, entry)
	}
	sort.Slice(idx.Packages, func(i, j int) bool { return idx.Packages[i].Name < idx.Packages[j].Name })
	data, _ = yaml.Marshal(idx)
	return vi, r.sys.WriteFile(r.root.JoinName("index.yaml"), data, 0o644)
}

// lock takes the registry's lock file, waiting up to 10 s for another
// publisher.
func (r *Registry) lock(ctx context.Context) (func(), error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		unlock, ok, err := fsys.TryLock(r.root.JoinName(".agentpack-registry.lock"))
		if err != nil {
			return nil, err
		}
		if ok {
			return func() { _ = unlock() }, nil
		}
		if time.Now().After(deadline) {
			return nil, apperr.New(apperr.Locked, "registry %s is being written by another publisher", r.cfg.Name).WithHint("try again in a moment")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
