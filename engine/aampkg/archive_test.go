package aampkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const testManifest = `name: "@acme/review-kit"
version: 1.2.0
description: Review helpers.
artifacts:
  skills:
    - name: review
      path: skills/review
      description: Review the diff.
`

// Pack is deterministic, leaves out caches and old archives, and Extract
// gives back exactly the packed files with their checksums verified.
func TestPackExtractRoundTrip(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"aam.yaml":                    testManifest,
		"skills/review/SKILL.md":      "---\nname: review\ndescription: d\n---\nbody\n",
		"skills/review/ref/notes.md":  "notes\n",
		"node_modules/x/index.js":     "x",
		".git/config":                 "x",
		"old-1.0.0.aam":               "x",
		"skills/review/__pycache__/a": "x",
	})
	sys := fsys.NewRealSystem(fsys.RealSystemOptions{})
	a1, m, err := Pack(context.Background(), sys, fsys.AbsPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	a2, _, err := Pack(context.Background(), sys, fsys.AbsPath(dir))
	if err != nil || !bytes.Equal(a1, a2) {
		t.Fatalf("packing twice gave different bytes (%v)", err)
	}
	if m.Name != "@acme/review-kit" || m.FileChecksums != nil {
		t.Fatalf("manifest = %+v", m)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "aam.yaml")); string(data) != testManifest {
		t.Fatal("pack rewrote the author's aam.yaml")
	}
	ar, err := Extract(a1, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range ar.Files {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, ","); got != "skills/review/SKILL.md,skills/review/ref/notes.md" {
		t.Fatalf("extracted %s", got)
	}
	if ar.Manifest.FileChecksums == nil || len(ar.Manifest.FileChecksums.Files) != 2 {
		t.Fatalf("the archive's aam.yaml has no file_checksums: %s", ar.ManifestBytes)
	}
}

// Pack refuses a manifest naming a path that is not there, and a link
// leaving the folder.
func TestPackRefusals(t *testing.T) {
	sys := fsys.NewRealSystem(fsys.RealSystemOptions{})
	dir := writeTree(t, map[string]string{"aam.yaml": testManifest})
	if _, _, err := Pack(context.Background(), sys, fsys.AbsPath(dir)); apperr.CodeOf(err) != apperr.ManifestInvalid ||
		!strings.Contains(err.Error(), "skills/review: file not found") {
		t.Fatalf("missing artifact: %v", err)
	}
	dir = writeTree(t, map[string]string{"aam.yaml": testManifest, "skills/review/SKILL.md": "x"})
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "skills", "review", "leak")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Pack(context.Background(), sys, fsys.AbsPath(dir)); apperr.CodeOf(err) != apperr.ManifestInvalid {
		t.Fatalf("link leaving the folder: %v", err)
	}
	if _, _, err := Pack(context.Background(), sys, fsys.AbsPath(t.TempDir())); apperr.CodeOf(err) != apperr.ManifestNotFound {
		t.Fatalf("no aam.yaml: %v", err)
	}
}

type entry struct {
	name string
	typ  byte
	body string
	size int64
}

func tarGz(t testing.TB, entries []entry) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Size: int64(len(e.body))}
		if e.typ == tar.TypeSymlink {
			h.Linkname, h.Size = "/etc/passwd", 0
		}
		if e.size > 0 {
			h.Size = e.size
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			_, _ = tw.Write([]byte(e.body))
		}
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}

// Hostile archives are refused, naming the entry, before anything is
// returned to write.
func TestExtractRefusesHostileArchives(t *testing.T) {
	good := entry{"aam.yaml", tar.TypeReg, testManifest, 0}
	skill := entry{"skills/review/SKILL.md", tar.TypeReg, "x", 0}
	cases := map[string][]entry{
		"dotdot":    {good, {"../evil", tar.TypeReg, "x", 0}},
		"absolute":  {good, {"/etc/evil", tar.TypeReg, "x", 0}},
		"nested ..": {good, {"skills/../../evil", tar.TypeReg, "x", 0}},
		"symlink":   {good, {"skills/review/link", tar.TypeSymlink, "", 0}},
		"device":    {good, {"dev", tar.TypeChar, "", 0}},
		"duplicate": {good, skill, skill},
		"too big":   {good, {"big", tar.TypeReg, strings.Repeat("x", 2048), 0}},
	}
	lim := Limits{MaxFileSize: 1024, MaxTotalSize: 4096, MaxFiles: 10, MaxArchiveSize: 1 << 20}
	for name, es := range cases {
		_, err := Extract(tarGz(t, es), lim)
		if apperr.CodeOf(err) != apperr.ManifestInvalid {
			t.Errorf("%s: %v, want E_MANIFEST_INVALID", name, err)
		}
	}
	many := []entry{good}
	for i := range 12 {
		many = append(many, entry{filepath.Join("f", string(rune('a'+i))), tar.TypeReg, "x", 0})
	}
	if _, err := Extract(tarGz(t, many), lim); apperr.CodeOf(err) != apperr.ManifestInvalid {
		t.Errorf("too many files: %v", err)
	}
	if _, err := Extract([]byte("not gzip"), lim); apperr.CodeOf(err) != apperr.ManifestInvalid {
		t.Errorf("garbage: %v", err)
	}
	if _, err := Extract(tarGz(t, []entry{skill}), lim); apperr.CodeOf(err) != apperr.ManifestNotFound {
		t.Errorf("no aam.yaml: %v", err)
	}
}

// A file changed after packing is a checksum mismatch.
func TestExtractChecksumMismatch(t *testing.T) {
	m := testManifest + "file_checksums:\n  algorithm: sha256\n  files:\n    skills/review/SKILL.md: " + strings.Repeat("0", 64) + "\n"
	_, err := Extract(tarGz(t, []entry{{"aam.yaml", tar.TypeReg, m, 0}, {"skills/review/SKILL.md", tar.TypeReg, "x", 0}}), DefaultLimits)
	if apperr.CodeOf(err) != apperr.ChecksumMismatch {
		t.Fatalf("got %v, want E_CHECKSUM_MISMATCH", err)
	}
}

// FuzzExtract: no archive makes Extract panic, and whatever it accepts
// holds only clean relative paths.
func FuzzExtract(f *testing.F) {
	f.Add(tarGz(f, []entry{{"aam.yaml", tar.TypeReg, testManifest, 0}, {"skills/review/SKILL.md", tar.TypeReg, "x", 0}}))
	f.Add(tarGz(f, []entry{{"aam.yaml", tar.TypeReg, testManifest, 0}, {"../x", tar.TypeReg, "x", 0}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Extract(data, Limits{MaxFileSize: 1 << 16, MaxTotalSize: 1 << 18, MaxFiles: 100, MaxArchiveSize: 1 << 20})
		if err != nil {
			return
		}
		for _, file := range a.Files {
			if strings.HasPrefix(file.Path, "/") || strings.Contains("/"+file.Path+"/", "/../") {
				t.Fatalf("accepted %q", file.Path)
			}
		}
	})
}
