package lockfile

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

const (
	shaHello = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03" // "hello\n"
	shaB     = "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d" // "b"
)

func TestModuleHashKnownValues(t *testing.T) {
	// Computed independently (Python hashlib) with the original's formula.
	files := []File{
		{Path: "b.txt", SHA256: shaB, Bytes: 1},
		{Path: "a/x.md", SHA256: shaHello, Bytes: 6},
	}
	if got, want := ModuleHash(files), "975a3ebf4ae27ace2a7bf91309b53e5b38d60c44dc0f2e8f713ae7254550a164"; got != want {
		t.Errorf("ModuleHash = %s, want %s", got, want)
	}
	if files[0].Path != "b.txt" {
		t.Errorf("ModuleHash reordered its input")
	}
	if got, want := ModuleHash(nil), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got != want {
		t.Errorf("ModuleHash(nil) = %s, want %s", got, want)
	}
}

func writeFile(t testing.TB, root, rel, body string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHashDir(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a/x.md", "hello\n")
	writeFile(t, root, "b.txt", "b")
	writeFile(t, root, "a-c", "b")
	writeFile(t, root, ".git/config", "ignored")
	writeFile(t, root, "sub/.git", "gitdir: elsewhere")
	writeFile(t, root, TreeMarker, "ignored at the root")
	writeFile(t, root, "sub/"+TreeMarker, "b")
	if err := os.Symlink("a/x.md", filepath.Join(root, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}

	got, err := HashDir(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []File{
		{Path: "a-c", SHA256: shaB, Bytes: 1},
		{Path: "a/x.md", SHA256: shaHello, Bytes: 6},
		{Path: "b.txt", SHA256: shaB, Bytes: 1},
		{Path: "link.md", SHA256: shaHello, Bytes: 6},
		{Path: "sub/" + TreeMarker, SHA256: shaB, Bytes: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("HashDir =\n%+v\nwant\n%+v", got, want)
	}

	// A module folder reached through a symlink hashes the same.
	via := filepath.Join(t.TempDir(), "via")
	if err := os.Symlink(root, via); err != nil {
		t.Fatal(err)
	}
	if viaFiles, err := HashDir(via); err != nil || !reflect.DeepEqual(viaFiles, want) {
		t.Fatalf("HashDir(symlink to root) = %+v, %v", viaFiles, err)
	}

	single, err := HashDir(filepath.Join(root, "a", "x.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(single, []File{{Path: "x.md", SHA256: shaHello, Bytes: 6}}) {
		t.Fatalf("single file = %+v", single)
	}
}

func TestHashDirErrors(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, outside, "secret", "s")

	escaping := t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(escaping, "leak")); err != nil {
		t.Fatal(err)
	}
	dangling := t.TempDir()
	if err := os.Symlink("nowhere", filepath.Join(dangling, "broken")); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{
		"escaping symlink": escaping,
		"dangling symlink": dangling,
		"missing":          filepath.Join(outside, "absent"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := HashDir(dir)
			if err == nil {
				t.Fatal("no error")
			}
			if code := apperr.CodeOf(err); code != apperr.IOInvalidPath && code != apperr.IOFailed {
				t.Errorf("code = %s (%v)", code, err)
			}
		})
	}
}

func BenchmarkHashDir(b *testing.B) {
	root := b.TempDir()
	body := make([]byte, 4096)
	for i := range body {
		body[i] = byte(i)
	}
	for i := range 1000 {
		writeFile(b, root, fmt.Sprintf("d%02d/f%04d.md", i%20, i), string(body))
	}
	for b.Loop() {
		files, err := HashDir(root)
		if err != nil || len(files) != 1000 {
			b.Fatalf("HashDir: %d files, %v", len(files), err)
		}
	}
}
