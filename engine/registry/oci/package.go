package oci

import (
	"context"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/workers"
)

// packageRepo checks name and returns its repository.
func (r *Registry) packageRepo(name string) (*remote.Repository, error) {
	if !aampkg.ValidName(name) {
		return nil, apperr.New(apperr.InvalidArgument, "%q is not a valid package name", name).
			WithHint("package names look like my-pkg or @scope/my-pkg (lower case, digits, '-')")
	}
	if RepoName(name) == IndexRepo {
		return nil, apperr.New(apperr.InvalidArgument, "the package name %q is reserved for the search index of OCI registries", name).
			WithHint("choose another name")
	}
	return r.repository(RepoName(name))
}

func (r *Registry) notFound(name string) error {
	return apperr.New(apperr.PackageNotFound, "package %s not found in registry %s", name, r.label()).
		WithHint("check the name with agentpack search, or publish it first").
		With("package", name).With("registry", r.name)
}

// Package returns the package name with every version: versions come from
// the tag list, sorted by semver on the client, each read from its manifest
// (digest, checksum, size, dependencies); publish times from the index.
func (r *Registry) Package(ctx context.Context, name string) (*registry.PackageInfo, error) {
	repo, err := r.packageRepo(name)
	if err != nil {
		return nil, err
	}
	tags, err := r.listTags(ctx, repo, "list the versions of "+name)
	if isNotFound(err) {
		return nil, r.notFound(name)
	} else if err != nil {
		return nil, err
	}
	versions, distTags := SortedVersions(tags)
	infos := make([]registry.VersionInfo, len(versions))
	metas := make([]Meta, len(versions))
	errs := make([]error, len(versions))
	workers.Parallel(len(versions), func(i int) {
		infos[i], metas[i], errs[i] = r.versionInfo(ctx, repo, name, VersionTag(versions[i].Original()))
	})
	info := &registry.PackageInfo{Name: name, DistTags: map[string]string{}}
	byDigest := map[string]int{}
	var kept []*semver.Version
	var keptMeta []Meta
	for i := range versions {
		if errs[i] != nil {
			if code := apperr.CodeOf(errs[i]); code == apperr.ManifestInvalid || isNotFound(errs[i]) {
				continue // a tag that is not an agentpack package (or vanished): not a version
			}
			return nil, errs[i]
		}
		byDigest[infos[i].Digest] = len(info.Versions)
		info.Versions = append(info.Versions, infos[i])
		kept = append(kept, versions[i])
		keptMeta = append(keptMeta, metas[i])
	}
	if len(info.Versions) == 0 {
		return nil, r.notFound(name)
	}
	for _, tag := range distTags {
		desc, err := repo.Resolve(ctx, tag)
		if err != nil {
			continue // a dist-tag that cannot be read is left out, not fatal
		}
		if i, ok := byDigest[desc.Digest.String()]; ok {
			info.DistTags[tag] = info.Versions[i].Version
		}
	}
	latest := info.DistTags["latest"]
	if latest == "" {
		latest = highest(kept).Original()
		info.DistTags["latest"] = latest
	}
	r.addPublished(ctx, name, info.Versions)
	for i, v := range info.Versions {
		if v.Version == latest {
			m := keptMeta[i]
			info.Description, info.Author, info.License, info.Repository = m.Description, m.Author, m.License, m.Repository
			info.Keywords, info.ArtifactTypes = nonNil(m.Keywords), nonNil(m.ArtifactTypes)
		}
	}
	return info, nil
}

// versionInfo reads one version's manifest.
func (r *Registry) versionInfo(ctx context.Context, repo *remote.Repository, name, ref string) (registry.VersionInfo, Meta, error) {
	what := name + ":" + ref
	data, desc, err := r.fetchManifest(ctx, repo, ref, "read "+what)
	if err != nil {
		return registry.VersionInfo{}, Meta{}, err
	}
	m, err := parseManifest(data, ArtifactType, LayerMediaType, MaxArchiveSize, what)
	if err != nil {
		return registry.VersionInfo{}, Meta{}, err
	}
	meta := MetaOf(m)
	if meta.Name != name {
		return registry.VersionInfo{}, Meta{}, apperr.New(apperr.ManifestInvalid, "%s holds package %q, not %q", what, meta.Name, name).
			With("reason_code", "oci_name_mismatch")
	}
	if meta.Dependencies == nil {
		meta.Dependencies = map[string]string{}
	}
	return registry.VersionInfo{
		Version: meta.Version, Checksum: m.Layers[0].Digest.String(), Size: m.Layers[0].Size,
		Dependencies: meta.Dependencies, Digest: desc.Digest.String(),
	}, meta, nil
}

// addPublished fills publish times from the index; a missing or unreadable
// index leaves them empty.
func (r *Registry) addPublished(ctx context.Context, name string, versions []registry.VersionInfo) {
	doc, ok, err := r.readIndex(ctx)
	if err != nil || !ok {
		return
	}
	e := doc.entry(name)
	if e == nil {
		return
	}
	for i := range versions {
		for _, iv := range e.Versions {
			if iv.Version == versions[i].Version {
				versions[i].Published = iv.Published
			}
		}
	}
}

// Download returns the verified archive of name at version. version is a
// semver version, a dist-tag such as latest, or a manifest digest
// ("sha256:…", what the lockfile pins): the manifest is checked against
// that digest and the layer against the manifest before any byte is
// returned.
func (r *Registry) Download(ctx context.Context, name, version string) ([]byte, registry.VersionInfo, error) {
	repo, err := r.packageRepo(name)
	if err != nil {
		return nil, registry.VersionInfo{}, err
	}
	ref, err := reference(version)
	if err != nil {
		return nil, registry.VersionInfo{}, err
	}
	info, _, err := r.versionInfo(ctx, repo, name, ref)
	if isNotFound(err) {
		return nil, registry.VersionInfo{}, apperr.New(apperr.PackageNotFound, "%s@%s not found in registry %s", name, version, r.label()).
			WithHint("list the versions with agentpack info %s", name).With("package", name).With("version", version).With("registry", r.name)
	} else if err != nil {
		return nil, registry.VersionInfo{}, err
	}
	layer := ocispec.Descriptor{MediaType: LayerMediaType, Digest: digest.Digest(info.Checksum), Size: info.Size}
	data, err := r.fetchBlob(ctx, repo, layer, "download "+name+"@"+info.Version)
	if isNotFound(err) {
		return nil, registry.VersionInfo{}, apperr.New(apperr.PackageNotFound, "the archive of %s@%s is missing from registry %s", name, info.Version, r.label()).
			With("package", name).With("registry", r.name)
	} else if err != nil {
		return nil, registry.VersionInfo{}, err
	}
	return data, info, nil
}

// reference turns a version, dist-tag or digest into an OCI reference.
func reference(version string) (string, error) {
	switch {
	case strings.HasPrefix(version, "sha256:"):
		if digest.Digest(version).Validate() != nil {
			return "", apperr.New(apperr.InvalidArgument, "%q is not a valid sha256 digest", version)
		}
		return version, nil
	case version == "":
		return "latest", nil
	}
	if v, err := semver.StrictNewVersion(version); err == nil {
		return VersionTag(v.Original()), nil
	}
	if err := CheckDistTag(version); err != nil {
		return "", apperr.New(apperr.InvalidArgument, "%q is neither a version, a dist-tag nor a digest", version)
	}
	return version, nil
}
