package oci

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/workers"
)

// IndexSchemaVersion is the version of [IndexDoc]; an index with another
// version is treated as missing and rebuilt.
const IndexSchemaVersion = 1

// maxIndexSize bounds the index download.
const maxIndexSize = 32 << 20

// IndexDoc is the JSON layer of <namespace>/agentpack-index:latest.
type IndexDoc struct {
	SchemaVersion int          `json:"schema_version"`
	UpdatedAt     string       `json:"updated_at"`
	Packages      []IndexEntry `json:"packages"`
}

// IndexEntry is one package in the index.
type IndexEntry struct {
	Name          string            `json:"name"`
	Repository    string            `json:"repository"` // the OCI repository under the namespace
	Description   string            `json:"description"`
	Author        string            `json:"author,omitempty"`
	License       string            `json:"license,omitempty"`
	Source        string            `json:"source,omitempty"` // the package's source repository URL
	Keywords      []string          `json:"keywords"`
	ArtifactTypes []string          `json:"artifact_types"`
	Latest        string            `json:"latest"`
	DistTags      map[string]string `json:"dist_tags"`
	Versions      []IndexVersion    `json:"versions"`
	UpdatedAt     string            `json:"updated_at"`
}

// IndexVersion is one version in the index: the publish time lives here,
// because the manifest's own created annotation is fixed.
type IndexVersion struct {
	Version   string `json:"version"`
	Published string `json:"published,omitempty"`
	Digest    string `json:"digest,omitempty"`
}

// entry returns the index entry of the package name, or nil.
func (d *IndexDoc) entry(name string) *IndexEntry {
	for i := range d.Packages {
		if d.Packages[i].Name == name {
			return &d.Packages[i]
		}
	}
	return nil
}

// upsert replaces or adds e, keeping the packages sorted by name.
func (d *IndexDoc) upsert(e IndexEntry) {
	if old := d.entry(e.Name); old != nil {
		*old = e
		return
	}
	d.Packages = append(d.Packages, e)
	slices.SortFunc(d.Packages, func(a, b IndexEntry) int { return strings.Compare(a.Name, b.Name) })
}

// readIndex fetches the index; ok is false when there is none, or one
// agentpack cannot read (it is then rebuilt).
func (r *Registry) readIndex(ctx context.Context) (doc *IndexDoc, ok bool, err error) {
	repo, err := r.repository(IndexRepo)
	if err != nil {
		return nil, false, err
	}
	what := "read the search index"
	data, _, err := r.fetchManifest(ctx, repo, IndexTag, what)
	if isNotFound(err) {
		return &IndexDoc{SchemaVersion: IndexSchemaVersion}, false, nil
	} else if err != nil {
		return nil, false, err
	}
	m, err := parseManifest(data, IndexArtifactType, IndexMediaType, maxIndexSize, "the search index")
	if err != nil {
		return &IndexDoc{SchemaVersion: IndexSchemaVersion}, false, nil
	}
	blob, err := r.fetchBlob(ctx, repo, m.Layers[0], what)
	if isNotFound(err) {
		return &IndexDoc{SchemaVersion: IndexSchemaVersion}, false, nil
	} else if err != nil {
		return nil, false, err
	}
	doc = &IndexDoc{}
	if json.Unmarshal(blob, doc) != nil || doc.SchemaVersion != IndexSchemaVersion {
		return &IndexDoc{SchemaVersion: IndexSchemaVersion}, false, nil
	}
	return doc, true, nil
}

// writeIndex pushes doc as the new <namespace>/agentpack-index:latest.
func (r *Registry) writeIndex(ctx context.Context, doc *IndexDoc) error {
	repo, err := r.repository(IndexRepo)
	if err != nil {
		return err
	}
	doc.SchemaVersion = IndexSchemaVersion
	return r.pushIndex(ctx, repo, doc)
}

// pushIndex uploads doc as it is.
func (r *Registry) pushIndex(ctx context.Context, repo *remote.Repository, doc *IndexDoc) error {
	what := "update the search index"
	doc.UpdatedAt = r.now().UTC().Format(time.RFC3339)
	blob, _ := json.MarshalIndent(doc, "", "  ")
	layer := ocispec.Descriptor{MediaType: IndexMediaType, Digest: digest.FromBytes(blob), Size: int64(len(blob))}
	if err := r.pushBlob(ctx, repo, emptyConfig, emptyConfigData, what); err != nil {
		return err
	}
	if err := r.pushBlob(ctx, repo, layer, blob, what); err != nil {
		return err
	}
	ann := map[string]string{ocispec.AnnotationTitle: "agentpack index", ocispec.AnnotationCreated: doc.UpdatedAt}
	_, err := r.pushManifest(ctx, repo, marshalManifest(IndexArtifactType, layer, ann), what, IndexTag)
	return err
}

