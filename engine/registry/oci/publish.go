package oci

import (
	"context"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/apperr"
)

// indexAttempts bounds the read-modify-write loop of the index.
const indexAttempts = 3

// Publish implements registry.Registry: it publishes m.Name@m.Version.
func (r *Registry) Publish(ctx context.Context, archive []byte, m *aampkg.Manifest, tag string) (registry.VersionInfo, error) {
	if m == nil {
		return registry.VersionInfo{}, apperr.New(apperr.ManifestInvalid, "publish needs the package manifest")
	}
	return r.PublishMeta(ctx, archive, MetaFromManifest(m), tag)
}

// PublishMeta pushes one package version: the empty config and the archive as
// blobs, then the manifest tagged with the version and with tag (default
// latest), then the index. A version that exists (same semver precedence,
// build metadata aside) is E_PACKAGE_VERSION_EXISTS and nothing is pushed.
func (r *Registry) PublishMeta(ctx context.Context, archive []byte, meta Meta, tag string) (registry.VersionInfo, error) {
	if tag == "" {
		tag = "latest"
	}
	if err := CheckDistTag(tag); err != nil {
		return registry.VersionInfo{}, err
	}
	v, err := semver.StrictNewVersion(meta.Version)
	if err != nil {
		return registry.VersionInfo{}, apperr.New(apperr.ManifestInvalid, "version %q of %s is not semver 2.0", meta.Version, meta.Name)
	}
	if len(archive) > MaxArchiveSize {
		return registry.VersionInfo{}, apperr.New(apperr.ManifestInvalid, "the archive of %s is %d bytes, over the %d limit", meta.Name, len(archive), MaxArchiveSize)
	}
	repo, err := r.packageRepo(meta.Name)
	if err != nil {
		return registry.VersionInfo{}, err
	}
	what := "publish " + meta.Name + "@" + meta.Version
	tags, err := r.listTags(ctx, repo, what)
	if err != nil && !isNotFound(err) {
		return registry.VersionInfo{}, err
	}
	versions, _ := SortedVersions(tags)
	for _, old := range versions {
		if old.Equal(v) {
			return registry.VersionInfo{}, apperr.New(apperr.PackageVersionExists, "%s@%s already exists in registry %s", meta.Name, old.Original(), r.label()).
				WithHint("bump the version in aam.yaml; published versions never change").
				With("package", meta.Name).With("version", old.Original()).With("registry", r.name)
		}
	}
	manifest, layer := PackageManifest(archive, meta)
	if err := r.pushBlob(ctx, repo, emptyConfig, emptyConfigData, what); err != nil {
		return registry.VersionInfo{}, err
	}
	if err := r.pushBlob(ctx, repo, layer, archive, what); err != nil {
		return registry.VersionInfo{}, err
	}
	desc, err := r.pushManifest(ctx, repo, manifest, what, VersionTag(meta.Version), tag)
	if err != nil {
		return registry.VersionInfo{}, err
	}
	deps := meta.Dependencies
	if deps == nil {
		deps = map[string]string{}
	}
	info := registry.VersionInfo{
		Version: meta.Version, Published: r.now().UTC().Format(time.RFC3339), Checksum: layer.Digest.String(),
		Size: layer.Size, Dependencies: deps, Digest: desc.Digest.String(),
	}
	if err := r.updateIndex(ctx, meta, info, tag, append(tags, VersionTag(meta.Version), tag)); err != nil {
		e := apperr.As(err)
		e.Message = meta.Name + "@" + meta.Version + " was published, but the search index was not updated: " + e.Message
		e.Hint = "search will find it once the index is rebuilt (any later publish to this registry rebuilds it)"
		return info, e.With("published", true).With("digest", info.Digest)
	}
	return info, nil
}

// updateIndex adds the new version to the index: read, modify, write, then
// read back to check that no concurrent publisher overwrote it, a bounded
// number of times. A missing or unreadable index is rebuilt from the tags.
func (r *Registry) updateIndex(ctx context.Context, meta Meta, info registry.VersionInfo, tag string, tags []string) error {
	repo, err := r.packageRepo(meta.Name)
	if err != nil {
		return err
	}
	var last error
	for range indexAttempts {
		doc, _, err := r.readIndex(ctx)
		if err != nil {
			return err
		}
		r.refreshIndex(ctx, doc)
		prev := doc.entry(meta.Name)
		e := r.entryFrom(ctx, repo, RepoName(meta.Name), dedupe(tags), prev)
		if e == nil {
			return apperr.New(apperr.Unexpected, "the version just pushed to %s cannot be read back", r.label())
		}
		for i := range e.Versions {
			if e.Versions[i].Version == info.Version {
				e.Versions[i].Published, e.Versions[i].Digest = info.Published, info.Digest
			}
		}
		e.DistTags[tag] = info.Version
		if tag == "latest" {
			e.Latest = info.Version
		}
		doc.upsert(*e)
		if err := r.writeIndex(ctx, doc); err != nil {
			return err
		}
		back, ok, err := r.readIndex(ctx)
		if err == nil && ok && hasVersion(back.entry(meta.Name), info.Version) {
			return nil
		}
		last = err
	}
	if last != nil {
		return last
	}
	return apperr.New(apperr.RegistryUnreachable, "the search index of %s kept changing under concurrent publishes", r.label()).
		With("reason_code", "index_contended")
}

func hasVersion(e *IndexEntry, version string) bool {
	if e == nil {
		return false
	}
	for _, v := range e.Versions {
		if v.Version == version {
			return true
		}
	}
	return false
}

func dedupe(tags []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tags {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
