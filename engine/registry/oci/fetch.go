package oci

import (
	"bytes"
	"context"
	"io"
	"strconv"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/agentpack/agentpack/internal/apperr"
)

// listTags returns every tag of repo, errNotFound when the repository does
// not exist.
func (r *Registry) listTags(ctx context.Context, repo *remote.Repository, what string) ([]string, error) {
	var tags []string
	err := repo.Tags(ctx, "", func(page []string) error {
		tags = append(tags, page...)
		return nil
	})
	return tags, r.fail(err, what)
}

// fetchManifest fetches the manifest at reference (a tag or a digest) and
// checks that its bytes match the digest the registry gave, and the
// digest asked for when reference is one.
func (r *Registry) fetchManifest(ctx context.Context, repo *remote.Repository, reference, what string) ([]byte, ocispec.Descriptor, error) {
	desc, rc, err := repo.FetchReference(ctx, reference)
	if err != nil {
		return nil, desc, r.fail(err, what)
	}
	defer rc.Close()
	if desc.Size > maxManifestSize {
		return nil, desc, apperr.New(apperr.ManifestInvalid, "the manifest of %s is %d bytes, over the %d limit", what, desc.Size, maxManifestSize)
	}
	data, err := io.ReadAll(io.LimitReader(rc, maxManifestSize+1))
	if err != nil {
		return nil, desc, r.fail(err, what)
	}
	got := digest.FromBytes(data)
	want := desc.Digest
	if d, err := digest.Parse(reference); err == nil {
		want = d
	}
	if got != want || (desc.Digest != "" && got != desc.Digest) {
		return nil, desc, apperr.New(apperr.ChecksumMismatch, "the manifest of %s has digest %s, expected %s", what, got, want).
			WithHint("the registry served other bytes than it announced; try again, or report it to the registry's operator").
			With("expected", want.String()).With("actual", got.String()).With("reason_code", "manifest_digest_mismatch")
	}
	desc.Digest, desc.Size = got, int64(len(data))
	return data, desc, nil
}

// fetchBlob downloads the blob desc and checks its size and sha256.
func (r *Registry) fetchBlob(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, what string) ([]byte, error) {
	rc, err := repo.Blobs().Fetch(ctx, desc)
	if err != nil {
		return nil, r.fail(err, what)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, desc.Size+1))
	if err != nil {
		return nil, r.fail(err, what)
	}
	if got := digest.FromBytes(data); int64(len(data)) != desc.Size || got != desc.Digest {
		return nil, apperr.New(apperr.ChecksumMismatch, "%s: downloaded %d bytes with digest %s, expected %d bytes with %s", what, len(data), got, desc.Size, desc.Digest).
			WithHint("nothing was installed; try again, and if it persists the registry holds corrupt data").
			With("expected", desc.Digest.String()).With("actual", got.String()).With("reason_code", "blob_digest_mismatch")
	}
	return data, nil
}

// pushBlob uploads data unless the registry has it already.
func (r *Registry) pushBlob(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, data []byte, what string) error {
	ok, err := repo.Blobs().Exists(ctx, desc)
	if err != nil && !isNotFound(err) {
		return r.fail(err, what)
	}
	if ok {
		return nil
	}
	return r.fail(repo.Blobs().Push(ctx, desc, bytes.NewReader(data)), what)
}

// pushManifest uploads manifest bytes under each tag.
func (r *Registry) pushManifest(ctx context.Context, repo *remote.Repository, data []byte, what string, tags ...string) (ocispec.Descriptor, error) {
	desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(data), Size: int64(len(data))}
	for _, tag := range tags {
		if err := repo.PushReference(ctx, desc, bytes.NewReader(data), tag); err != nil {
			return desc, r.fail(err, what+" (tag "+strconv.Quote(tag)+")")
		}
	}
	return desc, nil
}