// catalogRepos lists the package repositories directly under the namespace,
// or ok=false when the registry has no usable catalog (GHCR, Docker Hub,
// or a token without catalog scope): then only the index is used.
func (r *Registry) catalogRepos(ctx context.Context) (repos []string, ok bool) {
	reg, err := remote.NewRegistry(r.loc.Host)
	if err != nil {
		return nil, false
	}
	reg.Client = r.client
	reg.PlainHTTP = r.loc.PlainHTTP()
	prefix := ""
	if r.loc.Namespace != "" {
		prefix = r.loc.Namespace + "/"
	}
	err = reg.Repositories(ctx, "", func(page []string) error {
		for _, full := range page {
			name, found := strings.CutPrefix(full, prefix)
			if found && name != "" && !strings.Contains(name, "/") && name != IndexRepo {
				repos = append(repos, name)
			}
		}
		return nil
	})
	return repos, err == nil
}

// refreshIndex adds to doc every package repository the catalog lists that
// the index lacks (published by an older agentpack, another tool, or a
// publish whose index update was lost). Without a catalog doc is kept.
func (r *Registry) refreshIndex(ctx context.Context, doc *IndexDoc) {
	repos, ok := r.catalogRepos(ctx)
	if !ok {
		return
	}
	known := map[string]bool{}
	for _, e := range doc.Packages {
		known[e.Repository] = true
	}
	var missing []string
	for _, repo := range repos {
		if !known[repo] {
			missing = append(missing, repo)
		}
	}
	entries := make([]*IndexEntry, len(missing))
	workers.Parallel(len(missing), func(i int) {
		entries[i] = r.entryFromTags(ctx, missing[i], nil)
	})
	for _, e := range entries {
		if e != nil && doc.entry(e.Name) == nil {
			doc.upsert(*e)
		}
	}
}

// entryFromTags builds the index entry of one repository from its tag list
// and its latest manifest; nil when it holds no agentpack package. prev
// keeps publish times already known.
func (r *Registry) entryFromTags(ctx context.Context, repoName string, prev *IndexEntry) *IndexEntry {
	repo, err := r.repository(repoName)
	if err != nil {
		return nil
	}
	tags, err := r.listTags(ctx, repo, "list the versions of "+repoName)
	if err != nil {
		return nil
	}
	return r.entryFrom(ctx, repo, repoName, tags, prev)
}

// entryFrom builds an index entry from a tag list.
func (r *Registry) entryFrom(ctx context.Context, repo *remote.Repository, repoName string, tags []string, prev *IndexEntry) *IndexEntry {
	versions, distTags := SortedVersions(tags)
	if len(versions) == 0 {
		return nil
	}
	published := map[string]IndexVersion{}
	if prev != nil {
		for _, v := range prev.Versions {
			published[v.Version] = v
		}
	}
	e := &IndexEntry{Repository: repoName, DistTags: map[string]string{}, UpdatedAt: r.now().UTC().Format(time.RFC3339)}
	for _, v := range versions {
		iv := published[v.Original()]
		iv.Version = v.Original()
		e.Versions = append(e.Versions, iv)
	}
	latestRef := VersionTag(highest(versions).Original())
	if slices.Contains(distTags, "latest") {
		latestRef = "latest"
	}
	data, _, err := r.fetchManifest(ctx, repo, latestRef, "read "+repoName+":"+latestRef)
	if err != nil {
		return nil
	}
	m, err := parseManifest(data, ArtifactType, LayerMediaType, MaxArchiveSize, repoName+":"+latestRef)
	if err != nil {
		return nil
	}
	meta := MetaOf(m)
	if meta.Name == "" || RepoName(meta.Name) != repoName {
		return nil
	}
	e.Name, e.Description, e.Author, e.License, e.Source = meta.Name, meta.Description, meta.Author, meta.License, meta.Repository
	e.Keywords, e.ArtifactTypes, e.Latest = nonNil(meta.Keywords), nonNil(meta.ArtifactTypes), meta.Version
	e.DistTags["latest"] = meta.Version
	if prev != nil {
		for tag, v := range prev.DistTags {
			if slices.Contains(distTags, tag) && tag != "latest" {
				e.DistTags[tag] = v
			}
		}
	}
	return e
}

// highest returns the highest stable version, else the highest.
func highest(versions []*semver.Version) *semver.Version {
	for i := len(versions) - 1; i >= 0; i-- {
		if versions[i].Prerelease() == "" {
			return versions[i]
		}
	}
	return versions[len(versions)-1]
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Index returns every package of the registry, for search: the index
// artifact, completed from the catalog when it is missing or stale. It
// writes nothing (search needs no push rights).
func (r *Registry) Index(ctx context.Context) ([]registry.Hit, error) {
	doc, _, err := r.readIndex(ctx)
	if err != nil {
		return nil, err
	}
	r.refreshIndex(ctx, doc)
	hits := make([]registry.Hit, 0, len(doc.Packages))
	for _, e := range doc.Packages {
		hits = append(hits, registry.Hit{Name: e.Name, Version: e.Latest, Description: e.Description, Author: e.Author,
			ArtifactTypes: nonNil(e.ArtifactTypes), Keywords: nonNil(e.Keywords)})
	}
	return hits, nil
}
