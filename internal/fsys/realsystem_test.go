package fsys

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestRealSystemWritesAtomically(t *testing.T) {
	root := tempRoot(t)
	var hooked []AbsPath
	sys := NewRealSystem(RealSystemOptions{Fsync: true, AfterWrite: func(p AbsPath) {
		// The hook is where tests inject crashes: by then the file is whole.
		want := []string{"old", "new"}[len(hooked)]
		if data, err := os.ReadFile(p.String()); err != nil || string(data) != want {
			t.Errorf("at AfterWrite(%s): %q, %v; want %q", p, data, err, want)
		}
		hooked = append(hooked, p)
	}})
	path := root.Join("deep/folder/file.md")
	if err := sys.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sys.WriteFile(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path.String())
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path.String()); string(data) != "new" {
		t.Errorf("content = %q, want new", data)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600 whatever the umask", fi.Mode().Perm())
	}
	if len(hooked) != 2 || hooked[1] != path {
		t.Errorf("AfterWrite saw %v", hooked)
	}
	assertNoTempFiles(t, path.Dir())
}

func TestRealSystemFailedWriteKeepsOldFile(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs a folder the process cannot write to; root writes anywhere")
	}
	dir := tempRoot(t)
	path := dir.JoinName("config.toml")
	sys := NewRealSystem(RealSystemOptions{})
	if err := sys.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir.String(), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir.String(), 0o755) })

	err := sys.WriteFile(path, []byte("new"), 0o644)
	if apperr.CodeOf(err) != apperr.IOPermissionDenied || !strings.Contains(err.Error(), path.String()) {
		t.Fatalf("err = %v, want E_IO_PERMISSION_DENIED naming %s", err, path)
	}
	if data, _ := os.ReadFile(path.String()); string(data) != "old" {
		t.Errorf("content = %q, want the old file untouched", data)
	}
	assertNoTempFiles(t, dir)
}

func TestRealSystemRefusesLinksAndFolders(t *testing.T) {
	root := tempRoot(t)
	outside := tempRoot(t).JoinName("secret")
	if err := os.WriteFile(outside.String(), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlinkOrSkip(t, outside.String(), root.JoinName("link"))
	if err := os.Mkdir(root.JoinName("dir").String(), 0o755); err != nil {
		t.Fatal(err)
	}
	sys := NewRealSystem(RealSystemOptions{})
	for _, name := range []string{"link", "dir"} {
		path := root.JoinName(name)
		err := sys.WriteFile(path, []byte("x"), 0o644)
		if apperr.CodeOf(err) != apperr.IOInvalidPath || !strings.Contains(err.Error(), path.String()) {
			t.Errorf("WriteFile(%s) = %v, want E_IO_INVALID_PATH naming it", name, err)
		}
	}
	if data, _ := os.ReadFile(outside.String()); string(data) != "keep" {
		t.Errorf("link target = %q, want untouched", data)
	}
}

func TestRealSystemRemove(t *testing.T) {
	root := tempRoot(t)
	sys := NewRealSystem(RealSystemOptions{Fsync: true})
	path := root.Join("a/b")
	if err := sys.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []AbsPath{path, path, root.Join("missing/x")} {
		if err := sys.Remove(p); err != nil {
			t.Errorf("Remove(%s) = %v", p, err)
		}
	}
	if err := sys.RemoveAll(root.JoinName("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := sys.Lstat(root.JoinName("a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after RemoveAll: %v", err)
	}
}

func assertNoTempFiles(t *testing.T, dir AbsPath) {
	t.Helper()
	entries, err := os.ReadDir(dir.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}
