package lockfile

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// memTree builds in a MemSystem, below root, the module TestHashDir builds
// on disk, plus links the OS resolves but a naive check would refuse.
func memTree(t *testing.T, root fsys.AbsPath) *fsys.MemSystem {
	t.Helper()
	mem := fsys.NewMemSystem()
	for rel, body := range map[string]string{
		"a/x.md": "hello\n", "b.txt": "b", "a-c": "b", ".git/config": "ignored",
		"sub/.git": "gitdir: elsewhere", TreeMarker: "ignored at the root", "sub/" + TreeMarker: "b",
	} {
		if err := mem.WriteFile(root.Join(fsys.RelPath(rel)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for rel, target := range map[string]string{
		"link.md": "a/x.md", "dirlink": "a",
		"abs.md":     root.Join("a/x.md").String(),
		"a/round.md": "../../" + root.Base() + "/b.txt",
	} {
		if err := mem.Symlink(target, root.Join(fsys.RelPath(rel))); err != nil {
			t.Fatal(err)
		}
	}
	return mem
}

func TestHashDirOnMemSystem(t *testing.T) {
	root := fsys.AbsPath(filepath.FromSlash("/repo/module"))
	if !filepath.IsAbs(root.String()) {
		t.Skip("needs a Unix-style absolute path")
	}
	mem := memTree(t, root)
	got, err := HashDirOn(mem, root)
	if err != nil {
		t.Fatal(err)
	}
	want := []File{
		{Path: "a-c", SHA256: shaB, Bytes: 1},
		{Path: "a/round.md", SHA256: shaB, Bytes: 1},
		{Path: "a/x.md", SHA256: shaHello, Bytes: 6},
		{Path: "abs.md", SHA256: shaHello, Bytes: 6},
		{Path: "b.txt", SHA256: shaB, Bytes: 1},
		{Path: "link.md", SHA256: shaHello, Bytes: 6},
		{Path: "sub/" + TreeMarker, SHA256: shaB, Bytes: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("HashDirOn =\n%+v\nwant\n%+v", got, want)
	}
	// Reached through a link, the module hashes the same.
	via := fsys.AbsPath(filepath.FromSlash("/elsewhere/via"))
	if err := mem.MkdirAll(via.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mem.Symlink(root.String(), via); err != nil {
		t.Fatal(err)
	}
	if viaFiles, err := HashDirOn(mem, via); err != nil || !reflect.DeepEqual(viaFiles, want) {
		t.Fatalf("HashDirOn(link to root) = %+v, %v", viaFiles, err)
	}

	// A link out of the module is refused.
	if err := mem.WriteFile(fsys.AbsPath(filepath.FromSlash("/repo/secret")), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := mem.Symlink("../secret", root.JoinName("leak")); err != nil {
		t.Fatal(err)
	}
	if _, err := HashDirOn(mem, root); apperr.CodeOf(err) != apperr.IOInvalidPath {
		t.Fatalf("HashDirOn with a link outside = %v, want E_IO_INVALID_PATH", err)
	}
}

func TestSaveLoadOnMemSystem(t *testing.T) {
	mem := fsys.NewMemSystem()
	path := fsys.AbsPath(filepath.FromSlash("/repo/" + FileName))
	if !filepath.IsAbs(path.String()) {
		t.Skip("needs a Unix-style absolute path")
	}
	if _, err := LoadOn(mem, path); apperr.CodeOf(err) != apperr.LockfileMissing {
		t.Fatalf("LoadOn before SaveOn = %v, want E_LOCKFILE_MISSING", err)
	}
	if err := sample().SaveOn(mem, path); err != nil {
		t.Fatal(err)
	}
	if got, err := mem.ReadFile(path); err != nil || string(got) != want {
		t.Fatalf("saved bytes = %q, %v; want\n%s", got, err, want)
	}
	loaded, err := LoadOn(mem, path)
	if err != nil || loaded.Find("skill:review") == nil {
		t.Fatalf("LoadOn = %+v, %v", loaded, err)
	}
	if err := sample().SaveOn(fsys.NewReadOnlySystem(mem), path); apperr.CodeOf(err) != apperr.WriteDisabled {
		t.Fatalf("SaveOn a read-only System = %v, want E_WRITE_DISABLED", err)
	}
}
