package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
)

// ValidateData is the data of `agentpack validate`: every problem of a
// package folder at once. An invalid package is a result, not an error.
type ValidateData struct {
	Valid          bool     `json:"valid"`
	PackageName    string   `json:"package_name"`
	PackageVersion string   `json:"package_version"`
	Errors         []string `json:"errors"`
	Warnings       []string `json:"warnings"`
	ArtifactCount  int      `json:"artifact_count"`
	ArtifactsValid bool     `json:"artifacts_valid"`
}

// Validate checks the package folder dir: its aam.yaml (every field at
// once, with YAML lines) and that every artifact path exists.
func (e *Engine) Validate(ctx context.Context, dir string) (*ValidateData, error) {
	root := abs(e.Env.Abs(dir))
	raw, err := e.Sys.ReadFile(root.JoinName(aampkg.ManifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, apperr.New(apperr.ManifestNotFound, "%s has no %s", root, aampkg.ManifestFile).
			WithHint("run it in a package folder, or create one with `agentpack create-package`").With("path", root.String())
	}
	if err != nil {
		return nil, err
	}
	out := &ValidateData{Errors: []string{}, Warnings: []string{}, ArtifactsValid: true}
	m, probs, err := aampkg.ParseManifest(raw)
	if err != nil {
		ae := apperr.As(err)
		msg := ae.Message
		if line, ok := ae.Details["line"].(int); ok && line > 0 {
			msg = fmt.Sprintf("%s (line %d)", msg, line)
		}
		out.Errors = append(out.Errors, msg)
		return out, nil
	}
	out.PackageName, out.PackageVersion, out.ArtifactCount = m.Name, m.Version, m.ArtifactCount()
	for _, p := range probs {
		out.Errors = append(out.Errors, p.String())
		if strings.HasPrefix(p.Field, "artifacts") {
			out.ArtifactsValid = false
		}
	}
	for _, kind := range aampkg.ArtifactKinds {
		for _, a := range m.Artifacts[kind] {
			rel := filepath.FromSlash(strings.TrimPrefix(a.Path, "./"))
			if a.Path == "" || filepath.IsAbs(rel) || strings.HasPrefix(filepath.Clean(rel), "..") {
				continue // the manifest check already reports it
			}
			if _, err := e.Sys.Stat(abs(filepath.Join(root.String(), rel))); err != nil {
				out.Errors = append(out.Errors, a.Path+": file not found")
				out.ArtifactsValid = false
			}
		}
	}
	out.Valid = len(out.Errors) == 0
	return out, nil
}

// PackData is the data of `agentpack pack`.
type PackData struct {
	PackageName string `json:"package_name"`
	Version     string `json:"version"`
	Path        string `json:"path"`
	PathPosix   string `json:"path_posix"`
	Size        int64  `json:"size"`
	Checksum    string `json:"checksum"`
	FileCount   int    `json:"file_count"`
}

// Pack builds the deterministic .aam archive of the package folder dir and
// writes it to out (default: <name>-<version>.aam in the working folder;
// for @scope/name, <scope>-<name>-<version>.aam).
func (e *Engine) Pack(ctx context.Context, dir, out string) (*PackData, error) {
	archive, m, err := aampkg.Pack(ctx, e.Sys, abs(e.Env.Abs(dir)))
	if err != nil {
		return nil, err
	}
	if out == "" {
		out = ArchiveName(m.Name, m.Version)
	}
	dest := e.Env.Abs(out)
	if err := e.Sys.WriteFile(abs(dest), archive, 0o644); err != nil {
		return nil, err
	}
	files := 0
	for _, kind := range aampkg.ArtifactKinds {
		files += len(m.Artifacts[kind])
	}
	return &PackData{PackageName: m.Name, Version: m.Version, Path: dest, PathPosix: filepath.ToSlash(dest),
		Size: int64(len(archive)), Checksum: "sha256:" + checksum.SHA256Hex(archive), FileCount: files}, nil
}

// ArchiveName is the file name of a package version's archive.
func ArchiveName(name, version string) string {
	return strings.ReplaceAll(strings.TrimPrefix(name, "@"), "/", "-") + "-" + version + ".aam"
}
