package aampkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
)

// skipped are names pack leaves out wherever they appear: version control,
// dependencies, virtualenvs, caches and build output.
var skipped = map[string]bool{
	".git": true, "node_modules": true, ".venv": true, "venv": true, "__pycache__": true,
	".cache": true, ".pytest_cache": true, ".mypy_cache": true, "dist": true, "build": true, ".DS_Store": true,
}

// Pack reads the package folder dir and returns its deterministic .aam
// archive and its manifest (the author's, without file_checksums): entries
// sorted with aam.yaml first, times 0, owners 0, modes 0644/0755, gzip
// without a name or time, so the same folder gives the same bytes on every
// run and machine. The archive's aam.yaml gains `file_checksums`; the
// author's file is never rewritten.
func Pack(ctx context.Context, sys fsys.System, dir fsys.AbsPath) ([]byte, *Manifest, error) {
	raw, err := sys.ReadFile(dir.JoinName(ManifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, apperr.New(apperr.ManifestNotFound, "%s has no %s", dir, ManifestFile).
			WithHint("create one with `agentpack create-package`, or point at a package folder").With("path", dir.String())
	}
	if err != nil {
		return nil, nil, err
	}
	m, probs, err := ParseManifest(raw)
	if err != nil {
		return nil, nil, err
	}
	if m.FileChecksums != nil {
		probs = append(probs, Problem{Field: "file_checksums", Line: m.Lines["file_checksums"], Message: "is written by pack into the archive's copy; remove it from the folder's aam.yaml"})
	}
	if len(probs) > 0 {
		return nil, nil, invalid(probs)
	}
	real, err := fsys.EvalSymlinks(sys, dir)
	if err != nil {
		return nil, nil, err
	}
	var files []File
	var total int64
	lim := DefaultLimits
	var walk func(d fsys.AbsPath, rel string) error
	walk = func(d fsys.AbsPath, rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries, err := sys.ReadDir(d)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			child := name
			if rel != "" {
				child = rel + "/" + name
			}
			if skipped[name] || strings.HasSuffix(name, ".aam") || child == ManifestFile {
				continue
			}
			p := d.JoinName(name)
			fi, err := sys.Stat(p) // links inside the folder are packed as what they name
			if err != nil {
				return apperr.Wrap(err, apperr.ManifestInvalid, "%s is a dangling link", child).With("path", p.String())
			}
			if e.Type()&fs.ModeSymlink != 0 {
				target, err := fsys.EvalSymlinks(sys, p)
				if err != nil || !real.Contains(target) {
					return apperr.New(apperr.ManifestInvalid, "%s is a link that leaves the package folder", child).
						WithHint("copy the file into the package instead").With("path", p.String())
				}
			}
			switch {
			case fi.IsDir() && e.Type()&fs.ModeSymlink == 0:
				if err := walk(p, child); err != nil {
					return err
				}
			case fi.Mode().IsRegular():
				if fi.Size() > lim.MaxFileSize {
					return apperr.New(apperr.ManifestInvalid, "%s is %d bytes; a package file may have at most %d", child, fi.Size(), lim.MaxFileSize).With("path", p.String())
				}
				data, err := sys.ReadFile(p)
				if err != nil {
					return err
				}
				total += int64(len(data))
				files = append(files, File{Path: child, Data: data, Mode: modeOf(fi.Mode())})
				if len(files) > lim.MaxFiles || total > lim.MaxTotalSize {
					return apperr.New(apperr.ManifestInvalid, "the package is over %d files or %d bytes", lim.MaxFiles, lim.MaxTotalSize).
						WithHint("leave generated files out of the package folder")
				}
			case fi.IsDir():
				// A link to a folder inside the package: its files are packed
				// where they really are.
			default:
				return apperr.New(apperr.ManifestInvalid, "%s is not a regular file", child).With("path", p.String())
			}
		}
		return nil
	}
	if err := walk(dir, ""); err != nil {
		return nil, nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	var missing []Problem
	have := map[string]bool{}
	for _, f := range files {
		have[f.Path] = true
		for d := f.Path; strings.Contains(d, "/"); {
			d = d[:strings.LastIndex(d, "/")]
			have[d] = true
		}
	}
	for _, kind := range ArtifactKinds {
		for i, a := range m.Artifacts[kind] {
			p := strings.TrimSuffix(strings.TrimPrefix(a.Path, "./"), "/")
			if !have[p] {
				field := fmt.Sprintf("artifacts.%s[%d].path", kind, i)
				missing = append(missing, Problem{Field: field, Line: m.Lines[field], Message: fmt.Sprintf("%s: file not found", a.Path)})
			}
		}
	}
	if len(missing) > 0 {
		return nil, nil, invalid(missing)
	}
	archive, err := writeArchive(withChecksums(withDescriptions(raw), files), files)
	if err != nil {
		return nil, nil, err
	}
	if int64(len(archive)) > lim.MaxArchiveSize {
		return nil, nil, apperr.New(apperr.ManifestInvalid, "the archive is %d bytes; the limit is %d", len(archive), lim.MaxArchiveSize)
	}
	return archive, m, nil
}

// withDescriptions is raw with a description ("Skill review", as AAM
// writes one) given to every artifact that has none, since AAM's reader
// refuses an artifact without one; raw itself when all have one.
func withDescriptions(raw []byte) []byte {
	var doc yaml.Node
	if yaml.Unmarshal(raw, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return raw
	}
	changed := false
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "artifacts" || top.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		kinds := top.Content[i+1]
		for j := 0; j+1 < len(kinds.Content); j += 2 {
			typ := KindType(kinds.Content[j].Value)
			for _, item := range kinds.Content[j+1].Content {
				if item.Kind != yaml.MappingNode || mapValue(item, "description") != nil {
					continue
				}
				name := ""
				if n := mapValue(item, "name"); n != nil {
					name = n.Value
				}
				desc := strings.ToUpper(typ[:1]) + typ[1:] + " " + name
				item.Content = append(item.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "description"},
					&yaml.Node{Kind: yaml.ScalarNode, Value: desc})
				changed = true
			}
		}
	}
	if !changed {
		return raw
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return raw
	}
	return out
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// withChecksums is the author's aam.yaml with file_checksums appended.
func withChecksums(raw []byte, files []File) []byte {
	var b bytes.Buffer
	b.Write(raw)
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("file_checksums:\n  algorithm: sha256\n  files:\n")
	for _, f := range files {
		fmt.Fprintf(&b, "    %q: %s\n", f.Path, checksum.SHA256Hex(f.Data))
	}
	return b.Bytes()
}

// writeArchive is the deterministic tar.gz of manifest and files.
func writeArchive(manifest []byte, files []File) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	put := func(name string, data []byte, mode fs.FileMode) error {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: int64(mode.Perm()),
			ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if len(name) <= 100 {
			h.Format = tar.FormatUSTAR
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := put(ManifestFile, manifest, 0o644); err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := put(f.Path, f.Data, f.Mode); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
