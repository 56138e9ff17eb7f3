package oci

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/internal/apperr"
)

// The media types of agentpack's OCI artifacts.
const (
	// ArtifactType marks a package version manifest.
	ArtifactType = "application/vnd.agentpack.package.v1"
	// LayerMediaType is the one layer of a package: the .aam archive.
	LayerMediaType = "application/vnd.agentpack.package.layer.v1.tar+gzip"
	// IndexArtifactType marks the search index manifest.
	IndexArtifactType = "application/vnd.agentpack.index.v1"
	// IndexMediaType is the one layer of the index: JSON (see [IndexDoc]).
	IndexMediaType = "application/vnd.agentpack.index.v1+json"
)

// The annotation keys agentpack writes. Standard OCI keys where one fits.
const (
	AnnotationName          = "dev.agentpack.package.name"
	AnnotationKeywords      = "dev.agentpack.package.keywords"
	AnnotationArtifactTypes = "dev.agentpack.package.artifact-types"
	AnnotationDependencies  = "dev.agentpack.package.dependencies"
)

// FixedCreated is the org.opencontainers.image.created value of every
// package manifest. A real timestamp would make the digest differ between
// two publishes of the same bytes; the publish time lives in the index.
const FixedCreated = "1970-01-01T00:00:00Z"

// MaxArchiveSize is the largest package layer agentpack downloads (the
// archive limit of the package format).
const MaxArchiveSize = 50 << 20

// maxManifestSize bounds manifest and index downloads.
const maxManifestSize = 4 << 20

// Meta is what a package manifest annotates: everything search and info
// show without downloading the archive.
type Meta struct {
	Name, Version, Description, Author, License, Repository, Homepage string
	Keywords                                                          []string
	ArtifactTypes                                                     []string
	Dependencies                                                      map[string]string
}

// emptyConfig is the OCI empty descriptor ("{}"), the config of artifacts
// that have none. Its data is not inlined: older registries reject it.
var emptyConfig = ocispec.Descriptor{
	MediaType: ocispec.MediaTypeEmptyJSON,
	Digest:    ocispec.DescriptorEmptyJSON.Digest,
	Size:      ocispec.DescriptorEmptyJSON.Size,
}

// emptyConfigData is the content of [emptyConfig].
var emptyConfigData = []byte("{}")

// MetaFromManifest is the part of an aam.yaml that a package manifest
// annotates.
func MetaFromManifest(m *aampkg.Manifest) Meta {
	return Meta{
		Name: m.Name, Version: m.Version, Description: m.Description, Author: m.Author, License: m.License,
		Repository: m.Repository, Homepage: m.Homepage, Keywords: m.Keywords, ArtifactTypes: m.ArtifactTypes(),
		Dependencies: m.Dependencies,
	}
}

// PackageManifest builds the manifest of one package version. It depends
// only on the archive bytes and meta, never on the namespace, the clock or
// the machine, so its digest is reproducible.
func PackageManifest(archive []byte, meta Meta) (data []byte, layer ocispec.Descriptor) {
	sum := sha256.Sum256(archive)
	layer = ocispec.Descriptor{
		MediaType:   LayerMediaType,
		Digest:      digest.NewDigestFromEncoded(digest.SHA256, hex.EncodeToString(sum[:])),
		Size:        int64(len(archive)),
		Annotations: map[string]string{ocispec.AnnotationTitle: aampkg.ArchiveName(meta.Name, meta.Version)},
	}
	ann := map[string]string{
		AnnotationName:                meta.Name,
		ocispec.AnnotationTitle:       meta.Name,
		ocispec.AnnotationVersion:     meta.Version,
		ocispec.AnnotationDescription: meta.Description,
		ocispec.AnnotationCreated:     FixedCreated,
	}
	put := func(k, v string) {
		if v != "" {
			ann[k] = v
		}
	}
	put(ocispec.AnnotationAuthors, meta.Author)
	put(ocispec.AnnotationLicenses, meta.License)
	put(ocispec.AnnotationSource, meta.Repository)
	put(ocispec.AnnotationURL, meta.Homepage)
	put(AnnotationKeywords, strings.Join(meta.Keywords, ","))
	types := slices.Clone(meta.ArtifactTypes)
	slices.Sort(types)
	put(AnnotationArtifactTypes, strings.Join(slices.Compact(types), ","))
	if len(meta.Dependencies) > 0 {
		deps, _ := json.Marshal(meta.Dependencies) // map keys are sorted
		put(AnnotationDependencies, string(deps))
	}
	return marshalManifest(ArtifactType, layer, ann), layer
}

// marshalManifest returns the bytes of an image manifest with the empty
// config and one layer. encoding/json sorts map keys and keeps struct order,
// so equal inputs give equal bytes.
func marshalManifest(artifactType string, layer ocispec.Descriptor, ann map[string]string) []byte {
	m := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: artifactType,
		Config:       emptyConfig,
		Layers:       []ocispec.Descriptor{layer},
		Annotations:  ann,
	}
	data, _ := json.Marshal(m)
	return data
}

// parseManifest checks that data is an image manifest of artifactType with
// exactly one layer of layerType no larger than limit, and returns it.
func parseManifest(data []byte, artifactType, layerType string, limit int64, what string) (ocispec.Manifest, error) {
	var m ocispec.Manifest
	bad := func(why string) (ocispec.Manifest, error) {
		return m, apperr.New(apperr.ManifestInvalid, "%s is not an agentpack artifact: %s", what, why).
			WithHint("it was not published by agentpack; republish it with agentpack publish").
			With("reason_code", "oci_artifact_invalid")
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return bad("its manifest is not JSON")
	}
	switch {
	case m.MediaType != "" && m.MediaType != ocispec.MediaTypeImageManifest:
		return bad("manifest media type " + m.MediaType)
	case m.ArtifactType != artifactType:
		return bad("artifact type " + quoteOrNone(m.ArtifactType))
	case len(m.Layers) != 1:
		return bad("it has " + strconv.Itoa(len(m.Layers)) + " layers, want 1")
	case m.Layers[0].MediaType != layerType:
		return bad("layer media type " + quoteOrNone(m.Layers[0].MediaType))
	case m.Layers[0].Size < 0 || m.Layers[0].Size > limit:
		return bad("its layer is " + strconv.FormatInt(m.Layers[0].Size, 10) + " bytes, over the limit")
	case m.Layers[0].Digest.Validate() != nil || m.Layers[0].Digest.Algorithm() != digest.SHA256:
		return bad("its layer digest is not sha256")
	}
	return m, nil
}

// MetaOf reads the package metadata back from a package manifest's
// annotations.
func MetaOf(m ocispec.Manifest) Meta {
	a := m.Annotations
	meta := Meta{
		Name: a[AnnotationName], Version: a[ocispec.AnnotationVersion], Description: a[ocispec.AnnotationDescription],
		Author: a[ocispec.AnnotationAuthors], License: a[ocispec.AnnotationLicenses],
		Repository: a[ocispec.AnnotationSource], Homepage: a[ocispec.AnnotationURL],
		Keywords: splitList(a[AnnotationKeywords]), ArtifactTypes: splitList(a[AnnotationArtifactTypes]),
	}
	if d := a[AnnotationDependencies]; d != "" {
		_ = json.Unmarshal([]byte(d), &meta.Dependencies) // a bad value reads as no dependencies
	}
	return meta
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func quoteOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return `"` + s + `"`
}
