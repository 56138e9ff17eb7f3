package overlay

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"strconv"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// MetaDir is the reserved folder of an overlay; it is never deployed.
const MetaDir = ".agentpack"

// Kind is how an overlay changes files: whole replacement files (dir) or
// unified diffs under .agentpack/patches (patch).
type Kind string

// The overlay kinds.
const (
	KindDir   Kind = "dir"
	KindPatch Kind = "patch"
)

// Meta is .agentpack/overlay.json.
type Meta struct {
	Kind Kind `json:"overlay_kind"`
}

// FileEntry is one upstream file in a baseline.
type FileEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// Baseline is .agentpack/baseline.json: the upstream module as it was
// when the overlay was made or last rebased — the merge base.
type Baseline struct {
	Version        int         `json:"version"`
	CreatedAt      string      `json:"created_at"`
	UpstreamSHA256 string      `json:"upstream_sha256"`
	FileManifest   []FileEntry `json:"file_manifest"`
	Upstream       *Source     `json:"upstream,omitempty"`
}

// Source says where the baseline's bytes can be found again: a git
// commit, a commit of the desired-state repo (local_path modules), or a
// package version in a registry.
type Source struct {
	Kind string `json:"kind"` // git, local_path or package
	// git
	URL    string `json:"url,omitempty"`
	Commit string `json:"commit,omitempty"`
	Subdir string `json:"subdir,omitempty"`
	// local_path
	RepoRelPath string  `json:"repo_rel_path,omitempty"`
	RepoGitRev  *string `json:"repo_git_rev,omitempty"`
	RepoDirty   *bool   `json:"repo_dirty,omitempty"`
	// package
	Package    string `json:"package,omitempty"`
	Version    string `json:"version,omitempty"`
	Registry   string `json:"registry,omitempty"`
	PackageURL string `json:"package_url,omitempty"`
	Checksum   string `json:"checksum,omitempty"`
	Digest     string `json:"digest,omitempty"`
	Artifact   string `json:"artifact_path,omitempty"`
}

// TreeHash is the file manifest of files and the hash the original
// agentpack gives the whole tree (sha256 over "path\nsha\nbytes\n" lines).
// A file's hash computed while it was read is reused.
func TreeHash(files []module.File) ([]FileEntry, string) {
	entries := make([]FileEntry, len(files))
	h := sha256.New()
	for i, f := range files {
		sha := f.SHA256
		if sha == "" {
			sum := sha256.Sum256(f.Data)
			sha = hex.EncodeToString(sum[:])
		}
		entries[i] = FileEntry{Path: f.Path, SHA256: sha, Bytes: int64(len(f.Data))}
		h.Write([]byte(f.Path + "\n" + entries[i].SHA256 + "\n" + strconv.FormatInt(entries[i].Bytes, 10) + "\n"))
	}
	return entries, hex.EncodeToString(h.Sum(nil))
}

func metaPath(dir fsys.AbsPath, name string) fsys.AbsPath {
	return dir.JoinName(MetaDir).JoinName(name)
}

// ReadMeta reads an overlay's kind; a missing overlay.json means dir.
func ReadMeta(sys fsys.System, dir fsys.AbsPath) (Meta, error) {
	p := metaPath(dir, "overlay.json")
	data, err := sys.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{Kind: KindDir}, nil
	}
	if err != nil {
		return Meta{}, err
	}
	m := Meta{Kind: KindDir}
	if err := json.Unmarshal(data, &m); err != nil || (m.Kind != KindDir && m.Kind != KindPatch) {
		return Meta{}, apperr.New(apperr.ConfigInvalid, "%s is not valid overlay metadata", p).
			WithHint(`write {"overlay_kind": "dir"} or {"overlay_kind": "patch"}, or delete the file to mean dir`).
			With("overlay_dir", dir.String())
	}
	return m, nil
}

// ReadBaseline reads an overlay's baseline; ok=false when it has none.
func ReadBaseline(sys fsys.System, dir fsys.AbsPath) (b *Baseline, ok bool, err error) {
	p := metaPath(dir, "baseline.json")
	data, err := sys.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	b = &Baseline{}
	if err := json.Unmarshal(data, b); err != nil {
		return nil, false, apperr.New(apperr.OverlayBaselineUnsupported, "%s cannot be read: %v", p, err).
			WithHint("recreate it with `agentpack overlay edit <module_id>` after moving the overlay's edits aside").
			With("baseline_path", p.String())
	}
	return b, true, nil
}

// writeJSON writes v as indented JSON with a final newline.
func writeJSON(sys fsys.System, p fsys.AbsPath, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return sys.WriteFile(p, append(data, '\n'), 0o644)
}

// WriteMetadata writes the baseline and, when missing, module_id and
// overlay.json of the overlay at dir.
func WriteMetadata(sys fsys.System, dir fsys.AbsPath, moduleID string, kind Kind, b *Baseline) error {
	if b != nil {
		if err := writeJSON(sys, metaPath(dir, "baseline.json"), b); err != nil {
			return err
		}
	}
	if _, err := sys.Lstat(metaPath(dir, "module_id")); errors.Is(err, fs.ErrNotExist) {
		if err := sys.WriteFile(metaPath(dir, "module_id"), []byte(moduleID+"\n"), 0o644); err != nil {
			return err
		}
	}
	if _, err := sys.Lstat(metaPath(dir, "overlay.json")); errors.Is(err, fs.ErrNotExist) {
		return writeJSON(sys, metaPath(dir, "overlay.json"), Meta{Kind: kind})
	}
	return nil
}
