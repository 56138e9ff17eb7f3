package aampkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
)

// Extract reads an .aam archive in memory, refusing hostile input (absolute
// paths, "..", links, devices, duplicates, size and count limits) before the
// caller writes anything. When the archive's aam.yaml lists file checksums,
// every file must match them.
func Extract(archive []byte, lim Limits) (*Archive, error) {
	if lim.MaxArchiveSize > 0 && int64(len(archive)) > lim.MaxArchiveSize {
		return nil, hostile("", "the archive is %d bytes; the limit is %d", len(archive), lim.MaxArchiveSize)
	}
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, hostile("", "not a gzip-compressed tar archive (%v)", err)
	}
	tr := tar.NewReader(zr)
	seen := map[string]bool{}
	var files []File
	var manifest []byte
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, hostile("", "the archive is damaged (%v)", err)
		}
		name, err := entryName(h.Name)
		if err != nil {
			return nil, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // old archives use TypeRegA
		case tar.TypeXGlobalHeader:
			continue
		default:
			return nil, hostile(h.Name, "is a link, device or other special entry; packages hold regular files only")
		}
		if seen[name] {
			return nil, hostile(h.Name, "appears twice in the archive")
		}
		seen[name] = true
		if lim.MaxFiles > 0 && len(seen) > lim.MaxFiles {
			return nil, hostile(h.Name, "the archive holds more than %d files", lim.MaxFiles)
		}
		if lim.MaxFileSize > 0 && h.Size > lim.MaxFileSize {
			return nil, hostile(h.Name, "is %d bytes; the limit is %d", h.Size, lim.MaxFileSize)
		}
		// Read at most one byte past the limits, whatever the header says.
		limit := h.Size + 1
		if lim.MaxTotalSize > 0 && lim.MaxTotalSize-total+1 < limit {
			limit = lim.MaxTotalSize - total + 1
		}
		data, err := io.ReadAll(io.LimitReader(tr, limit))
		if err != nil {
			return nil, hostile(h.Name, "cannot be read (%v)", err)
		}
		total += int64(len(data))
		if lim.MaxTotalSize > 0 && total > lim.MaxTotalSize {
			return nil, hostile(h.Name, "the archive unpacks to more than %d bytes", lim.MaxTotalSize)
		}
		if name == ManifestFile {
			manifest = data
			continue
		}
		mode := modeOf(h.FileInfo().Mode())
		files = append(files, File{Path: name, Data: data, Mode: mode})
	}
	if manifest == nil {
		return nil, apperr.New(apperr.ManifestNotFound, "the archive has no %s", ManifestFile).
			WithHint("build packages with `agentpack pack`")
	}
	m, probs, err := ParseManifest(manifest)
	if err != nil {
		return nil, err
	}
	if len(probs) > 0 {
		return nil, invalid(probs)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	if err := verifyChecksums(m, files); err != nil {
		return nil, err
	}
	return &Archive{Manifest: m, Files: files, ManifestBytes: manifest}, nil
}

// entryName is a tar entry's name as a clean package path, or the reason
// it is refused.
func entryName(raw string) (string, error) {
	name := strings.TrimPrefix(raw, "./")
	name = strings.TrimSuffix(name, "/")
	switch {
	case name == "" || name == ".":
		return "", hostile(raw, "has an empty name")
	case strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || (len(name) > 1 && name[1] == ':'):
		return "", hostile(raw, "is an absolute path")
	case strings.ContainsRune(name, 0):
		return "", hostile(raw, "has a NUL byte in its name")
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", hostile(raw, "climbs out of the package with ..")
		}
	}
	if path.Clean(name) != name {
		return "", hostile(raw, "is not a clean path")
	}
	return name, nil
}

// verifyChecksums checks files against the manifest's file_checksums.
func verifyChecksums(m *Manifest, files []File) error {
	if m.FileChecksums == nil {
		return nil
	}
	byPath := map[string][]byte{}
	for _, f := range files {
		byPath[f.Path] = f.Data
	}
	for p, want := range m.FileChecksums.Files {
		data, ok := byPath[p]
		if !ok {
			return apperr.New(apperr.ChecksumMismatch, "%s lists %s, which the archive does not hold", ManifestFile, p).
				WithHint("the archive is damaged or was changed after it was packed").With("entry", p)
		}
		if got := checksum.SHA256Hex(data); !strings.EqualFold(got, want) {
			return apperr.New(apperr.ChecksumMismatch, "%s has sha256 %s, but %s lists %s", p, got, ManifestFile, want).
				WithHint("the archive is damaged or was changed after it was packed").With("entry", p)
		}
	}
	return nil
}

func hostile(entry, format string, args ...any) *apperr.Error {
	msg := fmt.Sprintf(format, args...)
	if entry != "" {
		msg = entry + " " + msg
	}
	e := apperr.New(apperr.ManifestInvalid, "package archive: %s", msg).
		WithHint("the archive was refused before anything was written; rebuild it with `agentpack pack`")
	if entry != "" {
		e = e.With("entry", entry)
	}
	return e
}

// modeOf is 0755 for a file with any execute bit, else 0644: the only
// modes a package holds.
func modeOf(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// invalid is the error of a manifest with problems: every one of them.
func invalid(probs []Problem) *apperr.Error {
	var msgs []string
	for _, p := range probs {
		msgs = append(msgs, p.String())
	}
	return apperr.New(apperr.ManifestInvalid, "aam.yaml is not valid: %s", strings.Join(msgs, "; ")).
		WithHint("fix aam.yaml; `agentpack validate` lists every problem").With("errors", msgs)
}
