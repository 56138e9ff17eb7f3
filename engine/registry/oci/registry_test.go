package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

func TestPublishThenPackageDownloadAndIndex(t *testing.T) {
	reg := startRegistry(t, authNone)
	r := open(t, "oci://"+reg.Host+"/team/agentpack", nil)
	ctx := context.Background()
	if err := r.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	v1 := publish(t, r, "@acme/review-kit", "1.0.0", "")
	v2 := publish(t, r, "@acme/review-kit", "1.10.0", "")
	publish(t, r, "@acme/review-kit", "1.2.0", "stable")
	publish(t, r, "@acme/review-kit", "2.0.0-rc.1", "next")

	meta, archive := testMeta("@acme/review-kit", "1.0.0")
	wantManifest, layer := PackageManifest(archive, meta)
	if v1.Digest != digest.FromBytes(wantManifest).String() || v1.Checksum != layer.Digest.String() || v1.Size != int64(len(archive)) {
		t.Errorf("publish returned %+v, want digest %s checksum %s", v1, digest.FromBytes(wantManifest), layer.Digest)
	}

	info, err := r.Package(ctx, "@acme/review-kit")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range info.Versions {
		got = append(got, v.Version)
	}
	if want := []string{"1.0.0", "1.2.0", "1.10.0", "2.0.0-rc.1"}; !slices.Equal(got, want) {
		t.Errorf("versions %v, want %v (semver order)", got, want)
	}
	// latest stays on 1.10.0: the later publishes used other dist-tags.
	if want := map[string]string{"latest": "1.10.0", "stable": "1.2.0", "next": "2.0.0-rc.1"}; !reflect.DeepEqual(info.DistTags, want) {
		t.Errorf("dist tags %v, want %v", info.DistTags, want)
	}
	if info.Versions[0].Digest != v1.Digest || info.Versions[2].Digest != v2.Digest {
		t.Errorf("version digests %+v do not match publish", info.Versions)
	}
	if info.Versions[0].Published != "2026-01-02T03:04:05Z" || info.Versions[0].Dependencies["@acme/base"] != "^1.0.0" {
		t.Errorf("version info %+v lacks publish time or dependencies", info.Versions[0])
	}
	if info.Description != "Review helpers for @acme/review-kit" || !slices.Equal(info.ArtifactTypes, []string{"command", "skill"}) {
		t.Errorf("package info %+v", info)
	}

	data, dl, err := r.Download(ctx, "@acme/review-kit", "1.0.0")
	if err != nil || !bytes.Equal(data, archive) || dl.Digest != v1.Digest {
		t.Fatalf("download: %v %q %+v", err, data, dl)
	}
	// The lockfile pins the digest; a download by digest gives the same bytes.
	data, _, err = r.Download(ctx, "@acme/review-kit", v1.Digest)
	if err != nil || !bytes.Equal(data, archive) {
		t.Fatalf("download by digest: %v", err)
	}
	_, dl, err = r.Download(ctx, "@acme/review-kit", "latest")
	if err != nil || dl.Version != "1.10.0" {
		t.Fatalf("download latest: %v %+v", err, dl)
	}

	hits, err := r.Index(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Name != "@acme/review-kit" || hits[0].Version != "1.10.0" || hits[0].Author != "Acme" {
		t.Errorf("index hits %+v", hits)
	}
}

func TestSameManifestDigestInEveryNamespace(t *testing.T) {
	a, b := startRegistry(t, authNone), startRegistry(t, authNone)
	d1 := publish(t, open(t, "oci://"+a.Host+"/one", nil), "tool", "0.3.1", "").Digest
	d2 := publish(t, open(t, "oci://"+a.Host+"/two/deeper", nil), "tool", "0.3.1", "beta").Digest
	d3 := publish(t, open(t, "oci://"+b.Host, nil), "tool", "0.3.1", "").Digest
	if d1 != d2 || d1 != d3 {
		t.Fatalf("digests differ across namespaces/registries: %s %s %s", d1, d2, d3)
	}
	// And the digest is a pure function of archive + metadata.
	meta, archive := testMeta("tool", "0.3.1")
	m1, _ := PackageManifest(archive, meta)
	meta.Keywords = slices.Clone(meta.Keywords)
	meta.ArtifactTypes = []string{"command", "skill", "command"} // order and duplicates do not matter
	m2, _ := PackageManifest(archive, meta)
	if digest.FromBytes(m1).String() != d1 || !bytes.Equal(m1, m2) {
		t.Fatalf("manifest not reproducible:\n%s\n%s", m1, m2)
	}
	var m map[string]any
	_ = json.Unmarshal(m1, &m)
	if m["artifactType"] != ArtifactType || len(m["layers"].([]any)) != 1 {
		t.Errorf("manifest shape: %s", m1)
	}
}

func TestPublishRefusesAnExistingVersion(t *testing.T) {
	reg := startRegistry(t, authNone)
	r := open(t, "oci://"+reg.Host+"/ns", nil)
	publish(t, r, "kit", "1.0.0", "")
	for _, v := range []string{"1.0.0", "1.0.0+rebuild.2"} {
		meta, archive := testMeta("kit", v)
		archive = append(archive, "changed"...)
		_, err := r.PublishMeta(context.Background(), archive, meta, "")
		e := wantCode(t, err, apperr.PackageVersionExists)
		if !strings.Contains(e.Message, "kit@1.0.0") {
			t.Errorf("message %q does not name the version", e.Message)
		}
	}
	_, dl, err := r.Download(context.Background(), "kit", "1.0.0")
	if _, archive := testMeta("kit", "1.0.0"); err != nil || dl.Size != int64(len(archive)) {
		t.Fatalf("the published version changed: %v %+v", err, dl)
	}
}

func TestBuildMetadataBecomesAValidTag(t *testing.T) {
	reg := startRegistry(t, authNone)
	r := open(t, "oci://"+reg.Host+"/ns", nil)
	publish(t, r, "kit", "1.2.0+build.5", "")
	repo, _ := r.packageRepo("kit")
	tags, err := r.listTags(context.Background(), repo, "list")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(tags)
	if !slices.Equal(tags, []string{"1.2.0_build.5", "latest"}) {
		t.Errorf("tags %v", tags)
	}
	info, err := r.Package(context.Background(), "kit")
	if err != nil || info.Versions[0].Version != "1.2.0+build.5" {
		t.Fatalf("package: %v %+v", err, info)
	}
	if _, _, err := r.Download(context.Background(), "kit", "1.2.0+build.5"); err != nil {
		t.Fatal(err)
	}
}

func TestSortedVersionsIsSemverOrder(t *testing.T) {
	versions, dist := SortedVersions([]string{"1.10.0", "latest", "1.2.0", "v1.0.0", "1.2.0-rc.1", "2.0.0_b.1", "1.2.0_a", "beta", "01.0.0"})
	var got []string
	for _, v := range versions {
		got = append(got, v.Original())
	}
	if want := []string{"1.2.0-rc.1", "1.2.0", "1.2.0+a", "1.10.0", "2.0.0+b.1"}; !slices.Equal(got, want) {
		t.Errorf("versions %v, want %v", got, want)
	}
	if want := []string{"01.0.0", "beta", "latest", "v1.0.0"}; !slices.Equal(dist, want) {
		t.Errorf("dist tags %v, want %v", dist, want)
	}
	if VersionTag("1.0.0-rc.1+sha.abc") != "1.0.0-rc.1_sha.abc" {
		t.Error("VersionTag")
	}
	for _, bad := range []string{"1.0.0", "no/slash", ""} {
		if CheckDistTag(bad) == nil {
			t.Errorf("dist tag %q accepted", bad)
		}
	}
}

func TestPackageNotFoundAndReservedName(t *testing.T) {
	reg := startRegistry(t, authNone)
	r := open(t, "oci://"+reg.Host+"/ns", nil)
	_, err := r.Package(context.Background(), "@nobody/nothing")
	wantCode(t, err, apperr.PackageNotFound)
	_, _, err = r.Download(context.Background(), "@nobody/nothing", "1.0.0")
	wantCode(t, err, apperr.PackageNotFound)
	publish(t, r, "kit", "1.0.0", "")
	_, _, err = r.Download(context.Background(), "kit", "9.9.9")
	wantCode(t, err, apperr.PackageNotFound)
	meta, archive := testMeta(IndexRepo, "1.0.0")
	_, err = r.PublishMeta(context.Background(), archive, meta, "")
	wantCode(t, err, apperr.InvalidArgument)
}

func TestDownloadRefusesCorruptBytes(t *testing.T) {
	reg := startRegistry(t, authNone)
	r := open(t, "oci://"+reg.Host+"/ns", nil)
	info := publish(t, r, "kit", "1.0.0", "")
	reg.CorruptBlobs.Store(true)
	_, _, err := r.Download(context.Background(), "kit", "1.0.0")
	wantCode(t, err, apperr.ChecksumMismatch)
	reg.CorruptBlobs.Store(false)
	// A digest that is not the one published is not found, never other bytes.
	wrong := digest.FromString("other").String()
	_, _, err = r.Download(context.Background(), "kit", wrong)
	wantCode(t, err, apperr.PackageNotFound)
	if _, _, err := r.Download(context.Background(), "kit", info.Digest); err != nil {
		t.Fatal(err)
	}
}

func TestIndexIsRebuiltWhenMissingOrStale(t *testing.T) {
	reg := startRegistry(t, authNone)
	r := open(t, "oci://"+reg.Host+"/ns", nil)
	ctx := context.Background()
	// Push a package the way another tool would: artifact only, no index.
	meta, archive := testMeta("@acme/raw", "0.1.0")
	manifest, layer := PackageManifest(archive, meta)
	repo, _ := r.packageRepo(meta.Name)
	if err := r.pushBlob(ctx, repo, emptyConfig, emptyConfigData, "t"); err != nil {
		t.Fatal(err)
	}
	if err := r.pushBlob(ctx, repo, layer, archive, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.pushManifest(ctx, repo, manifest, "t", VersionTag(meta.Version)); err != nil {
		t.Fatal(err)
	}
	hits, err := r.Index(ctx)
	if err != nil || len(hits) != 1 || hits[0].Name != "@acme/raw" || hits[0].Version != "0.1.0" {
		t.Fatalf("missing index not rebuilt from tags: %v %+v", err, hits)
	}
	if _, ok, _ := r.readIndex(ctx); ok {
		t.Fatal("Index wrote the index: search must not need push rights")
	}
	// A publish writes an index holding both packages.
	publish(t, r, "kit", "1.0.0", "")
	doc, ok, err := r.readIndex(ctx)
	if err != nil || !ok || len(doc.Packages) != 2 || doc.Packages[0].Name != "@acme/raw" || doc.Packages[1].Name != "kit" {
		t.Fatalf("index after publish: %v %+v", err, doc)
	}
	// An index of an unknown schema is treated as missing (stale).
	doc.SchemaVersion = 99
	if err := r.writeIndexRaw(ctx, doc); err != nil {
		t.Fatal(err)
	}
	hits, err = r.Index(ctx)
	if err != nil || len(hits) != 2 {
		t.Fatalf("stale index not rebuilt: %v %+v", err, hits)
	}
}

// writeIndexRaw pushes doc without fixing its schema version.
func (r *Registry) writeIndexRaw(ctx context.Context, doc *IndexDoc) error {
	repo, err := r.repository(IndexRepo)
	if err != nil {
		return err
	}
	return r.pushIndex(ctx, repo, doc)
}

func TestOpenThroughTheRegistryContract(t *testing.T) {
	reg := startRegistry(t, authNone)
	t.Setenv("HOME", t.TempDir())
	t.Setenv(EnvToken, "")
	t.Setenv(EnvDockerConfig, "")
	registry.Register(Type, Open)
	var r registry.Registry
	r, err := registry.Open(registry.Config{Name: "team", URL: "oci://" + reg.Host + "/ns/", Type: registry.TypeOfURL("oci://x")}, fsys.NewRealSystem(fsys.RealSystemOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Type() != "oci" || r.Name() != "team" || r.URL() != "oci://"+reg.Host+"/ns" {
		t.Fatalf("opened %s %s %s", r.Type(), r.Name(), r.URL())
	}
	if err := r.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := &aampkg.Manifest{Name: "@acme/kit", Version: "1.0.0", Description: "A kit", Keywords: []string{"x"},
		Artifacts: map[string][]aampkg.Artifact{"skills": {{Name: "review", Path: "skills/review"}}, "commands": {{Name: "fix", Path: "commands/fix.md"}}}}
	info, err := r.Publish(context.Background(), []byte("archive"), m, "")
	if err != nil {
		t.Fatal(err)
	}
	hits, err := r.Index(context.Background())
	if err != nil || len(hits) != 1 || !slices.Equal(hits[0].ArtifactTypes, []string{"command", "skill"}) {
		t.Fatalf("index %v %+v", err, hits)
	}
	if _, err := registry.Open(registry.Config{Name: "bad", URL: "oci://user:pw@h/x", Type: "oci"}, nil); apperr.CodeOf(err) != apperr.InvalidArgument {
		t.Errorf("a URL with credentials: %v", err)
	}
	if info.Digest == "" || !strings.HasPrefix(info.Checksum, "sha256:") {
		t.Errorf("version info %+v", info)
	}
}
