package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// SourcePackageVersion is the version of the package `install
// <source>/<artifact>` builds: 0.0.0-g<short commit> (a pre-release, so it
// never satisfies a range someone wrote for a published package; the "g"
// keeps it valid semver whatever digits the commit starts with).
func SourcePackageVersion(commit string) string { return "0.0.0-g" + ShortHash(commit) }

// isSourceRegistry says whether a lockfile registry is an artifact source
// ("source:<name>") rather than a configured registry.
func isSourceRegistry(r string) bool { return strings.HasPrefix(r, SourceRegistryPrefix) }

// sourceSpecCandidate says whether raw could be "<source>/<artifact>":
// not a scoped package, an archive, an absolute or explicitly relative path.
func sourceSpecCandidate(raw string) bool {
	first, _, ok := strings.Cut(raw, "/")
	return ok && first != "" && first != "." && first != ".." && first != "~" && !strings.HasPrefix(raw, "@") &&
		!strings.HasSuffix(raw, ".aam") && !strings.Contains(raw, `\`) && !filepath.IsAbs(raw)
}

// sourceInstallSpec turns "<source>/<artifact>" into a local package: the
// artifact packaged at the source's pinned commit (see [Engine.sourcePackage]).
// ok is false when the spec is a path that does not exist rather than an
// unknown source (its first segment exists on disk).
func (e *Engine) sourceInstallSpec(ctx context.Context, m *manifest.Manifest, raw string) (s installSpec, ok bool, err error) {
	name, artifact, _ := strings.Cut(raw, "/")
	src, err := findSource(m, name)
	if err != nil {
		if _, statErr := e.Sys.Stat(abs(e.Env.Abs(name))); statErr == nil {
			return installSpec{}, false, nil
		}
		ae := apperr.As(err)
		ae.Message = raw + " is neither a file or folder nor an artifact of a registered source: " + ae.Message
		return installSpec{}, true, ae.With("spec", raw)
	}
	if strings.Trim(artifact, "/") == "" {
		return installSpec{}, true, apperr.New(apperr.InvalidArgument, "%s names no artifact of source %s", raw, src.Name).
			WithHint("give <source>/<artifact>; `agentpack source scan %s` lists its artifacts", src.Name).With("spec", raw)
	}
	dir, warnings, err := e.sourcePackage(ctx, *src, artifact)
	if err != nil {
		return installSpec{}, true, err
	}
	archive, err := e.PackFolder(ctx, dir.String())
	if err != nil {
		return installSpec{}, true, err
	}
	s, err = e.localSpec(raw, dir.String(), archive)
	if s.local != nil {
		s.local.registry = SourceRegistryPrefix + src.Name
	}
	s.warnings = warnings
	return s, true, err
}

// sourcePackage returns the package folder of one artifact of src at its
// pinned commit, under $AGENTPACK_HOME/cache/source-packages/ and keyed by
// the source's URL, commit and path and the artifact: built once with
// create-package --from-source's machinery (provenance included), then
// reused as it is, so installing again (offline too) packs the same bytes.
func (e *Engine) sourcePackage(ctx context.Context, src manifest.ArtifactSource, artifact string) (fsys.AbsPath, []string, error) {
	key := sha256.Sum256([]byte(strings.Join([]string{src.URL, src.Commit, src.Path, artifact}, "\x00")))
	root := abs(filepath.Join(e.Env.CacheDir(), "source-packages"))
	dir := root.JoinName(hex.EncodeToString(key[:16]))
	if _, err := e.Sys.Stat(dir.JoinName(aampkg.ManifestFile)); err == nil && src.Commit != "" {
		return dir, nil, nil
	}
	from, err := e.artifactSourceOrigin(ctx, src, artifact)
	if err != nil {
		return "", from.warnings, err
	}
	var matched []pkgArtifact
	for _, a := range from.found {
		if _, _, ok := kindOf(a.Type); ok && artifactMatches(a, artifact) {
			matched = append(matched, a)
		}
	}
	if len(matched) == 0 {
		return "", from.warnings, artifactNotFound(src.Name, artifact, from.found)
	}
	desc := matched[0].Description
	if len(matched) > 1 || desc == "" || len(desc) > 256 {
		desc = "Artifact " + artifact + " of artifact source " + src.Name + "."
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := root.JoinName(".tmp-" + hex.EncodeToString(rnd[:]))
	opt := CreatePackageOptions{Version: SourcePackageVersion(src.Commit), Description: desc}
	if _, err := e.writePackage(tmp, from, opt); err != nil {
		_ = e.Sys.RemoveAll(tmp)
		return "", from.warnings, err
	}
	if err := e.Sys.Rename(tmp, dir); err != nil {
		_ = e.Sys.RemoveAll(tmp)
		if _, statErr := e.Sys.Stat(dir.JoinName(aampkg.ManifestFile)); statErr != nil {
			return "", from.warnings, apperr.Wrap(err, apperr.IOFailed, "cannot store the package of %s/%s in %s", src.Name, artifact, dir)
		}
		// Another install built the same folder first: use it.
	}
	return dir, from.warnings, nil
}

// artifactNotFound is E_PACKAGE_NOT_FOUND for an artifact a source does
// not have, with the closest artifact names as suggestions.
func artifactNotFound(source, artifact string, found []pkgArtifact) error {
	names := make([]string, 0, len(found))
	for _, a := range found {
		if _, _, ok := kindOf(a.Type); ok && !slices.Contains(names, a.Name) {
			names = append(names, a.Name)
		}
	}
	sugg := registry.Suggest(names, artifact)
	err := apperr.New(apperr.PackageNotFound, "artifact source %s has no artifact called %q at its pinned commit", source, artifact).
		With("package", source+"/"+artifact).With("source", source).With("suggestions", sugg).With("artifacts", names)
	if len(sugg) > 0 {
		return err.WithHint("did you mean %s/%s? `agentpack source scan %s` lists its artifacts", source, sugg[0], source)
	}
	return err.WithHint("`agentpack source scan %s` lists its artifacts; `agentpack source update %s` moves it to a newer commit", source, source)
}
